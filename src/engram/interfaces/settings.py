"""Settings of the servers (``engram serve`` and ``engram mcp``): ``[server]`` in the config file,
``ENGRAM_SERVER__*`` in the environment."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator
from pydantic import ValidationError as PydanticValidationError
from pydantic_core import PydanticCustomError

from engram.errors import ValidationError, refusal
from engram.model import make_scope
from engram.settings_section import SettingsSection


class ServerSettings(SettingsSection):
    host: str = "127.0.0.1"
    port: int = 8765
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
    # How old /metrics' memory count and storage size may be (``agent_databases.StoreWide``):
    # counting reads every row, about 0.2 s at a million memories, too much for every 15 s scrape;
    # ``engram_store_figures_age_seconds`` says how old the ones served are. 0 counts at every scrape.
    metrics_max_age_s: float = Field(60.0, ge=0.0)
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

    @field_validator("host")
    @classmethod
    def _some_address(cls, value: str) -> str:
        # "" is no address to the user, but to bind() it is every interface: a typo, or an unset
        # variable in a launch script, would have put the API on the network.
        if not value.strip():
            raise PydanticCustomError("blank", "{problem} (allowed: {allowed})", {
                "problem": "must not be empty",
                "allowed": "an address to listen on: 127.0.0.1 (this machine only), or 0.0.0.0 / :: for every interface"})
        return value

    @field_validator("port")
    @classmethod
    def _port_number(cls, value: int) -> int:
        # Checked here, not left to bind(): its OverflowError reached the user as an internal error.
        if not 0 <= value <= 65535:
            raise PydanticCustomError("out_of_range", "{problem} (allowed: {allowed})", {
                "problem": f"{value} is out of range", "allowed": "0 to 65535; 0 picks a free port"})
        return value

    def listening_on(self, host: str | None = None, port: int | None = None) -> ServerSettings:
        """This section with the address given at start (``engram serve --host/--port``; None: the
        configured one), checked as the configured one is. Raises ``ValidationError`` naming
        ``host`` or ``port``."""
        given = {name: value for name, value in (("host", host), ("port", port)) if value is not None}
        try:
            return self.model_validate({**self.model_dump(), **given})
        except PydanticValidationError as exc:
            raise refusal(exc.errors()[0]) from None
