"""Google Gemini ``generateContent`` (``POST {base_url}/v1beta/models/{model}:generateContent``).

Roles are ``user`` and ``model``; the system prompt is ``systemInstruction``; tool calls are
``functionCall`` parts and their results ``functionResponse`` parts, matched by function name
(Gemini calls carry no ids, so ids are made up here and mapped back by name).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engram import provider_keys
from engram.llm.base import ChatResponse, HttpChatProvider, HttpRequest, ToolSpec, Usage, decode_arguments, encode_arguments
from engram.model import Message, Role, ToolCall


class GeminiChat(HttpChatProvider):
    name = "gemini"
    default_base_url = "https://generativelanguage.googleapis.com"
    key_variables = provider_keys.key_variables("gemini")

    def _build(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        temperature: float | None,
        max_tokens: int | None,
        json_mode: bool,
    ) -> HttpRequest:
        system = "\n\n".join(m.content for m in messages if m.role is Role.SYSTEM)
        body: dict[str, Any] = {"contents": _contents([m for m in messages if m.role is not Role.SYSTEM])}
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        if tools:
            declarations = [{"name": t.name, "description": t.description, "parameters": dict(t.parameters)} for t in tools]
            body["tools"] = [{"functionDeclarations": declarations}]
        config: dict[str, Any] = {}
        if temperature is not None:
            config["temperature"] = temperature
        if max_tokens is not None:
            config["maxOutputTokens"] = max_tokens
        if json_mode:
            config["responseMimeType"] = "application/json"
        if config:
            body["generationConfig"] = config
        headers = {"x-goog-api-key": self.api_key} if self.api_key else {}
        return HttpRequest(f"/v1beta/models/{self.model}:generateContent", body, headers)

    def _parse(self, payload: Mapping[str, Any]) -> ChatResponse:
        candidate = payload["candidates"][0]
        texts: list[str] = []
        calls: list[ToolCall] = []
        for i, part in enumerate((candidate.get("content") or {}).get("parts") or ()):
            if "text" in part:
                texts.append(part["text"])
            elif "functionCall" in part:
                call = part["functionCall"]
                call_id = call.get("id") or f"gemini-{i}-{call['name']}"
                calls.append(ToolCall(call_id, call["name"], encode_arguments(call.get("args"))))
        usage = payload.get("usageMetadata") or {}
        return ChatResponse(
            text="".join(texts),
            tool_calls=tuple(calls),
            usage=Usage(int(usage.get("promptTokenCount") or 0), int(usage.get("candidatesTokenCount") or 0)),
            model=payload.get("modelVersion") or self.model,
            finish_reason=candidate.get("finishReason"),
        )


def _contents(messages: Sequence[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}  # tool call id -> function name: Gemini matches results by name
    for message in messages:
        names.update({c.id: c.name for c in message.tool_calls})
        if message.role is Role.TOOL:
            name = names.get(message.tool_call_id or "", "tool")
            part = {"functionResponse": {"name": name, "response": {"content": message.content}}}
            if out and out[-1]["role"] == "user" and all("functionResponse" in p for p in out[-1]["parts"]):
                out[-1]["parts"].append(part)
            else:
                out.append({"role": "user", "parts": [part]})
            continue
        role = "model" if message.role is Role.ASSISTANT else "user"
        parts: list[dict[str, Any]] = [{"text": message.content}] if message.content else []
        parts += [{"functionCall": {"name": c.name, "args": decode_arguments(c.arguments)}} for c in message.tool_calls]
        out.append({"role": role, "parts": parts or [{"text": ""}]})
    return out
