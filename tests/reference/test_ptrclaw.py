"""PtrClaw (reference 000) behaviours at the doors its users reach: ``engram chat`` as a real
process against a local server speaking the OpenAI wire format, on a real SQLite file."""

from __future__ import annotations

from tests.interfaces.test_chat_cli import run_chat, run_cli
from engram.testing.llm_servers import OpenAICompatServer, Reply

SOUL = '<soul>{"identity": "Ada, calm", "user": "Sam, a gardener", "philosophy": "Kindness"}</soul>'


def test_slash_start_hatches_on_first_interaction_only(tmp_path) -> None:
    # PtrClaw: "User triggers hatching via `/start` (first interaction) or `/hatch`."
    with OpenAICompatServer(Reply.say("Who should I be?"), Reply.say(f"Done! {SOUL}"), Reply.say("[]"),
                            Reply.say("Hello Sam")) as server:
        env = {"ENGRAM_LLM__PROVIDER": "openai", "ENGRAM_LLM__MODEL": "scripted", "ENGRAM_LLM__BASE_URL": server.base_url,
               "ENGRAM_LLM__API_KEY": "sk-local"}
        first = run_chat(tmp_path, ["/start", "Let's begin", "Be Ada, I am Sam the gardener"], env)
        assert first.returncode == 0, first.stderr
        assert "hatching: tell the agent who it should be." in first.stderr
        assert "hatched: identity stored." in first.stderr
        assert "<soul>" in server.requests[0].body["messages"][0]["content"]  # the hatch prompt
        assert "tools" not in server.requests[0].body
        again = run_chat(tmp_path, ["/start", "hi"], env)
        assert again.returncode == 0, again.stderr
        assert "already has an identity" in again.stderr and "Hello Sam" in again.stdout
        assert "## About your human\nSam, a gardener" in server.requests[-1].body["messages"][0]["content"]
    assert "Sam, a gardener" in run_cli(tmp_path, "get", "soul:user").stdout
