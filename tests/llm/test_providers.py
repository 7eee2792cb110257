"""Each provider's real client code against a local server speaking its wire format."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from engram.errors import ConfigError, ProviderError
from engram.llm import LLMSettings, create_provider
from engram.llm.anthropic import AnthropicChat
from engram.llm.base import ToolSpec, decode_arguments, system_message, tool_message, user_message
from engram.llm.gemini import GeminiChat
from engram.llm.openai import OpenAIChat
from engram.llm.structured import complete_json, extract_json
from engram.testing.llm_servers import AnthropicServer, GeminiServer, OpenAICompatServer, Reply

WIRES = {
    "openai": (OpenAICompatServer, OpenAIChat),
    "anthropic": (AnthropicServer, AnthropicChat),
    "gemini": (GeminiServer, GeminiChat),
}

TOOL = ToolSpec("memory_store", "Store a memory", {"type": "object", "properties": {"key": {"type": "string"}}})


@pytest.fixture(params=sorted(WIRES))
def wire(request):
    server_cls, provider_cls = WIRES[request.param]
    sleeps: list[float] = []
    with server_cls() as server:
        provider = provider_cls("test-model", base_url=server.base_url, api_key="sk-test", timeout_s=2.0,
                                max_retries=2, backoff_s=0.01, sleep=sleeps.append)
        yield request.param, server, provider, sleeps
        provider.close()


def test_text_reply_and_usage(wire):
    name, server, provider, _ = wire
    server.enqueue(Reply.say("hello there", prompt_tokens=42, completion_tokens=7))
    response = provider.chat([system_message("be brief"), user_message("hi")], temperature=0.3)
    assert response.text == "hello there"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (42, 7)
    body = server.requests[0].body
    if name == "openai":
        assert body["messages"][0] == {"role": "system", "content": "be brief"}
        assert body["temperature"] == 0.3
        assert server.requests[0].headers["authorization"] == "Bearer sk-test"
    elif name == "anthropic":
        assert body["system"] == "be brief" and body["messages"] == [{"role": "user", "content": "hi"}]
        assert body["max_tokens"] > 0 and server.requests[0].headers["x-api-key"] == "sk-test"
    else:
        assert body["systemInstruction"] == {"parts": [{"text": "be brief"}]}
        assert body["generationConfig"]["temperature"] == 0.3
        assert server.requests[0].path == "/v1beta/models/test-model:generateContent"


def test_tool_call_round_trip(wire):
    name, server, provider, _ = wire
    server.enqueue(Reply.tool("memory_store", key="lang", content="Python"), Reply.say("stored"))
    first = provider.chat([user_message("remember python")], tools=[TOOL])
    calls = [(c.name, decode_arguments(c.arguments)) for c in first.tool_calls]
    assert calls == [("memory_store", {"key": "lang", "content": "Python"})]
    call = first.tool_calls[0]
    second = provider.chat(
        [user_message("remember python"), first.as_message(), tool_message(call, "Stored lang")], tools=[TOOL]
    )
    assert second.text == "stored"
    sent = server.requests[1].body
    if name == "openai":
        assert sent["tools"][0]["function"]["name"] == "memory_store"
        assert sent["messages"][1]["tool_calls"][0]["id"] == call.id
        assert sent["messages"][2] == {"role": "tool", "content": "Stored lang", "tool_call_id": call.id}
    elif name == "anthropic":
        assert sent["tools"][0]["input_schema"]["type"] == "object"
        assert sent["messages"][1]["content"][0]["type"] == "tool_use"
        assert sent["messages"][2] == {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call.id, "content": "Stored lang"}]}
    else:
        assert sent["tools"][0]["functionDeclarations"][0]["name"] == "memory_store"
        assert sent["contents"][1]["role"] == "model"
        assert sent["contents"][2]["parts"][0]["functionResponse"]["name"] == "memory_store"


def test_tool_call_arguments_keep_the_models_order_and_characters(wire):
    name, server, provider, _ = wire
    server.enqueue(Reply.tool("memory_store", key="Zürich", content="café"))
    arguments = provider.chat([user_message("remember")], tools=[TOOL]).tool_calls[0].arguments
    assert list(json.loads(arguments)) == ["key", "content"]  # as the model wrote them, not sorted
    if name != "openai":  # OpenAI sends the text itself, kept as sent; the others send an object
        assert arguments == '{"key": "Zürich", "content": "café"}'


def test_429_is_retried_honouring_retry_after(wire):
    _, server, provider, sleeps = wire
    server.enqueue(Reply.rate_limited(retry_after=0.25), Reply.fail(503), Reply.say("finally"))
    assert provider.chat([user_message("hi")]).text == "finally"
    assert len(server.requests) == 3
    assert sleeps[0] == 0.25 and len(sleeps) == 2


def test_retries_exhausted_raise_provider_error(wire):
    _, server, provider, _ = wire
    server.enqueue(*[Reply.rate_limited(0)] * 3)
    with pytest.raises(ProviderError, match="429.*gave up after 3 attempts"):
        provider.chat([user_message("hi")])


def test_retries_exhausted_without_retries_says_one_attempt():
    with OpenAICompatServer() as server:
        server.enqueue(Reply.fail(503))
        provider = OpenAIChat("m", base_url=server.base_url, max_retries=0, sleep=lambda s: None)
        with pytest.raises(ProviderError, match=r"503.*\(gave up after 1 attempt\)$"):
            provider.chat([user_message("hi")])
        assert len(server.requests) == 1
        provider.close()


def test_client_error_is_not_retried(wire):
    _, server, provider, _ = wire
    server.enqueue(Reply.fail(401, "bad key"), Reply.say("never"))
    with pytest.raises(ProviderError, match="401.*bad key"):
        provider.chat([user_message("hi")])
    assert len(server.requests) == 1


def test_malformed_reply_is_a_provider_error(wire):
    _, server, provider, _ = wire
    server.enqueue(Reply(raw_body='{"unexpected": true}'))
    with pytest.raises(ProviderError, match="unexpected reply shape"):
        provider.chat([user_message("hi")])


def test_timeout_is_retried_then_reported():
    with OpenAICompatServer(Reply.stall(1.0), Reply.stall(1.0)) as server:
        provider = OpenAIChat("m", base_url=server.base_url, timeout_s=0.2, max_retries=1, sleep=lambda s: None)
        with pytest.raises(ProviderError, match="timed out"):
            provider.chat([user_message("hi")])
        assert len(server.requests) == 2


def test_unreachable_server_is_a_provider_error():
    with OpenAICompatServer() as server:
        url = server.base_url
    provider = OpenAIChat("m", base_url=url, max_retries=0)
    with pytest.raises(ProviderError, match="cannot reach"):
        provider.chat([user_message("hi")])


class Note(BaseModel):
    key: str
    content: str


def test_structured_output_repairs_once(wire):
    _, server, provider, _ = wire
    server.enqueue(Reply.say('Sure! ```json\n[{"key": "a"}]\n```'), Reply.say('[{"key": "a", "content": "A"}]'))
    notes = complete_json(provider, [user_message("notes please")], list[Note])
    assert notes == [Note(key="a", content="A")]
    repair = server.requests[1].body
    assert "could not be used" in str(repair) and "content" in str(repair)


def test_structured_output_gives_up_after_one_repair():
    with OpenAICompatServer(Reply.say("no json here"), Reply.say("still none")) as server:
        provider = OpenAIChat("m", base_url=server.base_url)
        with pytest.raises(ProviderError, match="still invalid"):
            complete_json(provider, [user_message("x")], list[Note])
        assert server.requests[0].body["response_format"] == {"type": "json_object"}
        assert len(server.requests) == 2


def test_extract_json_finds_embedded_values():
    assert extract_json('prefix {"a": [1, 2]} suffix') == {"a": [1, 2]}
    assert extract_json("```\n[1]\n```") == [1]
    with pytest.raises(ValueError):
        extract_json("nothing {here")


def test_create_provider_from_settings():
    assert create_provider(LLMSettings()) is None
    with OpenAICompatServer(Reply.say("via ollama settings")) as server:
        provider = create_provider(LLMSettings(provider="ollama", model="llama3", base_url=server.base_url))
        assert provider is not None and provider.name == "ollama"
        assert provider.chat([user_message("hi")]).text == "via ollama settings"
        assert "authorization" not in server.requests[0].headers
    with pytest.raises(PydanticValidationError, match='unknown llm provider "nope"; allowed: none, anthropic'):
        LLMSettings(provider="nope", model="x")
    with pytest.raises(ConfigError, match="needs a model"):
        create_provider(LLMSettings(provider="vllm"))


def test_configured_temperature_applies_when_a_call_names_none() -> None:
    with OpenAICompatServer() as server:
        provider = create_provider(LLMSettings(provider="openai", model="m", base_url=server.base_url,
                                               api_key="sk-test", temperature=0.7))
        server.enqueue(Reply.say("one"), Reply.say("two"))
        provider.chat([user_message("hi")])
        provider.chat([user_message("hi")], temperature=0.1)
        provider.close()
    assert [r.body["temperature"] for r in server.requests] == [0.7, 0.1]


@pytest.mark.parametrize("name", sorted(WIRES))
def test_a_paid_provider_without_a_key_is_a_configuration_error_before_any_request(name, monkeypatch):
    """Without a key, every request to the provider's own service was sent and refused (offline:
    "cannot reach"). Now the provider is refused when made, naming the setting and the variable. The
    provider's service is played by a local server speaking its wire format, made its default
    ``base_url``, so a request sent would be seen there."""
    server_cls, provider_cls = WIRES[name]
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "ENGRAM_LLM__API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    with server_cls(Reply.say("answered")) as server:
        monkeypatch.setattr(provider_cls, "default_base_url", server.base_url)
        for base_url in ("", server.base_url, server.base_url + "/"):  # left out, or the default spelled out
            with pytest.raises(ConfigError) as refused:
                provider = create_provider(LLMSettings(provider=name, model="m", base_url=base_url, max_retries=0))
                provider.chat([user_message("hi")])
            assert "llm.api_key" in str(refused.value) and provider_cls.key_variables
            assert all(variable in str(refused.value) for variable in provider_cls.key_variables)
        assert server.requests == []
        provider = create_provider(LLMSettings(provider=name, model="m", api_key="sk-test", max_retries=0))
        assert provider.chat([user_message("hi")]).text == "answered" and len(server.requests) == 1
        provider.close()


def test_a_gemini_key_in_google_api_key_serves_chat_as_it_serves_embeddings(monkeypatch):
    # Two tables of the providers' key variables: the embedding one read GOOGLE_API_KEY for Gemini,
    # the chat one only GEMINI_API_KEY, so the same shell's key worked for one and was missing for the other.
    from engram.embed import create_provider as create_embedding_provider
    from engram.embed.settings import EmbeddingSettings, env_key_variable

    for variable in ("GEMINI_API_KEY", "ENGRAM_LLM__API_KEY", "ENGRAM_EMBEDDINGS__API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "google-key")
    assert env_key_variable("gemini") == "GOOGLE_API_KEY"
    with GeminiServer(Reply.say("answered")) as server:
        monkeypatch.setattr(GeminiChat, "default_base_url", server.base_url)
        provider = create_provider(LLMSettings(provider="gemini", model="m", max_retries=0))
        assert provider.chat([user_message("hi")]).text == "answered"
        assert server.requests[0].headers["x-goog-api-key"] == "google-key"
        provider.close()
    create_embedding_provider(EmbeddingSettings(provider="gemini"), "gemini")  # (refused without a key)


def test_an_openai_compatible_server_of_ones_own_needs_no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ENGRAM_LLM__API_KEY", raising=False)
    with OpenAICompatServer(Reply.say("local")) as server:
        provider = create_provider(LLMSettings(provider="openai", model="m", base_url=server.base_url))
        assert provider.chat([user_message("hi")]).text == "local"
        assert "authorization" not in server.requests[0].headers
        provider.close()
