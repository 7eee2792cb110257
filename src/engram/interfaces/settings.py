"""Settings of the servers (``engram serve`` and ``engram mcp``): ``[server]`` in the config file,
``ENGRAM_SERVER__*`` in the environment."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from engram.errors import ValidationError
from engram.model import make_scope
from engram.settings_section import SettingsSection


class ServerSettings(SettingsSection):
    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    # Largest request body the HTTP API accepts (imports included); larger ones get 413.
    max_body_bytes: int = Field(2_000_000, ge=1024)
    # Which MCP tool family to offer: ClawCode's (remember/recall/forget/link/get/list/update, the
    # default: one name per job), PtrClaw's (memory_store/memory_recall/memory_forget/memory_link), or both.
    mcp_tools: Literal["both", "clawcode", "ptrclaw"] = "clawcode"
    # Print a token for the default agent in the web page's address when `engram serve` starts.
    print_token: bool = True
    # An MCP session at `engram serve`'s /mcp that receives no request for this long is ended and
    # its state released (a client that is killed never ends its session; without a limit each one
    # would be kept until the server stops). 1800 s is the MCP SDK's advice; 0 keeps sessions forever.
    mcp_session_idle_s: float = Field(1800.0, ge=0.0)
    # The agent whose tokens read /metrics. Its figures are the whole server's (every agent's requests,
    # the store-wide memory count): a count is data too, so an agent's own token is refused them.
    metrics_agent: str = Field("metrics", min_length=1)
    # How often `engram serve` checks for due maintenance jobs (lifecycle.schedule); 0 disables.
    # Finite (as every section's floats, ``SettingsSection``): it is a wait's timeout, and threading
    # refuses an infinite one (0 is "never").
    maintenance_interval_s: float = Field(600.0, ge=0.0)

    @field_validator("metrics_agent")
    @classmethod
    def _agent_name(cls, value: str) -> str:
        # Checked here, not when /metrics is asked: a name no token can be made for would leave
        # /metrics refusing every token, its 403 suggesting a `token create` that fails too.
        try:
            make_scope(value, None)
        except ValidationError as exc:
            raise ValueError(f"{value!r} is not an agent name (allowed: {exc.allowed})") from None
        return value
