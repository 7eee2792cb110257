"""Backups, restore, integrity checks and VACUUM for the SQLite store.

A backup uses SQLite's online backup API in one step from a read transaction: in WAL mode that
sees one consistent snapshot (every transaction committed before it began) while other
processes keep writing. The copy is written under a temporary name, checked with
``integrity_check`` and only then renamed into place, so every ``*.db`` file in the backup folder
passed its check when it was taken; the newest one is "the last good backup". The newest ``keep``
backups are kept.

At start-up ``startup_check`` runs ``quick_check`` (or the full check) on the file before anything
writes to it; a damaged file raises ``IntegrityError`` naming the file, what SQLite found and the
last good backup, and nothing is changed. ``restore`` verifies the backup, sets a damaged live
file aside (``<name>.damaged-<time>``) rather than overwriting it, and copies the backup in through
the same backup API, so a healthy live database is replaced page by page under SQLite's locks.
An encrypted database's backups are encrypted with the same key.

A restore replaces the whole file, so run in one agent's view (``agent``) it refuses a backup that
holds another agent's memories, conversations or API tokens, and a live database that does
(``refuse_other_agents``): with ``per_agent_databases`` bob's restore of alice's backup would
otherwise put alice's memories in bob's database, and in a shared file it would put back (or
wipe) every other agent's. The operator's run (no agent chosen) restores any backup.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engram.db.sqlite import Database, connect, db_errors, is_plain, key_error
from engram.errors import ConfigError, EncryptionKeyError, IntegrityError, NotFoundError, StorageError, ValidationError
from engram.history.base import DEFAULT_AGENT
from engram.lifecycle import clean_close

if TYPE_CHECKING:
    from engram.engine import Engram

log = logging.getLogger("engram.lifecycle.backup")

_NAME = re.compile(r"^(?P<stem>.+)-(?P<stamp>\d{8}T\d{6}\d{6}Z)-(?P<reason>[a-z0-9-]+)\.db$")


@dataclass(frozen=True, slots=True)
class BackupInfo:
    path: Path
    created_at: float
    reason: str
    size_bytes: int


def check_file(path: Path, *, key: str | None = None, full: bool = False) -> str:
    """``ok`` or what SQLite found wrong with the database at ``path`` (read-only use)."""
    try:
        conn = connect(str(path), key=key)
    except EncryptionKeyError:
        # SQLite's own words: whether the key or the file is at fault is for the caller to weigh
        # (``Backups.failure`` asks the backups).
        return "file is not a database"
    except IntegrityError as exc:
        return str(exc)
    try:
        rows = conn.execute("PRAGMA integrity_check" if full else "PRAGMA quick_check").fetchall()
        return "\n".join(str(row[0]) for row in rows)
    except db_errors() as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        conn.close()


# What each table holds of an agent's, for a restore in one agent's view (``agents_in``).
_OWNED = (("memories", "memories"), ("history_messages", "conversations"), ("history_summaries", "conversations"),
          ("api_tokens", "API tokens"))


def agents_in(path: Path, *, key: str | None = None) -> dict[str, set[str]]:
    """The agents whose memories, conversations or API tokens the database at ``path`` holds,
    each with which of these (read-only; global memories are nobody's). Raises ``StorageError``,
    ``IntegrityError`` or ``EncryptionKeyError`` for a file that does not open."""
    conn = connect(str(path), key=key, readonly=True)
    found: dict[str, set[str]] = {}
    try:
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for table, what in _OWNED:
            if table not in tables:
                continue
            if "agent" in {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}:
                names = [name for (name,) in conn.execute(f"SELECT DISTINCT agent FROM {table} WHERE agent != ''")]
            else:  # conversations from before migration 0007, which gives them to the default agent
                names = [DEFAULT_AGENT] if conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() else []
            for name in names:
                found.setdefault(name, set()).add(what)
    except db_errors() as exc:
        raise StorageError(f"cannot read whose data {path} holds: {exc}") from exc
    finally:
        conn.close()
    return found


def _whose(held: dict[str, set[str]]) -> str:
    """``held`` (``agents_in``) in words: ``alice (conversations, memories), bob (memories)``."""
    return ", ".join(f"{agent} ({', '.join(sorted(what))})" for agent, what in sorted(held.items()))


def whose_backup(chosen: Path, folders: Mapping[str, Path], *, key: str | None = None) -> str:
    """With one database per agent (``per_agent_databases``), the agent whose database a backup
    restored by the operator replaces: the agent whose backups folder (of ``folders``, each
    agent's) holds it, else the one agent whose memories, conversations or API tokens it holds.
    The operator's run named no agent, and the configured one's database is no better guess: an
    operator restoring ``agents/bob/backups/...`` put bob's memories in the default agent's file.
    Raises ``ValidationError`` (field ``backup``) saying how to choose when neither tells one
    agent, and what ``agents_in`` raises for a file that does not open."""
    here = chosen.resolve().parent
    in_folder = [agent for agent, folder in folders.items() if folder.resolve() == here]
    if len(in_folder) == 1:
        return in_folder[0]
    held = agents_in(chosen, key=key)
    if len(held) == 1:
        return next(iter(held))
    where = ("it is in a backups folder shared by several agents" if in_folder
             else "it is in no agent's backups folder (agents/<agent>/backups/, or a subfolder of"
                                   " lifecycle.backup.folder named as the agent's folder is)")
    what = (f"it holds several agents' data, {_whose(held)} (an agent's database holds only that agent's)" if held
            else "it holds no agent's memories, conversations or API tokens")
    raise ValidationError(
        "backup", f"every agent has a database of its own here (per_agent_databases), and which one {chosen} replaces"
                  f" is not clear: {where}, and {what}; nothing was changed",
        "--agent NAME before the command (engram --agent NAME restore FILE) to restore it into that agent's database")


def _unopenable(verdict: str) -> bool:
    """SQLite's answer for a file it cannot read as a database at all (wrong key, or no database)."""
    return "not a database" in verdict


class Backups:
    """Backups of one SQLite database file in ``folder``, keeping the newest ``keep``."""

    def __init__(self, db_path: Path, folder: Path, *, keep: int = 7, key: str | None = None) -> None:
        self.db_path = Path(db_path)
        self.folder = Path(folder)
        self.keep = keep
        self.key = key
        # When this process last knew the live file to be sound (a check, or a clean-close stamp).
        self.verified_at: float | None = None

    # --- listing ---------------------------------------------------------------------------
    def list(self) -> list[BackupInfo]:
        """Backups of this database, newest first."""
        if not self.folder.is_dir():
            return []
        found = []
        for entry in self.folder.iterdir():
            match = _NAME.match(entry.name)
            if not match or match.group("stem") != self.db_path.stem:
                continue
            stamp = dt.datetime.strptime(match.group("stamp"), "%Y%m%dT%H%M%S%fZ").replace(tzinfo=dt.UTC)
            found.append(BackupInfo(entry, stamp.timestamp(), match.group("reason"), entry.stat().st_size))
        return sorted(found, key=lambda b: b.path.name, reverse=True)

    def warn_if_plain(self) -> list[Path]:
        """With a key set, log a warning naming the backups that are not encrypted (taken before
        the key was set: converting the database leaves them as they were) and return them. They
        hold the memories in clear, restore refuses them while the key is set, and pruning
        reaches them only after ``keep`` newer backups; engram does not delete them (they may be
        the only copy from before), so it says so at each start."""
        if not self.key:
            return []
        plain = [b.path for b in self.list() if is_plain(b.path)]
        if plain:
            log.warning("%d backup(s) in %s are not encrypted (taken before the encryption key was set) and hold the "
                        "memories in clear: %s; delete them (restore refuses them while the key is set)",
                        len(plain), self.folder, ", ".join(p.name for p in plain))
        return plain

    def last_good(self) -> BackupInfo | None:
        backups = self.list()
        return backups[0] if backups else None

    # --- taking ----------------------------------------------------------------------------
    def create(self, reason: str = "manual", *, source: Database | None = None, prune: bool = True) -> BackupInfo:
        """Take a backup now (writers may keep running); raises ``StorageError`` when it fails its check.

        ``source`` reuses an open ``Database`` (its lock is held only for the copy). ``prune=False``
        leaves the rotation to the caller (a restore must not lose the backup it is about to read)."""
        reason = re.sub(r"[^a-z0-9-]+", "-", reason.lower()).strip("-") or "manual"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"backup of {self.db_path} failed: cannot create {self.folder}: {exc}") from exc
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
        final = self.folder / f"{self.db_path.stem}-{stamp}-{reason}.db"
        tmp = final.with_name(final.name + ".partial")
        try:
            self._copy_to(tmp, source)
            verdict = check_file(tmp, key=self.key, full=True)
        except BaseException:
            # A partial copy is never a backup (nothing lists it, nothing prunes it): left behind by
            # a full disk it held space the next attempt needed, one more file each attempt.
            tmp.unlink(missing_ok=True)
            raise
        if verdict != "ok":
            tmp.unlink(missing_ok=True)
            raise StorageError(f"backup of {self.db_path} failed its integrity check: {verdict}")
        os.replace(tmp, final)
        if prune:
            self.prune()
        info = BackupInfo(final, dt.datetime.strptime(stamp, "%Y%m%dT%H%M%S%fZ").replace(tzinfo=dt.UTC).timestamp(),
                          reason, final.stat().st_size)
        log.info("backup %s (%s, %d bytes)", final, reason, info.size_bytes)
        return info

    def _copy_to(self, tmp: Path, source: Database | None) -> None:
        """Copy the live database into ``tmp`` as one self-contained file; ``StorageError`` naming
        both files when it fails (a full disk, a read-only folder), ``IntegrityError`` when the live
        file turns out damaged."""
        try:
            target = connect(str(tmp), key=self.key)
        except IntegrityError:
            raise
        except StorageError as exc:
            raise StorageError(f"backup of {self.db_path} into {self.folder} failed: {exc}") from exc
        try:
            if source is not None:
                with source.read() as conn:
                    conn.backup(target)
            else:
                src = connect(str(self.db_path), key=self.key)
                try:
                    src.backup(target)  # pages=-1: one step, one consistent snapshot
                finally:
                    src.close()
            target.execute("PRAGMA journal_mode = DELETE")  # a backup is one self-contained file
        except IntegrityError:
            raise
        except (StorageError, *db_errors()) as exc:
            # The copy's own failures surfaced as the live file's ("SQLite error on memory.db:
            # database or disk is full"), as if the store itself had failed.
            raise StorageError(f"backup of {self.db_path} into {self.folder} failed: {exc}") from exc
        finally:
            target.close()

    def prune(self) -> list[Path]:
        """Delete all but the newest ``keep`` backups; returns what was deleted."""
        removed = []
        for old in self.list()[self.keep:]:
            old.path.unlink(missing_ok=True)
            removed.append(old.path)
        return removed

    # --- checking and restoring --------------------------------------------------------------
    def startup_check(self, mode: str = "quick") -> None:
        """Raise ``IntegrityError`` (naming the last good backup) when the live file is damaged.

        Runs before anything writes to the file; a missing or empty file passes. ``quick`` trusts
        a recent clean-close stamp instead of reading every page (``lifecycle.clean_close``)."""
        if mode == "off":
            return
        if not self.db_path.exists() or self.db_path.stat().st_size == 0:
            self.verified_at = time.time()
            return
        if mode == "quick":
            self.verified_at = clean_close.verified_at(self.db_path)
            if self.verified_at is not None:
                return
        started = time.time()
        verdict = check_file(self.db_path, key=self.key, full=(mode == "full"))
        if verdict != "ok":
            raise self.failure(verdict)
        self.verified_at = started

    def closed_cleanly(self) -> None:
        """Called after the store's last connection closed: stamp the file if it was verified."""
        if self.verified_at is not None:
            clean_close.mark(self.db_path, self.verified_at)

    def failure(self, verdict: str) -> StorageError | ConfigError:
        """The error for a live file that failed its check. SQLite says "not a database" both for
        a damaged header and for an encryption key that does not fit; when the newest backup (made
        with the key engram had then) does not open with this key either, the key is what is wrong:
        a ``ConfigError`` that says so, never advice to restore, which would fail the same way."""
        if _unopenable(verdict):
            last = self.last_good()
            if last is None and self.key:  # nothing to weigh it against: the key, as opening the file says
                return key_error(str(self.db_path))
            if last is not None and _unopenable(check_file(last.path, key=self.key)):
                held = "a key is set" if self.key else "no key is set"
                return ConfigError(
                    f"database {self.db_path} does not open with the configured encryption key ({held}), and neither"
                    f" does its newest backup {last.path.name}: privacy.encryption_key (or encryption_key_file) is"
                    " wrong or missing; nothing was changed. Set the key the database was created with; a backup"
                    " opens only with that key too")
        return IntegrityError(self.damage_message(verdict))

    def damage_message(self, verdict: str) -> str:
        first = verdict.splitlines()[0] if verdict else "unknown problem"
        last = self.last_good()
        if last is None:
            advice = f"no backup was found in {self.folder}"
        else:
            when = dt.datetime.fromtimestamp(last.created_at).strftime("%Y-%m-%d %H:%M:%S")
            advice = f"the last good backup is {last.path} (taken {when}); restore it with `engram restore {last.path}`"
        if "not a database" in first:
            # SQLite says the same for a damaged header and for an encryption key that does not fit.
            cause = ("it is encrypted and privacy.encryption_key is missing or wrong, or it is damaged" if self.key is None
                     else "the encryption key is wrong for it, it is not encrypted, or it is damaged")
            first = f"{first}: {cause}"
        return f"database {self.db_path} failed its integrity check ({first}); nothing was changed; {advice}"

    def named(self, ref: str | Path, backups: list[BackupInfo] | None = None) -> list[BackupInfo]:
        """The backups of this database (``backups``: of ``list()``) that ``ref`` names: by its
        path, or by its file name when ``ref`` is not an absolute path. The one rule for a backup
        named in ``restore``, so the operator's run over several agents' backups (``agent_care.restore_choice``)
        finds what each agent's own finds."""
        candidate = Path(ref)
        return [info for info in (self.list() if backups is None else backups)
                if info.path == candidate or info.path.name == candidate.name and not candidate.is_absolute()]

    def resolve(self, ref: str | Path | None) -> BackupInfo:
        """A backup by path or file name; None means the newest. ``NotFoundError`` otherwise."""
        backups = self.list()
        if ref is None:
            if not backups:  # the folder is not a backup's name: say it holds none, and how to make one
                raise NotFoundError("backup", str(self.folder),
                                    message=f"no backups in {self.folder} to restore (make one with: engram backup)")
            return backups[0]
        named = self.named(ref, backups)
        if named:
            return named[0]
        candidate = Path(ref)
        if candidate.is_file():
            self.refuse_the_live_file(candidate)
            return BackupInfo(candidate, candidate.stat().st_mtime, "external", candidate.stat().st_size)
        raise NotFoundError("backup", str(ref))

    def refuse_the_live_file(self, path: Path) -> None:
        """A ``ValidationError`` naming ``backup`` when ``path`` is the live database itself (by
        any path to it, a link too): "restoring" it from itself backed it up, copied it onto
        itself and reported a restore that changed nothing."""
        try:
            same = self.db_path.exists() and os.path.samefile(path, self.db_path)
        except OSError:
            same = False
        if same:
            raise ValidationError("backup", f"{path} is the live database itself, not a backup; nothing was changed",
                                  f"a backup file (engram backup --list lists those in {self.folder})")

    def refuse_other_agents(self, chosen: BackupInfo, agent: str | None) -> None:
        """For a restore in ``agent``'s view (None: the operator's run, which may restore any
        backup): a ``ValidationError`` naming the other agents whose memories, conversations or
        API tokens the backup holds, or the live database does (the restore replaces the whole
        file, theirs too; a live file that does not open is moved aside, not replaced)."""
        if agent is None:
            return
        theirs = {name: what for name, what in agents_in(chosen.path, key=self.key).items() if name != agent}
        live: dict[str, set[str]] = {}
        if self.db_path.exists():
            try:
                live = {name: what for name, what in agents_in(self.db_path, key=self.key).items() if name != agent}
            except (StorageError, ConfigError):
                pass  # damaged or not openable: restore moves it aside, nothing of it is lost
        if not theirs and not live:
            return
        said = [f"{chosen.path} holds other agents' data: {_whose(theirs)}" if theirs else "",
                f"the database it would replace, {self.db_path}, holds other agents' data: {_whose(live)}" if live else ""]
        raise ValidationError(
            "backup", f"{'; '.join(w for w in said if w)}; agent {agent} never changes another agent's memories or"
                      " conversations, nothing was changed",
            f"a backup holding only agent {agent}'s (and global) data, into a database of agent {agent}'s alone;"
            " or restore as the operator (no --agent), with --all-agents when an agent is set in ENGRAM_AGENT or the"
            " config file")

    def restore(self, ref: str | Path | None = None, *, agent: str | None = None) -> BackupInfo:
        """Replace the live database with a backup (the newest by default); returns the backup used.

        The live database must not be open in this process. A healthy live file gets a
        ``pre-restore`` backup first; a damaged one is moved aside, never overwritten. ``agent``:
        the agent whose view restores it (None: the operator's run; see ``refuse_other_agents``).
        Raises ``NotFoundError``, ``ConfigError`` (the backup does not open with the configured
        key), ``IntegrityError`` (a damaged backup) or ``ValidationError`` (another agent's data
        in the backup or the live file, in an agent's view); nothing is changed then."""
        chosen = self.resolve(ref)
        verdict = check_file(chosen.path, key=self.key, full=True)
        if _unopenable(verdict):
            raise ConfigError(f"backup {chosen.path} does not open with the configured encryption key (wrong or missing"
                              " privacy.encryption_key), or it is not an engram database; nothing was changed")
        if verdict != "ok":
            raise IntegrityError(f"backup {chosen.path} is damaged ({verdict.splitlines()[0]}); nothing was changed")
        self.refuse_other_agents(chosen, agent)
        live_ok = self.db_path.exists() and check_file(self.db_path, key=self.key) == "ok"
        if self.db_path.exists() and not live_ok:
            aside = self.db_path.with_name(f"{self.db_path.name}.damaged-{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%SZ}")
            for suffix in ("", "-wal", "-shm"):
                part = Path(str(self.db_path) + suffix)
                if part.exists():
                    os.replace(part, Path(str(aside) + suffix))
            log.warning("moved damaged database aside to %s", aside)
        elif live_ok:
            # Rotation waits until the copy is in: with ``keep`` backups already there, pruning now
            # deleted the oldest, the very one chosen, and an empty database was restored in its place.
            self.create("pre-restore", prune=False)
        # The folder of an agent with no database yet (per_agent_databases), as opening one makes it.
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        source = connect(str(chosen.path), key=self.key, readonly=True)
        target = connect(str(self.db_path), key=self.key)
        try:
            source.backup(target)
            target.execute("PRAGMA journal_mode = WAL")
        except db_errors() as exc:
            raise StorageError(f"restore of {chosen.path} into {self.db_path} failed: {exc}") from exc
        finally:
            source.close()
            target.close()
        self.prune()
        return chosen


def vacuum(db: Database) -> tuple[int, int]:
    """VACUUM the database; returns its size in bytes before and after."""

    def size() -> int:
        return sum(os.path.getsize(p) for p in (db.path, db.path + "-wal") if os.path.exists(p))

    before = size()
    db.vacuum()
    with db.read() as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return before, size()


def vacuum_embedding_cache(engram: Engram) -> tuple[int, int] | None:
    """What ``engram vacuum`` and the scheduled ``vacuum`` job do beside the databases: the
    embedding cache file of ``engram``'s embedder (one per home, shared by every agent) rebuilt,
    its size in bytes before and after;
    None when the cache is off (no embedder, ``embeddings.cache = false``) or its file does not
    exist. Its freed pages (vectors evicted past ``cache_max_entries``, or dropped by an erase)
    are otherwise reused, never given back. Raises ``StorageError`` when the rebuild fails."""
    cache = getattr(engram.embedder, "cache", None)
    return None if cache is None else cache.vacuum()
