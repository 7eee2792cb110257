"""Which chat model engram's agent (and LLM-backed maintenance) talks to.

``provider = "none"`` (the default) means no LLM: the agent still stores and recalls through the
rule-based extractor, and synthesis / LLM summaries are off.
"""

from __future__ import annotations

from pydantic import Field, SecretStr, field_validator

from engram.settings_section import SettingsSection


class LLMSettings(SettingsSection):
    # none | openai | anthropic | gemini | ollama | vllm | llamacpp (or a registered plug-in)
    provider: str = "none"
    model: str = ""
    # Empty uses the provider's default; set it to reach Ollama, vLLM or llama.cpp elsewhere.
    base_url: str = ""
    api_key: SecretStr | None = None
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(3, ge=0, le=10)
    backoff_s: float = Field(0.5, ge=0)
    max_tokens: int = Field(1024, ge=1)
    temperature: float | None = Field(None, ge=0.0, le=2.0)

    @field_validator("provider")
    @classmethod
    def _registered(cls, value: str) -> str:
        from engram import jsondoc
        from engram.registry import names  # what is registered, plug-ins included

        value = value.strip().lower()
        allowed = ["none", *names("llm")]
        if value not in (*allowed, ""):
            raise ValueError(f"unknown llm provider {jsondoc.shown(value)}; allowed: {', '.join(allowed)}")
        return value

    @property
    def enabled(self) -> bool:
        return self.provider not in ("", "none")
