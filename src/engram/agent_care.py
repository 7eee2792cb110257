"""The care of a home's database files, per agent: which backups ``engram backup --list`` and
``restore`` look in, what ``engram backup`` takes, which database a restore replaces, and which
files ``engram vacuum`` rebuilds. With ``per_agent_databases`` each agent's database has its own
backups, and the operator's run (``root.operators_run``) reaches every agent's database, as
``maintain`` does; without it there is one database and its backups.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from engram.agent_databases import agents_with_databases, every_agents_engine
from engram.errors import ConfigError, ValidationError
from engram.root import agent_database_path, operators_run

if TYPE_CHECKING:
    from engram.backends.base import FileCare
    from engram.config import Settings
    from engram.engine import Engram
    from engram.lifecycle.backup import BackupInfo, Backups


def agent_backups(settings: Settings, *, all_agents: bool = False) -> list[tuple[str | None, Backups]]:
    """The backups ``engram backup --list`` and ``restore`` look in, each with the agent whose own
    database they are of (None: the one database of a home without ``per_agent_databases``). An
    agent's view: its database's. The operator's run (``operators_run``) in a home with one
    database per agent: every agent's with a database there, as ``maintain`` reaches them (the
    configured agent's while none has one). Raises ``ConfigError`` on a backend without backups."""
    from engram.backends.sqlite import backups_for

    if settings.backend != "sqlite":
        raise ConfigError(f"backups need the sqlite backend (this one is {settings.backend!r})")
    if not settings.per_agent_databases:
        return [(None, backups_for(settings, agent_database_path(settings)))]
    agents = agents_with_databases(settings) if operators_run(settings, all_agents=all_agents) else []
    return [(agent, backups_for(settings, agent_database_path(settings, agent), agent))
            for agent in agents or [settings.agent]]


def _cared_for(engram: Engram, settings: Settings, all_agents: bool) -> list[tuple[str | None, FileCare]]:
    """The database files a care command run from ``engram`` reaches, each with its agent (None:
    the one database of a home without ``per_agent_databases``): the operator's run in a home with
    one database per agent reaches every agent's (it reached the configured agent's alone).
    Raises ``ConfigError`` on a backend without a database file."""
    engines = every_agents_engine(engram) if operators_run(settings, all_agents=all_agents) else [engram]
    cared: list[tuple[str | None, FileCare]] = []
    for engine in engines:
        care = engine.backend.care
        if care is None:
            raise ConfigError(f"backups and vacuum need the sqlite backend (this one is {settings.backend!r})")
        cared.append(((engine.settings or settings).agent if settings.per_agent_databases else None, care))
    return cared


def take_backups(engram: Engram, settings: Settings, *, all_agents: bool = False) -> list[tuple[str | None, BackupInfo]]:
    """What ``engram backup`` takes: a backup of ``engram``'s database, each with the agent whose
    own database it is (None: the one database of a home without ``per_agent_databases``); the
    operator's run in a home with one database per agent backs up every agent's database there.
    Raises ``ConfigError`` on a backend without backups, and what a backup raises."""
    return [(agent, care.backup("manual")) for agent, care in _cared_for(engram, settings, all_agents)]


def vacuum_databases(engram: Engram, settings: Settings, *, all_agents: bool = False) -> list[tuple[str | None, int, int]]:
    """What ``engram vacuum`` does: each database file it reaches (as ``take_backups``) rebuilt,
    with its agent and its size in bytes before and after. Raises ``ConfigError`` on a backend
    without a database file, and what a vacuum raises."""
    return [(agent, *care.vacuum()) for agent, care in _cared_for(engram, settings, all_agents)]


def restore_choice(settings: Settings, ref: str | None, *, all_agents: bool = False) -> tuple[Backups, BackupInfo, str | None]:
    """What ``engram restore [REF]`` does: the backups of the database it replaces
    (``Backups.db_path``), the backup it restores (REF, a path or a listed name; None: the
    newest), and the agent whose view restores it (None: the operator's run; see
    ``Backups.refuse_other_agents``). The operator's run in a home with one database per agent
    restores into the database of the agent the backup is of (``backup.whose_backup``), and
    without REF needs one agent's database there. Raises ``ValidationError``, ``NotFoundError``,
    ``ConfigError``."""
    from engram.backends.sqlite import backups_for
    from engram.lifecycle.backup import whose_backup

    every = agent_backups(settings, all_agents=all_agents)
    operator = operators_run(settings, all_agents=all_agents)
    if not (operator and settings.per_agent_databases):
        return every[0][1], every[0][1].resolve(ref), None if operator else settings.agent
    if ref is None:
        if len(every) != 1:
            raise ValidationError("backup", f"every agent has a database of its own here ({', '.join(str(a) for a, _ in every)}),"
                                            " and no backup was named", "a backup FILE (engram backup --list lists each"
                                            " agent's), or --agent NAME before the command for that agent's newest")
        return every[0][1], every[0][1].resolve(None), None
    listed = [info for _, backups in every for info in backups.named(ref)]
    if len(listed) > 1:
        raise ValidationError("backup", f"{ref} names a backup of several agents: {', '.join(str(i.path) for i in listed)}",
                              "its path")
    chosen = listed[0] if listed else every[0][1].resolve(ref)  # an outside file, or NotFoundError
    folders = {agent: backups.folder for agent, backups in every if agent is not None}
    here = chosen.path.resolve().parent
    if (named := _whose_backups_folder(settings, here)) is not None:
        folders[named] = here
    agent = whose_backup(chosen.path, folders, key=settings.privacy.key())
    backups = (next((b for a, b in every if a == agent), None)
               or backups_for(settings, agent_database_path(settings, agent), agent))
    backups.refuse_the_live_file(chosen.path)  # an agent's own database named as the backup of it
    return backups, chosen, None


def _whose_backups_folder(settings: Settings, folder: Path) -> str | None:
    """The agent whose backups folder ``folder`` is by its name (``agents/<agent>/backups/``, or
    ``<lifecycle.backup.folder>/<agent>/``), the agent's name written ``disk_names.portable`` or
    as it is, as the memory folder reads an agent's folder (``agents/Claude/`` and
    ``agents/!claude/`` are both Claude's): a backup there is that agent's, its database gone or
    not. Else None (a restore then goes by the data the backup holds)."""
    from engram.backends.sqlite import backups_for
    from engram.disk_names import name_of, portable

    candidates = ((folder.name, lambda written: folder.parent / written),
                  (folder.parent.name, lambda written: folder.parent.parent / written / folder.name))
    for name, written_as in candidates:
        named = name_of(name)
        if named is None:
            continue
        try:
            own = backups_for(settings, settings.database_path(named), named).folder
            if own.resolve() == written_as(portable(named)).resolve():
                return named
        except ValidationError:  # a name too long once written portable: no agent's folder
            continue
    return None
