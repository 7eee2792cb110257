"""``engram import`` on the files the claw-family agents really write (Clawless, PtrClaw, sclaw,
OpenClaw), as their own code writes them rather than as their documentation describes them.
Through the CLI against a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.errors import SnapshotError
from engram.interfaces.cli.app import app
from tests.cli_in_process import cli_output
from tests.importers.cli_runs import runner

FIXTURES = Path(__file__).parent.parent / "fixtures" / "import"


def as_json(home: Path, *args: str) -> object:
    return json.loads(cli_output(home, "--json", *args))


def test_clawless_history_as_its_code_writes_it_snake_case_lines(tmp_path: Path) -> None:
    """Clawless's code appends ``{"timestamp", "chat_id", "user_message", "bot_response",
    "platform"}`` lines (its documentation says camelCase): every exchange arrives, byte for byte, in
    the conversation of its platform and chat, at its time."""
    home = tmp_path / "home"
    summary = as_json(home, "import", str(FIXTURES / "clawless-home"))
    assert (summary["kind"], summary["messages_imported"], summary["operator_notes"]) == ("clawless", 6, "added")
    group = as_json(home, "history", "show", "telegram:-1001987654321")
    assert [(m["role"], m["content"]) for m in group["messages"]] == [
        ("user", "Lembra-me: a reunião com a Inês é quinta às 15h 🗓️"),
        ("assistant", "Anotado! Quinta-feira às 15h, reunião com a Inês."),
        ("user", "E a que horas é a reunião?"), ("assistant", "Quinta às 15h, com a Inês.")]
    assert group["messages"][0]["created_at"] == pytest.approx(1772437269.318)  # 2026-03-02T07:41:09.318Z
    assert group["messages"][0]["metadata"]["clawless"] == {"chatId": "-1001987654321", "platform": "telegram", "line": 1}
    [asked, answered] = as_json(home, "history", "show", "slack:C07QK2L9N")["messages"]
    assert asked["content"] == "  summarize the deploy log\n\n```\nok 12/12\n```"
    assert answered["content"] == "All 12 steps passed... [truncated]"
    assert as_json(home, "import", str(FIXTURES / "clawless-home" / "conversation-history.jsonl"))["messages_skipped"] == 6


TEMPLATE = "# Clawless Memory\n\nThis file stores durable memory notes for Clawless.\n\n## Notes\n\n"  # its ensureMemoryFile


def test_clawless_memory_md_joins_without_its_template_and_keeps_the_operators_comments(tmp_path: Path) -> None:
    """Clawless writes ``MEMORY.md`` from a template (a title, a line saying what the file is, the
    ``## Notes`` heading its agent appends under): those lines are no notes, as engram's own template
    is none, and are left out. The template has no HTML comments (OpenClaw's hints are): a comment in
    the file is the operator's, which Clawless gives its model as it is, so it joins with the notes."""
    from engram.engine import Engram
    from engram.errors import SnapshotError

    home = tmp_path / "home"
    summary = as_json(home, "import", str(FIXTURES / "clawless-home"))
    assert summary["operator_notes"] == "added", summary
    written = (home / "MEMORY.md").read_text(encoding="utf-8")
    assert "## Imported from clawless\n\n- Inês is the operator's manager.\n- Deploys happen on Tuesdays.\n" in written
    assert "Clawless Memory" not in written and "This file stores durable memory notes" not in written, written

    noted = TEMPLATE + "- Call me Rui <!-- since the move -->\n<!-- keep this list short -->\n"
    with Engram.from_settings(home=tmp_path / "other", embeddings={"provider": "none"}) as mem:
        assert mem.import_from({"MEMORY.md": noted}, "clawless").operator_notes == "added"
        assert mem.import_from({"MEMORY.md": noted}, "clawless").operator_notes == "present"
    written = (tmp_path / "other" / "MEMORY.md").read_text(encoding="utf-8")
    assert "\n\n- Call me Rui <!-- since the move -->\n<!-- keep this list short -->\n" in written, written
    assert "## Notes" not in written, written
    # A MEMORY.md that is still only the template holds no notes: with no history, nothing to import.
    with Engram.from_settings(home=tmp_path / "third", embeddings={"provider": "none"}) as mem:
        with pytest.raises(SnapshotError, match="no conversation-history.jsonl or MEMORY.md with content"):
            mem.import_from({"MEMORY.md": TEMPLATE}, "clawless")


def test_clawless_history_before_its_jsonl_store_one_json_document(tmp_path: Path) -> None:
    """Clawless before its JSONL store wrote the same file as one indented document,
    ``{"conversations": [{"timestamp", "chatId", "userMessage", "botResponse", "platform"}]}``:
    detected by its name and by its content, each entry two messages."""
    home = tmp_path / "home"
    history = FIXTURES / "clawless-before-jsonl" / "conversation-history.jsonl"
    summary = as_json(home, "import", str(history))
    assert (summary["kind"], summary["messages_imported"]) == ("clawless", 4), summary
    shown = as_json(home, "history", "show", "telegram:987654321")
    assert [m["content"] for m in shown["messages"]][2:] == ["Bom dia ☀️", "Bom dia! Como posso ajudar?"]
    assert shown["messages"][3]["metadata"]["clawless"]["entry"] == 1
    assert shown["messages"][0]["created_at"] == pytest.approx(1763672624.12)  # 2025-11-20T21:03:44.120Z
    renamed = tmp_path / "clawless-backup.json"
    renamed.write_bytes(history.read_bytes())
    by_content = as_json(tmp_path / "other", "import", str(renamed))
    assert (by_content["kind"], by_content["messages_imported"]) == ("clawless", 4), by_content


def test_openclaw_workspace_with_a_lowercase_memory_md(tmp_path: Path) -> None:
    """OpenClaw's memory index reads the workspace's long-term memory as ``MEMORY.md`` or
    ``memory.md``: the lowercase file's facts are core memories, as ``MEMORY.md``'s are, not left out
    while its daily logs are imported; a workspace holding only ``memory.md`` is still detected."""
    home = tmp_path / "home"
    summary = as_json(home, "import", str(FIXTURES / "openclaw-lowercase"))
    assert (summary["kind"], summary["imported"]) == ("openclaw", 4), summary
    by_content = {m["content"]: m for m in as_json(home, "list")}
    marta = by_content["Answer in Portuguese when she writes in Portuguese — obrigada!"]
    assert (marta["category"], marta["tags"]) == ("core", ["long-term-memory", "preferences"])
    assert marta["metadata"]["openclaw"]["file"] == "memory.md"
    assert by_content["Shipped the invoice export; Marta signed off."]["category"] == "knowledge"
    alone = tmp_path / "workspace"
    alone.mkdir()
    (alone / "memory.md").write_bytes((FIXTURES / "openclaw-lowercase" / "memory.md").read_bytes())
    assert as_json(tmp_path / "other", "import", str(alone))["kind"] == "openclaw"


def test_openclaw_html_comments_are_no_memories(tmp_path: Path) -> None:
    """The hints in OpenClaw's templates (``<!-- Who are you working with? -->``) do not show in the
    rendered note and are nothing the user said: a comment on its own lines (one line or several)
    is no memory, one inside a line of text is taken out of that text, and each is counted in the
    import's warnings; a ``<!--`` in a code span or a fenced code block is code, kept byte for byte."""
    home = tmp_path / "home"
    summary = as_json(home, "import", str(FIXTURES / "openclaw-template"))
    contents = sorted(m["content"] for m in as_json(home, "list"))
    assert contents == sorted([
        "Marta runs the bakery on Rua Augusta",
        "Prefers `<!-- raw -->` tags left alone in templates",
        "We chose  oven supplier Forno Lda.",
        "Delivered 40 pastéis to the café.",
        "```html\n<!-- kept: this is code -->\n<p>menu</p>\n```",
    ]), contents
    assert summary["imported"] == 5, summary
    assert "MEMORY.md: 4 HTML comments (lines 3, 6, 9, 15) not imported: a comment does not show in the note" \
           " (a template's hint), so it is no memory" in summary["warnings"], summary["warnings"]
    assert any(w.startswith("memory/2026-03-04.md: 1 HTML comment (line 3) not imported") for w in summary["warnings"])


def test_openclaw_import_of_an_engram_home_leaves_its_memory_folder_to_engram(tmp_path: Path) -> None:
    """An engram home holds the operator's ``MEMORY.md`` beside its memory folder ``memory/``, so it
    looks like an OpenClaw workspace, whose reader takes every markdown file under ``memory/``:
    engram's own files there (``memory/agents/bob/knowledge.md``) were imported as OpenClaw notes,
    bob's memory joining the importing agent under a new id. They are engram's: not read, named
    in a warning with the folder ``--from folder`` imports them from."""
    source = tmp_path / "source-home"
    cli_output(source, "-a", "bob", "remember", "bob likes tea")
    cli_output(source, "remember", "the sky is blue", "--scope", "global")
    (source / "MEMORY.md").write_text("- Deploys go out on Tuesdays\n", encoding="utf-8")
    assert (source / "memory" / "agents" / "bob" / "knowledge.md").is_file()  # where engram wrote it
    bobs = sorted(m["id"] for m in as_json(source, "-a", "bob", "list"))  # his and the global one
    for home, args in ((tmp_path / "explicit", ("--from", "openclaw")), (tmp_path / "detected", ())):
        summary = as_json(home, "import", *args, str(source))
        assert (summary["kind"], summary["imported"]) == ("openclaw", 1), summary
        assert [m["content"] for m in as_json(home, "list")] == ["Deploys go out on Tuesdays"]
        [warning] = summary["warnings"]
        assert warning.startswith("not read: memory/agents/bob/knowledge.md, memory/global/"), warning
        assert warning.endswith("import memory/ with --from folder"), warning
    home = tmp_path / "explicit"
    assert as_json(home, "import", "--from", "folder", str(source / "memory"))["imported"] == 2  # as the warning says
    assert sorted(m["id"] for m in as_json(home, "-a", "bob", "list")) == bobs


def test_openclaw_reads_memory_subfolders_but_not_an_engram_folder_deeper(tmp_path: Path) -> None:
    """OpenClaw's memory index walks ``memory/`` to any depth (``memory/projects/acme.md`` is
    indexed), so the reader takes those notes; an engram memory folder deeper in it
    (``memory/sub/agents/default/notes.md``) is still engram's and passed over, named. A file in a
    folder only named like engram's (``memory/agents/notes.md``, no agent folder) is a note."""
    workspace = tmp_path / "workspace"
    for rel, text in (("memory/2026-03-02.md", "- Shipped the invoice export\n"),
                      ("memory/projects/acme.md", "- Acme ships on Fridays\n"),
                      ("memory/agents/notes.md", "- The coder agent runs nightly\n"),
                      ("memory/sub/agents/default/notes.md", "- an engram entry <!-- id:x -->\n")):
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text, encoding="utf-8")
    home = tmp_path / "home"
    summary = as_json(home, "import", "--from", "openclaw", str(workspace))
    assert sorted(m["content"] for m in as_json(home, "list")) == [
        "Acme ships on Fridays", "Shipped the invoice export", "The coder agent runs nightly"]
    assert summary["warnings"] == [
        "not read: memory/sub/agents/default/notes.md: engram memory files (global/, agents/<agent>/,"
        " sessions/<agent>/<session>/), which an OpenClaw workspace (MEMORY.md, memory/) does not hold;"
        " import memory/sub/ with --from folder"], summary


def test_engram_history_on_a_current_clawless_file_reads_and_appends_its_snake_case_lines(tmp_path: Path) -> None:
    """``history.backend = "jsonl"`` pointed (``history.path``) at the file Clawless's code writes
    (``chat_id``, ``user_message``, ``bot_response`` lines) reads its exchanges, and what engram
    appends is spelt as the file is, in Clawless's field order, so Clawless keeps reading it; the
    answer joining that exchange (the line written again) keeps its spelling. The lines already
    there stay byte for byte."""
    home = tmp_path / "home"
    history = tmp_path / "clawless" / "conversation-history.jsonl"
    history.parent.mkdir()
    original = (FIXTURES / "clawless-home" / "conversation-history.jsonl").read_bytes()
    history.write_bytes(original)
    env = {"ENGRAM_HISTORY__BACKEND": "jsonl", "ENGRAM_HISTORY__PATH": str(history), "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    shown = json.loads(cli_output(home, "--json", "history", "show", "telegram:-1001987654321", env=env))
    assert [(m["role"], m["content"]) for m in shown["messages"]] == [
        ("user", "Lembra-me: a reunião com a Inês é quinta às 15h 🗓️"),
        ("assistant", "Anotado! Quinta-feira às 15h, reunião com a Inês."),
        ("user", "E a que horas é a reunião?"), ("assistant", "Quinta às 15h, com a Inês.")]
    listed = json.loads(cli_output(home, "--json", "history", "list", env=env))
    assert listed == [{"key": "slack:C07QK2L9N", "messages": 2}, {"key": "telegram:-1001987654321", "messages": 4}]

    cli_output(home, "history", "append", "telegram:-1001987654321", "E onde?", env=env)
    cli_output(home, "history", "append", "telegram:-1001987654321", "Na padaria.", "--role", "assistant", env=env)
    after = history.read_bytes()
    assert after.startswith(original), after
    [added] = [json.loads(line) for line in after[len(original):].decode("utf-8").splitlines()]
    assert list(added)[:5] == ["timestamp", "chat_id", "user_message", "bot_response", "platform"], added
    assert (added["chat_id"], added["user_message"], added["bot_response"], added["platform"]) == \
           ("-1001987654321", "E onde?", "Na padaria.", "telegram")
    assert not {"userMessage", "botResponse", "chatId"} & set(added), added
    again = json.loads(cli_output(home, "--json", "history", "show", "telegram:-1001987654321", env=env))
    assert [m["content"] for m in again["messages"]][-2:] == ["E onde?", "Na padaria."]


def test_engram_history_keeps_writing_camel_case_in_a_camel_case_file(tmp_path: Path) -> None:
    """A file spelt as Clawless's documentation and engram spell it (``userMessage``, ...) gets its
    new lines spelt so, as before."""
    home = tmp_path / "home"
    history = tmp_path / "conversation-history.jsonl"
    history.write_text('{"userMessage": "hi", "botResponse": "hello", "chatId": "1", "platform": "telegram",'
                       ' "timestamp": "2026-03-02T07:41:09.318Z"}\n', "utf-8")
    env = {"ENGRAM_HISTORY__BACKEND": "jsonl", "ENGRAM_HISTORY__PATH": str(history), "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    cli_output(home, "history", "append", "telegram:1", "again", env=env)
    added = json.loads(history.read_text("utf-8").splitlines()[-1])
    assert (added["userMessage"], added["chatId"]) == ("again", "1") and "user_message" not in added, added


def test_openclaw_bootstrap_files_are_named_not_silently_dropped(tmp_path: Path) -> None:
    """A real OpenClaw workspace holds, beside ``MEMORY.md`` and ``memory/``, the bootstrap files its
    model gets as the prompt (``USER.md``: who the user is; ``SOUL.md``, ``IDENTITY.md``: the
    persona; ``AGENTS.md``, ...). OpenClaw's memory index does not read them, so neither does the
    import, but a person moving over is told which were not read and how to keep what they say."""
    workspace = tmp_path / "workspace"
    (workspace / "memory").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text("# MEMORY.md - Long-Term Memory\n\n- Deploys go out on Tuesdays\n")
    (workspace / "memory" / "2026-02-03.md").write_text("# 2026-02-03\n\n- Fixed the billing bug\n")
    (workspace / "USER.md").write_text("# USER.md - About Your Human\n\n- **Name:** Marta\n- **Timezone:** Europe/Lisbon\n")
    (workspace / "SOUL.md").write_text("# SOUL.md - Who You Are\n\nBe genuinely helpful.\n")
    (workspace / "AGENTS.md").write_text("# AGENTS.md - Your Workspace\n\nRead memory/ at session start.\n")
    summary = as_json(tmp_path / "home", "import", str(workspace))
    assert (summary["kind"], summary["imported"]) == ("openclaw", 2), summary
    named = [w for w in summary["warnings"] if w.startswith("not read: AGENTS.md, SOUL.md, USER.md:")]
    assert len(named) == 1 and "engram remember --key soul:user --category core" in named[0], summary["warnings"]
    contents = {m["content"] for m in as_json(tmp_path / "home", "list")}
    assert contents == {"Deploys go out on Tuesdays", "Fixed the billing bug"}


def test_an_into_agent_import_leaves_the_operators_memory_md_alone(tmp_path: Path) -> None:
    """``engram -a bob import ... --into-agent`` writes into bob alone: a Clawless home's notes would
    join the operator's ``MEMORY.md``, which every agent's prompt holds (alice's too), so they are
    skipped and the summary says so; bob's conversations arrive. Without the option they join."""
    home = tmp_path / "home"
    summary = as_json(home, "--agent", "bob", "import", str(FIXTURES / "clawless-home"), "--into-agent")
    assert (summary["messages_imported"], summary["operator_notes"]) == (6, "skipped"), summary
    assert not (home / "MEMORY.md").exists() or "Imported from clawless" not in (home / "MEMORY.md").read_text(encoding="utf-8")
    assert as_json(home, "--agent", "alice", "history", "list") == as_json(home, "history", "list") == []
    assert len(as_json(home, "--agent", "bob", "history", "list")) == 2
    assert as_json(home, "--agent", "bob", "import", str(FIXTURES / "clawless-home"))["operator_notes"] == "added"
    assert "- Deploys happen on Tuesdays." in (home / "MEMORY.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("spelling", ["code", "documentation"])
def test_a_clawless_message_refused_by_the_history_is_named_as_the_file_spells_its_fields(
        tmp_path: Path, spelling: str) -> None:
    """A Clawless line's time is ``timestamp`` and its texts ``user_message`` / ``bot_response``
    (``userMessage`` / ``botResponse`` as its documentation spells them): a message the history
    refuses (a time later than now, a NUL in a text) is named so, as ChatGPT's ``create_time`` is,
    and nothing is imported. They were named as engram's (``line 1.created_at``, ``line 1.content``),
    fields no Clawless file has."""
    from engram.engine import Engram
    from engram.errors import SnapshotError

    user, bot, chat = ("user_message", "bot_response", "chat_id") if spelling == "code" else (
        "userMessage", "botResponse", "chatId")
    good = {"timestamp": "2026-03-02T07:41:09.318Z", chat: "42", user: "hi", bot: "hello", "platform": "telegram"}
    for changed, named in (
            ({"timestamp": "3000-01-01T00:00:00Z"}, "conversation-history.jsonl line 2.timestamp: 3000-01-01T00:00:00"),
            ({bot: "a\x00b"}, f"conversation-history.jsonl line 2.{bot}: contains a NUL character"),
            ({user: "a\x00b"}, f"conversation-history.jsonl line 2.{user}: contains a NUL character")):
        source = tmp_path / spelling / "conversation-history.jsonl"
        source.parent.mkdir(exist_ok=True)
        source.write_text(json.dumps(good) + "\n" + json.dumps({**good, **changed}) + "\n", "utf-8")
        with Engram.from_settings(home=tmp_path / "home", embeddings={"provider": "none"}) as mem:
            with pytest.raises(SnapshotError) as refused:
                mem.import_from(source, "clawless")
            assert str(refused.value).startswith(named), str(refused.value)
            assert mem.history.conversations() == []
    # Refused once redacted (an e-mail address's marker is longer than it), where the history cannot tell
    # which of the line's two texts it was: named both ways.
    from engram.model import MAX_MESSAGE_CHARS

    said = "mail a@b.io "
    source.write_text(json.dumps({**good, user: said + "x" * (MAX_MESSAGE_CHARS - len(said))}) + "\n", "utf-8")
    with Engram.from_settings(home=tmp_path / "redacting", embeddings={"provider": "none"}, privacy={"pii": "redact"}) as mem:
        with pytest.raises(SnapshotError) as refused:
            mem.import_from(source, "clawless")
        assert str(refused.value).startswith(f"conversation-history.jsonl line 1.{user} or .{bot}: is "), str(refused.value)


def test_a_chat_id_holding_a_colon_is_the_chats_thread_as_engrams_jsonl_history_writes_it(tmp_path: Path) -> None:
    """engram's ``jsonl`` history writes a thread's conversation (``slack:C1:T7``) as the line's
    ``chatId`` ``C1:T7``, and reads it back so; importing that file (``--from clawless``) refused it
    (``chatId: "C1:T7" cannot be part of a key``), and with it the whole history. A ``chatId`` that
    still cannot be a key's parts keeps its usable characters and a hash, its id as written in the
    metadata, and a platform that cannot be a channel is still refused, naming it."""
    written = tmp_path / "written"
    history = tmp_path / "conversation-history.jsonl"
    env = {"ENGRAM_HISTORY__BACKEND": "jsonl", "ENGRAM_HISTORY__PATH": str(history), "ENGRAM_EMBEDDINGS__PROVIDER": "none"}
    cli_output(written, "history", "append", "slack:C1:T7", "Which room is the retro in?", env=env)
    cli_output(written, "history", "append", "slack:C1:T7", "Room 4B.", "--role", "assistant", env=env)
    assert json.loads(history.read_text("utf-8").splitlines()[0])["chatId"] == "C1:T7"
    with history.open("a", encoding="utf-8") as out:  # as Clawless's code writes a line, with an id no key part can be
        out.write(json.dumps({"timestamp": "2026-03-02T07:41:09.318Z", "chat_id": "team a:b:c",
                              "user_message": "hi", "bot_response": "hello", "platform": "telegram"}) + "\n")
    home = tmp_path / "home"
    summary = as_json(home, "import", str(history), "--from", "clawless")
    assert summary["messages_imported"] == 4, summary
    keys = {c["key"] for c in as_json(home, "history", "list")}
    assert "slack:C1:T7" in keys and len(keys) == 2, keys
    shown = as_json(home, "history", "show", "slack:C1:T7")["messages"]
    assert [(m["role"], m["content"]) for m in shown] == [("user", "Which room is the retro in?"),
                                                          ("assistant", "Room 4B.")]
    [other] = keys - {"slack:C1:T7"}
    assert other.startswith("telegram:team-a-b-c-"), other
    assert as_json(home, "history", "show", other)["messages"][0]["metadata"]["clawless"]["chatId"] == "team a:b:c"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"userMessage": "hi", "botResponse": "yo", "chatId": "1", "platform": "tele gram",
                               "timestamp": "2026-03-02T07:41:09.318Z"}) + "\n", "utf-8")
    result = runner.invoke(app, ["--home", str(tmp_path / "bad-home"), "import", str(bad), "--from", "clawless"])
    assert isinstance(result.exception, SnapshotError), result.output
    assert 'conversation-history.jsonl line 1.platform: "tele gram" cannot be part of a key' in str(result.exception)


def test_an_openclaw_files_own_title_is_no_tag(tmp_path: Path) -> None:
    """OpenClaw's templates title ``MEMORY.md`` ``# MEMORY.md - Long-Term Memory`` and a daily log
    with its date: each fact of the file got that title as a tag (``memory-md-long-term-memory``,
    ``2026-02-03``), the file's name on every memory. The title stays among the headings in the
    metadata; a heading naming a topic is a tag as before, a topic file's title (``# Acme``) too."""
    workspace = tmp_path / "workspace"
    (workspace / "memory" / "projects").mkdir(parents=True)
    (workspace / "MEMORY.md").write_text("# MEMORY.md - Long-Term Memory\n\n## Preferences\n\n"
                                         "- Deploys go out on Tuesdays\n", "utf-8")
    (workspace / "memory" / "2026-02-03.md").write_text("# 2026-02-03\n\n- Fixed the billing bug\n", "utf-8")
    (workspace / "memory" / "projects" / "acme.md").write_text("# Acme\n\n- Acme pays on net 60\n", "utf-8")
    home = tmp_path / "home"
    assert as_json(home, "import", str(workspace))["imported"] == 3
    by_content = {m["content"]: m for m in as_json(home, "list")}
    deploys, billing = by_content["Deploys go out on Tuesdays"], by_content["Fixed the billing bug"]
    assert deploys["tags"] == ["preferences"], deploys
    assert deploys["metadata"]["openclaw"]["headings"] == ["MEMORY.md - Long-Term Memory", "Preferences"]
    assert billing["tags"] == ["daily"] and billing["metadata"]["openclaw"]["headings"] == ["2026-02-03"], billing
    assert by_content["Acme pays on net 60"]["tags"] == ["acme"]
    assert as_json(home, "list", "--tag", "memory-md-long-term-memory") == []
