"""History commands: ``engram history list``, ``engram history show|count|append|summary|purge|compact KEY``
and ``engram history recall QUERY`` (Clawless's semantic recall of earlier exchanges).

KEY is a conversation key, ``channel:chat`` or ``channel:chat:thread`` (e.g. ``telegram:42``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from engram import jsondoc
from engram.errors import ValidationError
from engram.interfaces import present
from engram.interfaces.cli import parsing, render
from engram.interfaces.cli.option_names import OptionNamingGroup
from engram.interfaces.cli.state import state
from engram.text import counted

group = typer.Typer(name="history", help="Conversation history per channel:chat:thread key.", no_args_is_help=True,
                    cls=OptionNamingGroup)

KeyArg = typer.Argument(..., help="Conversation key: channel:chat or channel:chat:thread.")


@group.command("list")
def list_(ctx: typer.Context) -> None:
    """This agent's conversations, each key as it is written (pass it back to show or purge it),
    with how many messages it holds."""
    st = state(ctx)
    history = st.reading_engram().history
    listed = [{"key": key, "messages": history.count(key)} for key in history.conversations()]
    if st.as_json:
        render.emit_json(listed)
        return
    for item in listed:
        render.console.print(f"{item['key']}  ({_messages(item['messages'])})", markup=False, highlight=False)
    if not listed:  # on standard error, where a script reading the keys does not take it for one
        render.note_line("no conversations" + ("" if history.enabled else f": {history.off_reason}"))


@group.command("show")
def show(
    ctx: typer.Context,
    key: str = KeyArg,
    limit: int = typer.Option(20, "--limit", "-n", help="How many recent messages (0 = all)."),
) -> None:
    """Show the summary and the most recent messages of a conversation."""
    from engram.model import parse_integer

    # 0 asks for the whole conversation (documented); below it the history's own check named its
    # ``n``, which no user typed (the group renames ``limit`` to ``--limit``).
    limit = parse_integer(limit, "limit", 0, allowed="1 or more, or 0 for every message")
    st = state(ctx)
    history = st.reading_engram().history
    messages = history.all(key) if limit == 0 else history.recent(key, limit)
    summary = history.summary(key)
    if st.as_json:
        render.emit_json({"key": key, "summary": summary, "count": history.count(key),
                          "messages": [m.to_dict() for m in messages]})
        return
    if summary:
        render.console.print(f"[bold]summary:[/bold] {render.markup_safe(summary)}", highlight=False)
    if messages:
        render.messages_table(messages, title=f"{render.markup_safe(key)} ({_messages(history.count(key))})")
    else:  # (a summary stays when compaction discards every message)
        render.note_line(f"no messages in {key}" + ("" if history.enabled else f": {history.off_reason}"))


@group.command("count")
def count(ctx: typer.Context, key: str = KeyArg) -> None:
    """Print how many messages a conversation holds (sclaw's Len), the number alone, for scripts."""
    st = state(ctx)
    n = st.reading_engram().history.count(key)
    if st.as_json:
        render.emit_json({"key": key, "count": n})
    else:
        render.console.print(str(n), markup=False, highlight=False)


@group.command("append")
def append(
    ctx: typer.Context,
    key: str = KeyArg,
    content: str = typer.Argument("", help="Message text, or - to read it from standard input (as sent)."),
    role: str = typer.Option("user", "--role", "-r", help="system, user, assistant or tool."),
    tool_call_id: str | None = typer.Option(None, "--tool-call-id", help="For a tool message: the call it answers."),
    tool_calls: str | None = typer.Option(None, "--tool-calls", help="For an assistant message: JSON list of calls."),
    metadata: str | None = typer.Option(None, "--metadata", "-m", help="Metadata as a JSON object."),
    messages: str | None = typer.Option(
        None, "--messages", help="A file holding a JSON list of messages (role, content, tool_calls, tool_call_id, "
        "metadata), or - for stdin: appended all or none, instead of CONTENT."),
) -> None:
    """Append a message to a conversation (trimmed to max_history_len afterwards; a jsonl
    history keeps max_entries exchanges instead), or with --messages a list of them, all or none."""
    st = state(ctx)
    history = st.engram().history
    if messages is not None:
        if content or role != "user" or tool_call_id or tool_calls or metadata:
            raise ValidationError("messages", "given with CONTENT or a message option",
                                  "either --messages FILE, or CONTENT with --role/--tool-call-id/--tool-calls/--metadata")
        done = history.append_many_reported(key, _message_list(messages))
    else:
        if content == parsing.STDIN:  # as remember - and update --content -: a message that is "-" itself comes on stdin
            content = parsing.stdin_text("content", "UTF-8 text on standard input")
        done = history.append_reported(key, role, content, tool_calls=tool_calls, tool_call_id=tool_call_id,
                                       metadata=metadata)
    appended = done.messages
    if st.as_json:
        shown = [{**m.to_dict(), "stored": done.stored} for m in appended]
        render.emit_json(shown if messages is not None else {**shown[0], "warnings": list(done.warnings)})
    elif history.enabled:
        what = (f"{appended[0].role.value} message" if messages is None
                else f"{len(appended)} message{'s' if len(appended) != 1 else ''}")
        render.console.print(f"appended {what} to {key}", markup=False, highlight=False)
    else:  # nothing done: a note on standard error, as forget's "nothing to forget" (stdout holds results alone)
        render.note_line(f"not appended to {key}: {history.off_reason}")
    if not st.as_json or messages is not None:  # (a list printed as JSON has no room for them)
        for warning in done.warnings:
            render.errors.print(f"[yellow]warning:[/yellow] {render.markup_safe(warning)}")


def _message_list(source: str) -> Any:
    """The JSON document ``--messages`` names (a file, or - for stdin), parsed; its shape is the
    history's to check (``append_many`` names what it refuses)."""
    given = jsondoc.shown(source, _SHOWN_CHARS)
    try:
        if source == parsing.STDIN:
            text = parsing.stdin_text("messages", "a JSON list of messages in UTF-8 on standard input")
        else:
            text = Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise parsing.unreadable_path("messages", source, exc, f"a file holding {_MESSAGES_FILE}") from None
    except UnicodeDecodeError as exc:
        raise ValidationError("messages", f"{given} is not UTF-8 text ({exc.reason} at byte {exc.start})",
                              f"a file holding {_MESSAGES_FILE}") from None
    try:
        return jsondoc.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError("messages", f"{given} is not JSON ({exc})", "a JSON list of messages") from None


# How much of a --messages value an error shows back (the JSON given where its file goes can be long).
_SHOWN_CHARS = 60
_MESSAGES_FILE = "a JSON list of messages in UTF-8"


@group.command("summary")
def summary(
    ctx: typer.Context,
    key: str = KeyArg,
    set_to: str | None = typer.Option(None, "--set", help="Replace the summary with this text (not empty: --clear removes it)."),
    clear: bool = typer.Option(False, "--clear", help="Remove the summary (the messages stay; purge forgets both)."),
) -> None:
    """Print a conversation's summary, replace it with --set, or remove it with --clear."""
    st = state(ctx)
    if clear and set_to is not None:
        raise ValidationError("--clear", "cannot be given with --set", "--set TEXT or --clear")
    history = (st.reading_engram() if set_to is None and not clear else st.engram()).history
    cleared = None
    if clear:
        cleared = history.clear_summary(key)
    elif set_to is not None:
        with present.wire_names({"summary": "--set"}):  # the engine's word for what --set fills
            warnings = history.set_summary(key, set_to)
        for warning in warnings:
            render.errors.print(f"[yellow]warning:[/yellow] {render.markup_safe(warning)}")
    text = history.summary(key)
    if st.as_json:
        render.emit_json({"key": key, "summary": text} | ({} if cleared is None else {"cleared": cleared}))
    elif cleared is not None:  # on standard error, as every note: what --clear did
        render.note_line(f"summary of {key} cleared" if cleared else f"no summary of {key} to clear: nothing changed")
    elif text:
        render.console.print(render.markup_safe(text), highlight=False)
    else:  # on standard error: `engram history summary KEY > file` keeps an empty file, not "(no summary)"
        render.note_line(f"no summary of {key}" + ("" if history.enabled else f": {history.off_reason}"))


@group.command("purge")
def purge(
    ctx: typer.Context,
    key: str = KeyArg,
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete every message and the summary of a conversation."""
    st = state(ctx)
    history = st.engram().history
    count = history.count(key)
    # (asked on standard error: standard output holds the result alone, the answer piped in or not)
    if not yes and not render.confirmed(f"Delete {counted(count, 'message')} and the summary of {key}?"):
        render.declined(f"nothing purged from {key}")  # exit 0: declining is no failure
        if st.as_json:
            render.emit_json({"key": key, "purged": 0})
        return
    count = history.purge(key)
    if st.as_json:
        render.emit_json({"key": key, "purged": count})
    else:
        render.console.print(f"purged {_messages(count)} from {key}", markup=False, highlight=False)


@group.command("compact")
def compact(
    ctx: typer.Context,
    key: str = KeyArg,
    force: bool = typer.Option(False, "--force", help="Compact even below the configured limits."),
) -> None:
    """Compact a conversation now, as the agent does: the configured LLM summarises and extracts
    (without an LLM: a count summary and the rule extractor)."""
    from engram.root import compact_conversation

    st = state(ctx)
    # Opened as a read: an agent with no database yet (a new home) has no conversation to compact,
    # and the empty engine says so without making one; else it is ``engram()``'s.
    result = compact_conversation(st.reading_engram(), st.settings(), key, force=force)
    if st.as_json:
        render.emit_json({"compacted": result.compacted, "emergency": result.emergency, "kept": len(result.kept),
                          "discarded": len(result.discarded), "summary": result.summary,
                          "purged_memories": result.purged, "notes": list(result.notes)})
        return
    if not result.compacted:  # a note on standard error, as forget's "nothing to forget"
        render.note_line("nothing to compact" + (f": {'; '.join(result.notes)}" if result.notes else ""))
        return
    render.console.print(f"discarded {counted(len(result.discarded), 'message')}, kept {len(result.kept)}; "
                         f"summary: {result.summary}", highlight=False)
    for note in result.notes:  # the emergency path taken, a summariser or extraction that failed
        render.note_line(note)


@group.command("transcript")
def transcript(
    ctx: typer.Context,
    key: str = KeyArg,
    index: bool = typer.Option(False, "--index", help="Also store substantive turns as conversation memories."),
) -> None:
    """Write this agent's conversation as a markdown transcript (ClawCode's format), optionally indexing its turns."""
    from engram.files import transcripts
    from engram.files.wiring import note_written_on_request

    st = state(ctx)
    engram = st.engram() if index else st.reading_engram()  # --index stores memories: only then a write
    settings = st.settings()
    folder = settings.transcripts_folder()  # asked for: written even for an encrypted store
    threshold = settings.history.transcript_importance_threshold
    # A long conversation's turns take a while to index: a bar, and a Ctrl-C says how far it got
    # (the file is replaced whole: until then the one there was stays).
    with render.progress("reading the conversation", quiet=st.as_json) as progress:
        messages = engram.history.all(key)
        progress(transcripts.INDEXING if index else transcripts.WRITING, 0, 0)
        path = (transcripts.index_and_write(engram, folder, key, messages, threshold=threshold, progress=progress)
                if index else transcripts.write_as_indexed(engram, folder, key, messages))
    note_written_on_request(settings, [path])  # asked for: not a plain copy to warn about at each start
    if st.as_json:
        render.emit_json({"key": key, "path": str(path), "messages": len(messages), "indexed": index})
    else:
        render.console.print(f"wrote {path} ({_messages(len(messages))}{', indexed' if index else ''})",
                             markup=False, highlight=False, soft_wrap=True)


@group.command("recall")
def recall(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="The current input: earlier exchanges like it are found."),
    chat: str | None = typer.Option(None, "--chat", help="Only this conversation: a chat id (42: that chat on any "
                                    "channel) or a key (telegram:42)."),
    top_k: int | None = typer.Option(None, "--top-k", "-k", help="Most exchanges, 1-100 (default: history.recap_top_k)."),
) -> None:
    """Earlier exchanges of this agent's conversations like QUERY, oldest first, as the recap block
    an agent puts in its prompt (Clawless's semantic recall; --json: its entries and the recap)."""
    from engram.interfaces import present, seams

    st = state(ctx)
    engram = st.reading_engram(warm=True)
    # The history names a chat id it refuses ``chatId`` (Clawless's field), a key ``key`` or one of
    # its parts (``key.chat``): here each is --chat, the one value given.
    with present.wire_names(dict.fromkeys(("key.channel", "key.chat", "key.thread", "chatId", "key"), "--chat")):
        found = seams.semantic_recall(engram, query, chat, top_k)
    if st.as_json:
        render.emit_json(found)
    elif found["recap"]:
        render.console.print(found["recap"], markup=False, highlight=False, soft_wrap=True)
    else:  # on standard error, as `history show` says it has no messages: stdout holds results alone
        from engram.history.service import SEMANTIC_OFF

        history = engram.history
        why = history.off_reason if not history.enabled else SEMANTIC_OFF if history.semantic is None else None
        render.note_line("no earlier exchange like it" + (f": {why}" if why else ""))


def register(app: typer.Typer) -> None:
    app.add_typer(group)


def _messages(count: int) -> str:
    return f"{count} message{'s' * (count != 1)}"
