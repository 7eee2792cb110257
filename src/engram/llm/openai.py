"""OpenAI-compatible chat completions (``POST {base_url}/chat/completions``).

The same wire format is served by OpenAI, Ollama (``http://localhost:11434/v1``), vLLM
(``http://localhost:8000/v1``) and llama.cpp's server (``http://localhost:8080/v1``); only
``base_url`` and whether a key is sent differ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engram import provider_keys
from engram.llm.base import ChatResponse, HttpChatProvider, HttpRequest, ToolSpec, Usage, encode_arguments
from engram.model import Message, Role, ToolCall


class OpenAIChat(HttpChatProvider):
    name = "openai"
    default_base_url = "https://api.openai.com/v1"
    key_variables = provider_keys.key_variables("openai")

    def _build(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        temperature: float | None,
        max_tokens: int | None,
        json_mode: bool,
    ) -> HttpRequest:
        body: dict[str, Any] = {"model": self.model, "messages": [_message(m) for m in messages]}
        if tools:
            body["tools"] = [
                {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": dict(t.parameters)}}
                for t in tools
            ]
        if temperature is not None:
            body["temperature"] = temperature
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        return HttpRequest("/chat/completions", body, headers)

    def _parse(self, payload: Mapping[str, Any]) -> ChatResponse:
        choice = payload["choices"][0]
        message = choice["message"]
        calls = tuple(
            ToolCall(
                id=call.get("id") or f"call_{i}",
                name=call["function"]["name"],
                arguments=encode_arguments(call["function"].get("arguments")),
            )
            for i, call in enumerate(message.get("tool_calls") or ())
        )
        usage = payload.get("usage") or {}
        return ChatResponse(
            text=message.get("content") or "",
            tool_calls=calls,
            usage=Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)),
            model=payload.get("model") or self.model,
            finish_reason=choice.get("finish_reason"),
        )


def _message(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role.value, "content": message.content}
    if message.tool_calls:
        out["content"] = message.content or None
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    if message.role is Role.TOOL:
        out["tool_call_id"] = message.tool_call_id
    return out


class OllamaChat(OpenAIChat):
    """Ollama through its OpenAI-compatible endpoint (no key needed)."""

    name = "ollama"
    default_base_url = "http://localhost:11434/v1"
    key_variables = ()


class VllmChat(OpenAIChat):
    name = "vllm"
    default_base_url = "http://localhost:8000/v1"
    key_variables = ()


class LlamaCppChat(OpenAIChat):
    name = "llamacpp"
    default_base_url = "http://localhost:8080/v1"
    key_variables = ()
