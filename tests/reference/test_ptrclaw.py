"""PtrClaw (reference 000) behaviours at the doors its users reach: ``engram chat`` as a real
process against a local server speaking the OpenAI wire format, on a real SQLite file."""

from __future__ import annotations

from engram.testing.llm_servers import OpenAICompatServer, Reply
from tests.interfaces.test_chat_cli import run_chat, run_cli

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


def test_ptrclaw_config_json_memory_block_carries_over(tmp_path, monkeypatch) -> None:
    # PtrClaw: "All memory settings live under the `memory` key in `~/.ptrclaw/config.json`".
    import json

    from engram.config import load_settings

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"memory": {
        "backend": "json", "recall_limit": 7, "enrich_depth": 0, "hygiene_max_age": 86400, "recency_half_life": 3600,
        "embeddings": {"provider": "", "text_weight": 0.3, "vector_weight": 0.7}}}))
    monkeypatch.setenv("ENGRAM_HOME", str(home))
    settings = load_settings()
    assert settings.backend == "jsonfile" and settings.chat.recall_limit == 7 and settings.chat.enrich_depth == 0
    assert settings.lifecycle.hygiene.max_age_s == 86400 and settings.recall.recency_half_life_s == 3600
    assert settings.embeddings.provider == "none"
    assert (settings.recall.text_weight, settings.recall.vector_weight) == (0.3, 0.7)
    stats = run_cli(home, "--json", "stats")  # a real process reads the same file
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["backend"] == "jsonfile"
