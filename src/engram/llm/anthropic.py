"""Anthropic Messages API (``POST {base_url}/v1/messages``).

Differences from the OpenAI shape that matter here: the system prompt is a top-level field,
``max_tokens`` is required, tool calls are ``tool_use`` content blocks and their results are
``tool_result`` blocks inside a *user* message (consecutive results share one message), and
there is no JSON mode - JSON is asked for in the prompt and validated by ``structured.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engram import provider_keys
from engram.llm.base import ChatResponse, HttpChatProvider, HttpRequest, ToolSpec, Usage, decode_arguments, encode_arguments
from engram.model import Message, Role, ToolCall

API_VERSION = "2023-06-01"


class AnthropicChat(HttpChatProvider):
    name = "anthropic"
    default_base_url = "https://api.anthropic.com"
    key_variables = provider_keys.key_variables("anthropic")

    def _build(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        temperature: float | None,
        max_tokens: int | None,
        json_mode: bool,
    ) -> HttpRequest:
        system = "\n\n".join(m.content for m in messages if m.role is Role.SYSTEM)
        if json_mode:
            system = (system + "\n\n" if system else "") + "Reply with a single JSON value and nothing else."
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens or self.default_max_tokens,
            "messages": _messages([m for m in messages if m.role is not Role.SYSTEM]),
        }
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [{"name": t.name, "description": t.description, "input_schema": dict(t.parameters)} for t in tools]
        if temperature is not None:
            body["temperature"] = temperature
        headers = {"anthropic-version": API_VERSION}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        return HttpRequest("/v1/messages", body, headers)

    def _parse(self, payload: Mapping[str, Any]) -> ChatResponse:
        texts: list[str] = []
        calls: list[ToolCall] = []
        for block in payload["content"]:
            if block.get("type") == "text":
                texts.append(block.get("text", ""))
            elif block.get("type") == "tool_use":
                calls.append(ToolCall(block["id"], block["name"], encode_arguments(block.get("input"))))
        usage = payload.get("usage") or {}
        return ChatResponse(
            text="".join(texts),
            tool_calls=tuple(calls),
            usage=Usage(int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)),
            model=payload.get("model") or self.model,
            finish_reason=payload.get("stop_reason"),
        )


def _messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role is Role.TOOL:
            block = {"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.content}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list) and _all_results(out[-1]):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
            continue
        if message.role is Role.ASSISTANT and message.tool_calls:
            blocks: list[dict[str, Any]] = [{"type": "text", "text": message.content}] if message.content else []
            blocks += [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": decode_arguments(c.arguments)}
                for c in message.tool_calls
            ]
            out.append({"role": "assistant", "content": blocks})
            continue
        out.append({"role": message.role.value, "content": message.content})
    return out


def _all_results(message: Mapping[str, Any]) -> bool:
    return all(block.get("type") == "tool_result" for block in message["content"])
