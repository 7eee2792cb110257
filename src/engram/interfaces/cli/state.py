"""What every CLI command shares: global options, the lazily opened engine, output mode."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from engram.interfaces.cli import start

if TYPE_CHECKING:  # imported when a command first needs them: `engram --help` never does
    from engram.auth import TokenStore
    from engram.config import Settings
    from engram.config_report import SettingsReport
    from engram.engine import Engram


@dataclass
class CliState:
    home: Path | None = None
    config: Path | None = None  # --config: the config file (before ENGRAM_CONFIG)
    agent: str | None = None
    session: str | None = None
    backend: str | None = None
    as_json: bool = False
    _settings: Settings | None = None
    _engram: Engram | None = field(default=None, repr=False)
    _reaching: Engram | None = field(default=None, repr=False)  # another agent's (``reaching_engram``)
    _preloading: threading.Thread | None = field(default=None, repr=False)

    def settings(self) -> Settings:
        if self._settings is None:
            with start.reading_settings():  # (importing engram.root is most of it)
                self._settings = self._load_settings()
        return self._settings

    def _load_settings(self) -> Settings:
        from engram.root import load_settings

        self._refuse_unknown_backend()
        with self._global_options_named():
            return load_settings(config=self.config, home=self.home, agent=self.agent,
                                 session=self.session, backend=self.backend,
                                 argument_names={"backend": "--backend"})

    def describe_settings(self) -> SettingsReport:
        """The settings this run would use, each with where it came from (``config.describe_settings``)."""
        with start.reading_settings():
            from engram.config import describe_settings

            self._refuse_unknown_backend()
            with self._global_options_named():
                return describe_settings(config=self.config, home=self.home, agent=self.agent, session=self.session,
                                         backend=self.backend)

    def _refuse_unknown_backend(self) -> None:
        """``--backend`` naming no backend: bad input on the option (exit 2), as any option's unknown
        choice; read with the settings it was a configuration error "from an argument" (exit 4)."""
        if self.backend is not None:
            from engram.interfaces import present
            from engram.registry import refuse_unknown

            with present.wire_names({"backend": "--backend"}):
                refuse_unknown("backend", self.backend)

    @contextmanager
    def _global_options_named(self) -> Iterator[None]:
        """An engine error on the agent or session this run was given re-raised naming ``--agent``
        or ``--session``, as typed (``present.wire_names``). Not done by ``option_names``: they are
        the root's options, and a command's own ``agent`` or ``session`` field (a ``--scope`` of
        ``session:a/b``) is no option of its. One set in the environment or config file keeps the
        field's word: the user typed no option."""
        from engram.interfaces import present

        given = {name: f"--{name}" for name, value in (("agent", self.agent), ("session", self.session))
                 if value is not None}
        with present.wire_names(given):
            yield

    def token_store(self) -> TokenStore:
        """The API token store of the ``engram token`` commands (``root.open_tokens``); the caller
        closes it. Opening it, as an engine, is still the run starting up."""
        with start.opening_engine():
            from engram.root import open_tokens

            return open_tokens(self.settings())

    def engram(self, *, warm: bool = False, mirror: bool = True) -> Engram:
        """The engine, opened on first use; ``warm``: the command will embed a query, so the model
        starts loading in the background before the store opens (``build_engram``); ``mirror``
        False: a command that changes no memory (recall) skips attaching the memory folder. After
        ``reading_engram`` gave an empty engine (an agent with no database yet), the agent's own
        opens now: a write through the empty one would fail."""
        if self._engram is not None:
            from engram.agent_databases import not_made_yet

            if not_made_yet(self._engram):
                self._engram.close()
                self._engram = None
        if self._engram is None:
            from engram.root import build_engram

            # Through the composition root, as every door: memory-folder mirror included.
            with start.opening_engine():  # reading the settings is starting up too
                settings = self.settings()
                with self._global_options_named():
                    self._engram = build_engram(settings, origin="cli", warm=warm, mirror=mirror)
        return self._engram

    def reading_engram(self, *, warm: bool = False, mirror: bool = True) -> Engram:
        """The engine of a command that only reads (``root.build_reading_engram``): ``engram``'s,
        or for an agent with no database yet (one per agent) an empty one that makes none."""
        if self._engram is None:
            from engram.root import build_reading_engram

            with self._global_options_named(), start.opening_engine():
                self._engram = build_reading_engram(self.settings(), origin="cli", warm=warm, mirror=mirror)
        return self._engram

    def reaching_engram(self, *, all_agents: bool = False, warm: bool = False, reading: bool = False) -> Engram:
        """The engine an operator's command reaches every agent's database from (``root.reach_agent``):
        the configured agent's (``engram``) unless the root names another, so the operator's run in
        a home with one database per agent creates none for an agent nobody used. ``warm``: as
        ``engram``'s (``engram serve`` embeds queries). ``reading``: the command only reads, so the
        configured agent's is ``reading_engram``'s (an agent with no database yet gets none made)."""
        if self._engram is not None:
            return self._engram
        if self._reaching is None:
            from engram.root import build_reaching_engram

            with start.opening_engine():
                with self._global_options_named():
                    self._reaching = build_reaching_engram(self.settings(), all_agents=all_agents, origin="cli",
                                                           warm=warm)
                if self._reaching is None:
                    # The configured agent's, opened within the same start: asking whose engine to
                    # open ended it, and a Ctrl-C while this one opened said nothing.
                    return self.reading_engram(warm=warm) if reading else self.engram(warm=warm)
        return self._reaching

    def refuse_all_agents_beside_a_view(self, all_agents: bool, does: str, one_view: str) -> None:
        """``--all-agents`` (``does``: what it covers) given with ``--agent`` or ``--session``,
        which chose one view (``one_view``: what that gives): a ValidationError naming it, as
        ``maintain`` and ``export`` refuse it alike."""
        chosen = [option for option, value in (("--agent", self.agent), ("--session", self.session)) if value is not None]
        if all_agents and chosen:
            from engram.errors import ValidationError

            raise ValidationError("--all-agents", f"{does}, but {' '.join(chosen)} chose one",
                                  f"--agent NAME ({one_view}) or --all-agents (the whole store), not both")

    def preload_model(self) -> None:
        """Start loading the embedding model in the background now, before the engine and what it
        imports (``root.preload_model``): a command sure to embed overlaps the two."""
        if self._preloading is None:
            from engram.root import preload_model

            self._preloading = preload_model(self.settings())

    def close(self) -> None:
        if self._preloading is not None:
            self._preloading.join()  # never exit with the model half loaded
            self._preloading = None
        for opened in (self._reaching, self._engram):
            if opened is None:
                continue
            wait = getattr(opened.embedder, "wait_warm_up", None)
            if wait is not None:
                wait()  # never exit with the model half loaded (a recall that did not embed)
            opened.close()
        self._reaching = self._engram = None


def state(ctx: typer.Context) -> CliState:
    obj: Any = ctx.find_root().obj
    assert isinstance(obj, CliState)
    return obj
