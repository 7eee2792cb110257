"""``engram chat``: talk to the memory agent in the terminal, against any configured provider.

With no LLM configured it still works: plain first-person statements are stored (rule-based
extraction) and relevant memories are recalled; it says clearly that synthesis is off.
Lines starting with ``/`` are commands: ``/quit``, ``/start`` (hatch if the agent has no identity
yet, PtrClaw's first interaction), ``/hatch``, ``/compact``, ``/help``; an unknown ``/word`` is
refused (never sent to the model as a message) and ``//text`` sends ``/text``.

A message that fails (provider unreachable or failing, bad input) is reported and the chat goes
on; when the messages came from ``-m`` or piped standard input, the exit code then tells a script
the first failure (docs/cli.md: 1 provider or storage, 2 bad input, 4 ``/hatch`` or ``/start`` with no
LLM configured). An interactive chat ends 0. ``--hatch`` with no LLM configured is refused before
any message is read (exit 4): the messages were meant for hatching, not to be stored as memories.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING

import typer

from engram import jsondoc
from engram.errors import ConfigError, EngramError, ProviderError, ValidationError
from engram.interfaces.cli import render
from engram.interfaces.cli.state import state
from engram.text import counted

if TYPE_CHECKING:  # the agent (and its providers) load only when `engram chat` runs
    from engram.agent.loop import MemoryAgent

HELP = ("/quit ends the chat, /start hatches an agent with no identity yet, /hatch (re)builds the agent's identity,"
        " /compact compacts the history now; //text sends /text as a message.")
COMMANDS = ("/quit", "/exit", "/help", "/start", "/hatch", "/compact")
# "/word" is a command; a path ("/usr/bin is ...") is a message.
_COMMAND = re.compile(r"^/[A-Za-z][\w-]*(?=\s|$)")


def chat(
    ctx: typer.Context,
    message: list[str] | None = typer.Option(None, "--message", "-m", help="Send this message and exit (repeatable)."),
    hatch: bool = typer.Option(False, "--hatch", help="Start by hatching the agent's identity (needs an LLM)."),
) -> None:
    """Chat with the memory agent (reads lines from standard input when it is not a terminal)."""
    from engram.agent.loop import MemoryAgent
    from engram.interfaces.cli.app import exit_code

    st = state(ctx)
    _refuse_unsendable(message or [])
    agent = MemoryAgent.from_settings(st.settings(), st.engram())
    failures: list[EngramError] = []
    try:
        if hatch and agent.provider is None:
            raise _no_llm()  # the app prints it on standard error and exits 4 (configuration)
        _banner(agent)
        if hatch:
            _hatch(agent, failures)
        lines = message if message else _lines()
        for line in lines:
            if not _handle(agent, line.strip(), failures, as_json=st.as_json):
                break
    finally:
        agent.close()
    scripted = bool(message) or not sys.stdin.isatty()
    if failures and scripted:
        raise typer.Exit(exit_code(failures[0]))


def _refuse_unsendable(messages: list[str]) -> None:
    """Each ``-m`` checked as the user message it becomes (``model.make_message``), before anything
    opens: an empty one (an unset variable in a script) was skipped as a blank typed line is, and
    the chat exited 0 having sent nothing. Raises ``ValidationError`` naming ``--message[N]``."""
    from engram.interfaces import present
    from engram.model import make_message

    for n, text in enumerate(messages):
        with present.wire_names({"content": f"--message[{n}]"}):
            make_message("user", text)


def _banner(agent: MemoryAgent) -> None:
    if agent.provider is None:
        said = agent.without_llm
        render.errors.print(f"[yellow]{render.markup_safe(said[0].upper() + said[1:])}.[/yellow]", highlight=False)
    else:
        on = "on" if agent.synthesis_on else "off"
        render.errors.print(f"chatting with {agent.provider.name}:{agent.provider.model} (synthesis {on}). {HELP}",
                            highlight=False)


def _lines():  # noqa: ANN202 - a generator of input lines
    interactive = sys.stdin.isatty()
    while True:
        try:
            line = input("you> ") if interactive else sys.stdin.readline()
        except EOFError:
            return
        if not interactive and line == "":
            return
        yield line


def _no_llm() -> ConfigError:
    return ConfigError("hatching needs an LLM: set ENGRAM_LLM__PROVIDER (or [llm] in config.toml) first")


def _hatch(agent: MemoryAgent, failures: list[EngramError]) -> None:
    if agent.provider is None:
        # Refused as an unknown command is: reported, and a script's exit code says so (4).
        exc = _no_llm()
        render.errors.print(f"[red]error:[/red] {render.markup_safe(exc)}", highlight=False)
        failures.append(exc)
        return
    agent.start_hatching()
    render.errors.print("hatching: tell the agent who it should be.")


def _start(agent: MemoryAgent, failures: list[EngramError]) -> None:
    if agent.provider is None:
        _hatch(agent, failures)  # says hatching needs an LLM
    elif agent.start():
        render.errors.print("hatching: tell the agent who it should be.")
    else:
        render.errors.print("the agent already has an identity; /hatch rebuilds it.")


def _handle(agent: MemoryAgent, line: str, failures: list[EngramError], *, as_json: bool = False) -> bool:
    """One input line; False ends the chat. A message that fails is reported and added to
    ``failures``. ``as_json``: each answer is a JSON line on standard output (docs/cli.md)."""
    if not line:
        return True
    if line in ("/quit", "/exit"):
        return False
    if line == "/help":
        if as_json:
            render.emit_json({"command": "/help", "help": HELP}, line=True)
        else:
            render.console.print(HELP)
        return True
    if line == "/hatch":
        _hatch(agent, failures)
        return True
    if line == "/start":
        _start(agent, failures)
        return True
    if line == "/compact":
        result = agent.compact(force=True)
        if as_json:
            render.emit_json({"command": "/compact", "compacted": result.compacted,
                              "discarded": len(result.discarded), "notes": list(result.notes)}, line=True)
        # Status lines, on standard error with chat's others (hatching, notes): standard output is
        # the replies alone, what a transcript piped to a file keeps.
        elif not result.compacted:  # why, as `engram history compact` says it (too few messages, a tool call in the way)
            render.note_line("nothing to compact" + (f": {'; '.join(result.notes)}" if result.notes else ""))
        else:
            render.errors.print(f"compacted: {counted(len(result.discarded), 'message')} summarised", highlight=False)
            for note in result.notes:  # the emergency path taken, a summariser or extraction that failed
                render.note_line(note)
        return True
    if _COMMAND.match(line):  # an unknown command is never sent to the model as a message
        exc = ValidationError("command", f"unknown command {jsondoc.shown(line.split()[0])}", COMMANDS)
        render.errors.print(f"[red]error:[/red] {render.markup_safe(exc)}", highlight=False)
        failures.append(exc)
        return True
    if line.startswith("//"):
        line = line[1:]
    try:
        result = agent.process(line)
    except (ProviderError, ValidationError) as exc:
        render.errors.print(f"[red]error:[/red] {render.markup_safe(exc)}", highlight=False)
        failures.append(exc)
        return True
    if as_json:
        render.emit_json({"message": line, "reply": result.reply, "stored": list(result.stored),
                          "tool_calls": list(result.tool_calls), "cached": result.cached,
                          "synthesized": result.synthesized, "hatched": result.hatched,
                          "notes": list(result.notes)}, line=True)
        return True
    render.console.print(result.reply, highlight=False, markup=False)
    if result.hatched:
        render.errors.print("hatched: identity stored.")
    for note in result.notes:
        render.errors.print(f"[dim]{render.markup_safe(note)}[/dim]", highlight=False)
    return True


def register(app: typer.Typer) -> None:
    app.command("chat")(chat)
