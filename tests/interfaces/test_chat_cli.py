"""``engram chat`` as a person runs it: a real subprocess reading lines from standard input."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from engram.testing.llm_servers import OpenAICompatServer, Reply


def run_chat(home, lines: list[str], extra_env: dict[str, str] | None = None, *args: str, options: tuple[str, ...] = ()):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update({"ENGRAM_HOME": str(home), **(extra_env or {})})
    code = "from engram.interfaces.cli.app import main; main()"
    return subprocess.run([sys.executable, "-c", code, *options, "chat", *args], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, env=env, timeout=60)


def run_cli(home, *args: str):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env["ENGRAM_HOME"] = str(home)
    code = "from engram.interfaces.cli.app import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=60)


def test_chat_without_llm_stores_recalls_and_says_synthesis_is_off(tmp_path):
    done = run_chat(tmp_path, ["My name is Alice.", "My favourite editor is vim.", "Which editor do I like?", "/quit",
                               "never read"])
    assert done.returncode == 0, done.stderr
    assert "synthesis is off" in done.stderr.lower()
    assert "Noted: The user's name is Alice." in done.stdout
    assert "user-favourite-editor: The user's favourite editor is vim." in done.stdout
    assert (tmp_path / "MEMORY.md").exists()
    # Stored for real: a second process recalls it.
    later = run_cli(tmp_path, "recall", "editor")
    assert "vim" in later.stdout
    again = run_chat(tmp_path, ["what is my name?"])
    assert "user-name: The user's name is Alice." in again.stdout


def test_chat_without_llm_says_what_the_configured_extractor_stores(tmp_path):
    """With no LLM, ``chat.extractor = "llm"`` (or ``"none"``) stores nothing a user says: the banner
    said rule-based extraction stores first-person statements, and nothing was stored. It now says
    extraction is off and why; ``auto`` and ``rules`` still store by the rules and say so."""
    for extractor, stored in (("llm", False), ("none", False), ("rules", True), ("auto", True)):
        home = tmp_path / extractor
        done = run_chat(home, [], {"ENGRAM_CHAT__EXTRACTOR": extractor}, "-m", "My name is Ada")
        assert done.returncode == 0, done.stderr
        banner = done.stderr.splitlines()[0]
        assert banner.startswith("Synthesis is off (no LLM configured)")
        assert ("rule-based extraction stores plain first-person statements" in banner) is stored, banner
        assert (f'chat.extractor = "{extractor}"' in banner) is not stored, banner
        if extractor == "llm":
            assert "needs an LLM" in banner and "ENGRAM_LLM__PROVIDER" in banner
        assert ("Noted: The user's name is Ada." in done.stdout) is stored, done.stdout


def test_chat_with_a_configured_provider(tmp_path):
    (tmp_path / "MEMORY.md").write_text("The deploy server is called atlas.\n")
    with OpenAICompatServer(Reply.tool("memory_store", key="user-city", content="The user lives in Oslo."),
                            Reply.say("Got it, Oslo."), Reply.say("You live in Oslo.")) as server:
        env = {"ENGRAM_LLM__PROVIDER": "openai", "ENGRAM_LLM__MODEL": "scripted", "ENGRAM_LLM__BASE_URL": server.base_url,
               "ENGRAM_LLM__API_KEY": "sk-local"}
        done = run_chat(tmp_path, ["I live in Oslo", "Where do I live?"], env)
        assert done.returncode == 0, done.stderr
        assert "chatting with openai:scripted" in done.stderr
        assert "Got it, Oslo." in done.stdout and "You live in Oslo." in done.stdout
        second = server.requests[2].body["messages"]
        assert "The deploy server is called atlas." in second[0]["content"]
        assert "- user-city: The user lives in Oslo." in second[-1]["content"]
        assert server.requests[0].headers["authorization"] == "Bearer sk-local"


def test_chat_reports_an_unreachable_provider_and_goes_on(tmp_path):
    with OpenAICompatServer() as server:
        url = server.base_url
    env = {"ENGRAM_LLM__PROVIDER": "openai", "ENGRAM_LLM__BASE_URL": url, "ENGRAM_LLM__MAX_RETRIES": "0"}
    done = run_chat(tmp_path, ["hello", "/quit"], env)
    assert done.returncode == 1  # piped input is a script: the failure shows in the exit code
    assert "error:" in done.stderr and "cannot reach" in done.stderr


def test_scripted_chat_exits_with_the_failures_code(tmp_path):
    # QA: `engram chat -m` exited 0 after a provider HTTP 500, an unreachable provider and bad input.
    with OpenAICompatServer(Reply.fail(500), Reply.say("still here")) as server:
        env = {"ENGRAM_LLM__PROVIDER": "openai", "ENGRAM_LLM__MODEL": "scripted", "ENGRAM_LLM__BASE_URL": server.base_url,
               "ENGRAM_LLM__API_KEY": "sk-local", "ENGRAM_LLM__MAX_RETRIES": "0"}
        done = run_chat(tmp_path, [], env, "-m", "hello", "-m", "again")
    assert done.returncode == 1, done.stderr
    assert "error:" in done.stderr and "still here" in done.stdout  # reported, and the chat went on
    with OpenAICompatServer() as server:
        url = server.base_url
    unreachable = {"ENGRAM_LLM__PROVIDER": "openai", "ENGRAM_LLM__BASE_URL": url, "ENGRAM_LLM__MAX_RETRIES": "0"}
    assert run_chat(tmp_path, [], unreachable, "-m", "hello").returncode == 1
    bad = run_chat(tmp_path, [], None, "-m", "\udcff")  # the byte 0xff on the command line
    assert bad.returncode == 2 and "surrogate" in bad.stderr
    assert run_chat(tmp_path, [], None, "-m", "My name is Ada").returncode == 0


def test_an_unknown_command_is_refused_not_sent_to_the_model(tmp_path):
    # QA: "/bogus" went to the model as a message.
    with OpenAICompatServer(Reply.say("a path"), Reply.say("slashes")) as server:
        env = {"ENGRAM_LLM__PROVIDER": "openai", "ENGRAM_LLM__MODEL": "scripted", "ENGRAM_LLM__BASE_URL": server.base_url,
               "ENGRAM_LLM__API_KEY": "sk-local"}
        done = run_chat(tmp_path, ["/bogus", "/usr/bin is where it lives", "//bogus is literal", "/quit"], env)
        sent = [r.body["messages"][-1]["content"] for r in server.requests]
    assert 'unknown command "/bogus"' in done.stderr and "/compact" in done.stderr
    assert done.returncode == 2  # piped input: the refused line shows in the exit code
    assert len(sent) == 2 and sent[0].endswith("/usr/bin is where it lives") and sent[1].endswith("/bogus is literal")


def test_hatching_with_no_llm_configured_fails_with_the_configuration_code(tmp_path):
    # QA: `engram chat --hatch` with no LLM said "hatching needs an LLM" and exited 0.
    done = run_chat(tmp_path, ["I am a pirate"], None, "--hatch")
    assert done.returncode == 4, done.stderr  # configuration (docs/cli.md)
    assert "error: hatching needs an LLM" in done.stderr and "[llm] in config.toml" in done.stderr
    assert done.stdout == ""  # refused before any line was read: nothing stored as a memory
    assert "pirate" not in run_cli(tmp_path, "list").stdout
    # Asked for in a scripted chat, /hatch and /start are failures of the script too; the chat goes on.
    for command in ("/hatch", "/start"):
        scripted = run_chat(tmp_path, [command, "My name is Ada"])
        assert scripted.returncode == 4, scripted.stderr
        assert "error: hatching needs an LLM" in scripted.stderr and "name is Ada" in scripted.stdout


def test_compact_in_chat_says_why_nothing_was_compacted(tmp_path):
    # Review: /compact printed a bare "nothing to compact" where `engram history compact` names the reason.
    done = run_chat(tmp_path, ["My name is Ada", "/compact"], {"ENGRAM_EMBEDDINGS__PROVIDER": "none"})
    assert done.returncode == 0, done.stderr
    assert "nothing to compact: only 2 messages, the last 10 are always kept" in done.stderr
    assert "compact" not in done.stdout  # a status line, where chat's others go: stdout is the replies alone
    scripted = run_chat(tmp_path, ["/compact"], {"ENGRAM_EMBEDDINGS__PROVIDER": "none"}, options=("--json",))
    assert scripted.returncode == 0, scripted.stderr
    shown = [json.loads(line) for line in scripted.stdout.splitlines()]
    assert shown == [{"command": "/compact", "compacted": False, "discarded": 0,
                      "notes": ["only 2 messages, the last 10 are always kept"]}]  # the same conversation, kept


def test_compact_in_chat_reports_on_stderr_leaving_stdout_to_the_replies(tmp_path):
    # Review: /compact's lines went to standard output, into the transcript, where chat's other
    # status lines (hatching, notes) go to standard error.
    lines = [f"My favourite number is {n}" for n in range(6)]  # 12 messages: past the 10 always kept
    done = run_chat(tmp_path, [*lines, "/compact", "/compact"], {"ENGRAM_EMBEDDINGS__PROVIDER": "none"})
    assert done.returncode == 0, done.stderr
    assert "compacted: 2 messages summarised" in done.stderr
    assert "nothing to compact: only 10 messages, the last 10 are always kept" in done.stderr
    assert "compact" not in done.stdout and len(done.stdout.splitlines()) == len(lines)  # one reply per message


def test_an_empty_message_option_exits_2_naming_it_and_sends_nothing(tmp_path):
    # `-m ''` (an unset variable in a script) was skipped as a blank typed line is: exit 0, nothing sent.
    home = tmp_path / "home"
    for args, named in ((("-m", ""), "--message[0]"), (("-m", "My name is Alice.", "-m", "  \n"), "--message[1]")):
        done = run_chat(home, [], None, *args)
        assert (done.returncode, done.stdout) == (2, ""), done.stderr
        assert done.stderr == f"error: {named}: must not be empty (allowed: 1-1000000 characters)\n"
    assert not home.exists()  # refused before anything opened: no MEMORY.md, no database, Alice not stored


def test_a_paid_provider_without_a_key_fails_with_the_configuration_code(tmp_path, monkeypatch):
    # Review: with llm.provider = "openai" and no key, each turn was sent to OpenAI and refused there
    # (offline: "cannot reach"). Refused now before any request, naming the setting and the variable.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    done = run_chat(tmp_path, [], {"ENGRAM_LLM__PROVIDER": "openai"}, "-m", "My name is Ada")
    assert done.returncode == 4, done.stderr  # configuration (docs/cli.md)
    assert "llm.api_key" in done.stderr and "OPENAI_API_KEY" in done.stderr and "llm.base_url" in done.stderr
    assert done.stdout == ""
