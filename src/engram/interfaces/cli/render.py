"""Human output (rich tables) and machine output (``--json``) for CLI commands.

Stored text is data, never terminal commands or markup: what reaches the terminal has control
characters (terminal escape sequences, bells, carriage returns, 8-bit C1 codes) shown as visible
escapes (``\\x1b``), and table cells are plain ``Text``, so ``[/red]`` in a memory is printed as it
is instead of being read as rich markup. JSON output escapes the same characters as ``\\u00XX``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported when something is rendered: not for `--help`, nor for `--json` output
    from rich.console import Console
    from rich.text import Text

    from engram.model import Memory, MemoryVersion, Message, RecallResult

# Control characters other than tab and line feed, and the C1 range some terminals obey.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str) -> str:
    """``text`` with control characters shown as ``\\xNN`` instead of sent to the terminal."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def cell(value: object) -> Text:
    """A table cell holding stored text: control characters made visible, no markup read."""
    from rich.text import Text

    return Text(clean("" if value is None else str(value)))


def markup_safe(value: object) -> str:
    """Stored text (a key, a summary) for a message that also holds markup: escaped, control
    characters visible."""
    from rich.markup import escape

    return escape(clean(str(value)))


def _clean_console(**options: Any) -> Console:
    from rich.console import Console

    class _CleanConsole(Console):
        """A console that never sends a control character of a printed string to the terminal
        (its own styling is added afterwards, so colours still work)."""

        def print(self, *objects: Any, **kwargs: Any) -> None:
            super().print(*(clean(o) if isinstance(o, str) else o for o in objects), **kwargs)

    # No emoji codes: engram writes none, and rich would turn a key such as a:b:c (":b:") into one.
    return _CleanConsole(emoji=False, **options)


_consoles: dict[str, Console] = {}

# The width of standard output when it is not a terminal and no COLUMNS asks for one: wide enough
# that no table cell is folded.
_UNBOUNDED = 1_000_000


def _console(name: str) -> Console:
    if name not in _consoles:
        console = _clean_console(stderr=name == "errors")
        # Not to a terminal, a message line is printed whole: a script reads it as one line (rich
        # folded it at 80 columns).
        console.soft_wrap = name == "errors" or not console.is_terminal
        if name == "console" and _unbounded(console):
            # Nor is a table folded at rich's 80 columns: each cell (a memory's content, a key, a
            # time) stays whole on its own lines, for grep and cut. COLUMNS still sets a width.
            console.width = _UNBOUNDED
        _consoles[name] = console
    return _consoles[name]


def _unbounded(console: Console) -> bool:
    """Standard output goes to a pipe or a file and no width was asked for (``COLUMNS``)."""
    return not console.is_terminal and not os.environ.get("COLUMNS")


def _fitted(**options: Any) -> dict[str, Any]:
    """A table column's options, without the ones that share out a terminal's width (``ratio``
    stretches a table to the whole width, ``max_width`` folds a cell) when there is none."""
    if _unbounded(_console("console")):
        options.pop("ratio", None)
        options.pop("max_width", None)
    return options


def __getattr__(name: str) -> Console:
    """``console`` (stdout) and ``errors`` (stderr), made on first use: rich is not imported by a
    command whose output is ``--json`` only."""
    if name not in ("console", "errors"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _console(name)


@contextmanager
def progress(first: str, *, quiet: bool = False) -> Iterator[Callable[[str, int, int], None]]:
    """The one progress bar of long commands: on stderr (stdout keeps the command's output, and
    ``--json`` stays clean JSON), transient, off when ``quiet`` or stderr is not a terminal.
    Yields ``report(phase, done, total)``, the shape the engine's phase-aware callbacks have; a
    ``total`` of 0 is not known (yet), shown as a pulsing bar under the phase's name. ``first``
    names the work until the first report."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    errors = _console("errors")
    last = [first, 0, 0]  # the newest report: what a Ctrl-C stopped, said as the command ends

    def noted(phase: str, done: int, total: int) -> None:
        last[:] = [phase, done, total]

    try:
        if quiet or not errors.is_terminal:
            # No Progress at all: not to a terminal, rich draws no bar but its stop() still prints an
            # empty line (disabled or not), a blank line on stderr for each import, sync or maintain.
            yield noted
            return
        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=errors, transient=True) as bar:
            task, shown = bar.add_task(first, total=None), first

            def report(phase: str, done: int, total: int) -> None:
                nonlocal task, shown
                noted(phase, done, total)
                if phase != shown:  # a phase of its own: its count, total and time (rich keeps a total once set)
                    bar.remove_task(task)
                    task, shown = bar.add_task(phase, total=total or None, completed=done), phase
                else:
                    bar.update(task, completed=done, total=total or None)

            yield report
    except KeyboardInterrupt:
        # The transient bar is gone with the interrupt: say where the work stopped (what the engine
        # last reported), then exit as interrupted. What was committed by then stays (each command's
        # docs say what a stop mid-way keeps).
        phase, done, total = last
        note_line(f"interrupted while {phase}" + (f" ({done} of {total})" if total else ""))
        raise


def when(ts: float | None) -> str:
    if not ts:
        return "-"
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def emit_json(value: Any, *, line: bool = False) -> None:
    """``value`` as one JSON document on standard output; ``line``: on one line, a JSON line of a
    command that prints one per item (``chat``), flushed so a program reading it gets it now."""
    text = json.dumps(_plain(value), ensure_ascii=False, indent=None if line else 2)  # escapes C0 controls itself
    sys.stdout.write(_CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n")
    if line:
        sys.stdout.flush()


def _plain(value: Any) -> Any:
    from engram.model import Hit, Memory, RecallResult, WriteResult

    if isinstance(value, Memory):
        return value.to_dict()
    if isinstance(value, Hit):
        return {"memory": value.memory.to_dict(), "score": round(value.score, 6),
                "parts": asdict(value.parts), "via": value.via}
    if isinstance(value, RecallResult):
        return {"mode": value.mode, "notes": list(value.notes), "hits": [_plain(h) for h in value.hits]}
    if isinstance(value, WriteResult):
        return {"action": value.action, "warnings": list(value.warnings), "memory": value.memory.to_dict()}
    if is_dataclass(value) and not isinstance(value, type):
        return _plain(asdict(value))
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def memories_table(memories: Sequence[Memory], title: str | None = None) -> None:
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    for column in ("key", "content", "category", "type", "tags", "importance", "created"):
        table.add_column(column, overflow="fold")
    for m in memories:
        content = cell(m.content)
        if m.superseded_by is not None:  # (a neighbour, or a list with superseded ones): out of recall, said so
            content.append("\nsuperseded", style="dim")
        table.add_row(cell(m.key), content, m.category.value, m.type, cell(", ".join(m.tags)),
                      f"{m.importance:.2f}", when(m.created_at))
    _console("console").print(table)


def hits_table(result: RecallResult) -> None:
    from rich.table import Table

    table = Table(title=f"recall ({result.mode})")
    table.add_column("score", no_wrap=True)
    table.add_column("key", **_fitted(overflow="fold", max_width=32))
    table.add_column("content", **_fitted(overflow="fold", ratio=3))
    table.add_column("why", **_fitted(overflow="fold", max_width=28))
    for hit in result.hits:
        p = hit.parts
        if hit.via:
            why = f"linked ({p.link:.2f})"
        else:
            why = f"text {p.text:.2f} vec {p.vector:.2f}"
            if p.recency != 1.0 or p.importance != 1.0:
                why += f" x rec {p.recency:.2f} x imp {p.importance:.2f}"
        content = cell(hit.memory.content)
        held = _held(hit.memory)
        if held:
            content.append(f"\n{held}", style="dim")
        table.add_row(f"{hit.score:.3f}", cell(hit.memory.key), content, why)
    if result.hits:
        _console("console").print(table)
    for note in result.notes:
        note_line(note)


def confirmed(question: str) -> bool:
    """``question [y/N]`` asked on standard error, the answer read from standard input (a terminal
    or a piped ``y``); no answer (end of input) is no. Not ``typer.confirm``: click's prompt writes a
    space to standard output whatever stream the question goes to, and standard output holds the
    result alone (with ``--json``, one JSON document)."""
    _console("errors").print(f"{clean(question)} [y/N]: ", end="", markup=False, highlight=False)
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def declined(what: str) -> None:
    """A confirmation answered no (or not at all): nothing was done and that is no failure, so the
    command exits 0 (exit 1 is a storage or provider failure) with this note on standard error, as
    "nothing to forget"; ``what`` says what was left undone (``not purged from KEY``)."""
    note_line(f"{what}: not confirmed (--yes skips the question)")


def note_line(note: str) -> None:
    """A note about the result, recall's (``nothing relevant: ...``) and a command's that found
    nothing to list, show or do (``nothing listed: ...``, ``no conversations``, ``nothing to forget``):
    on standard error, so standard output holds rows or nothing,
    never a table of headers alone. ``note`` is plain text: stored text in it is shown, not read as markup."""
    _console("errors").print(f"[yellow]{markup_safe(note)}[/yellow]", highlight=False)


def _held(memory: Memory) -> str:
    """When a fact with an end held ("held 2025-01-10 to 2025-05-01"), under its content: a fact that
    ended (a Zep fact invalidated, a `--valid-until` given) stays in ordinary recall, which only
    superseding takes it out of, and would otherwise read as if it still held. Empty without an end."""
    if memory.valid_until is None:
        return ""
    end = when(memory.valid_until)[:10]
    return f"held {when(memory.valid_from)[:10]} to {end}" if memory.valid_from is not None else f"held until {end}"


def memory_detail(memory: Memory, link_keys: Iterable[str] = ()) -> None:
    from rich.table import Table

    table = Table(show_header=False)
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    data = memory.to_dict()
    data["links"] = ", ".join(link_keys)
    for name in ("created_at", "updated_at", "last_accessed", "valid_from", "valid_until", "superseded_at",
                 "received_at"):
        data[name] = when(data[name])
    # Recalls add importance_boost in binary floats: 0.5 + 0.05 + 0.05 is 0.6000000000000001.
    data["importance"] = f"{memory.importance:.6g}"
    for name, value in data.items():
        if isinstance(value, list | dict):
            value = json.dumps(value, ensure_ascii=False) if value else ""
        table.add_row(name, cell(value))
    _console("console").print(table)


def versions_table(versions: Sequence[MemoryVersion], title: str | None = None) -> None:
    """A memory's earlier contents as given (oldest first), each with when an update replaced it."""
    from rich.table import Table

    table = Table(title=title)
    table.add_column("#", no_wrap=True)
    table.add_column("replaced", no_wrap=True)
    table.add_column("content", overflow="fold")
    for n, version in enumerate(versions, 1):
        table.add_row(str(n), when(version.replaced_at), cell(version.content))
    _console("console").print(table)


def messages_table(messages: Sequence[Message], title: str | None = None) -> None:
    from rich.table import Table

    table = Table(title=title)
    for column in ("time", "role", "content", "tool"):
        table.add_column(column, overflow="fold")
    for m in messages:
        tool = ", ".join(f"{c.name}#{c.id}" for c in m.tool_calls) or (f"answers {m.tool_call_id}" if m.tool_call_id else "")
        table.add_row(when(m.created_at), m.role.value, cell(m.content), cell(tool))
    _console("console").print(table)
