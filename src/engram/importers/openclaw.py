"""OpenClaw: an agent workspace's plain-markdown memory.

The workspace (default ``~/.openclaw/workspace``) holds ``MEMORY.md`` (OpenClaw reads a lowercase
``memory.md`` as the same file, and both when both exist), curated long-term memory,
and ``memory/YYYY-MM-DD.md`` (or ``memory/YYYY-MM-DD-<slug>.md``) daily logs; other markdown files
under ``memory/`` (topic notes), in its subfolders too, are read as OpenClaw's memory index reads
them (it walks ``memory/`` to any depth). Files where engram's memory folder keeps its own
(``global/<file>``, ``agents/<agent>/<file>``, ``sessions/<agent>/<session>/<file>``), at any depth,
are engram's: not read, and named in a warning (an engram home holds its memory folder as
``memory/``, beside the operator's ``MEMORY.md``, so it looks like a workspace). Each bullet or paragraph becomes one memory
(``markdown_blocks``): from ``MEMORY.md`` (or ``memory.md``) as ``core`` knowledge (durable, never
decays), from a daily log as an ``experience`` dated that day, from a topic file as knowledge. The headings above
a fact become tags, and the file and line are kept in ``metadata["openclaw"]``. HTML comments
(the hints in OpenClaw's templates) are left out, and counted in a warning. A heading naming the file
itself (``# MEMORY.md - Long-Term Memory``, a daily log's ``# 2026-03-02``) is its title, no tag
(``_titles``). The workspace's
bootstrap files (``USER.md``, ``SOUL.md``, ``IDENTITY.md``, ``AGENTS.md``, ...), OpenClaw's prompt
rather than its memory, are not read, and named in a warning. The source
identity is the file plus the fact's text, so a re-import skips what it already holds and picks
up what was appended since.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

from engram import jsondoc
from engram.files.layout import Layout
from engram.importers.base import Files, Plan, Record, fail, slug, tags
from engram.importers.markdown_blocks import split_blocks
from engram.model import Category
from engram.text import counted

KIND = "openclaw"
# Where an engram memory folder keeps its files (``files.layout``), never an OpenClaw workspace.
_ENGRAM_FOLDERS = ("global", "agents", "sessions")
_ENGRAM_SUFFIXES = (".md", ".yaml", ".yml")
_ENGRAM_LAYOUT = Layout()
_DAILY = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:-.+)?\.md$")
# The long-term memory file at the workspace's top, as OpenClaw's memory index looks for it: both
# spellings (on a case-sensitive file system a workspace may hold either, or both).
_LONG_TERM = ("MEMORY.md", "memory.md")
# The workspace's bootstrap files, which OpenClaw gives the model at each session start (its prompt:
# persona, the user's profile, operating rules), and which its memory index does not read. Not
# imported, as OpenClaw does not recall them, but named: USER.md holds who the user is, which a
# person moving over would otherwise lose without a word.
_BOOTSTRAP = ("AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "TOOLS.md", "HEARTBEAT.md", "BOOTSTRAP.md", "BOOT.md")


def looks_like(files: Files) -> bool:
    return any(name in files for name in _LONG_TERM) or any(
        _is_memory_file(rel) and _engram_folder(rel) is None and _DAILY.match(rel.rsplit("/", 1)[-1]) for rel in files)


def _is_memory_file(rel: str) -> bool:
    # At any depth: OpenClaw's memory index walks memory/ and its subfolders (memory/projects/...).
    return rel.startswith("memory/") and rel.endswith(".md")


def _engram_folder(rel: str) -> str | None:
    """The engram memory folder holding ``rel`` where engram keeps its files (``""`` for the
    workspace itself, ``memory/`` for an engram home's), or None for a file of no engram folder.
    At any depth: an engram home holds its memory folder as ``memory/``, which OpenClaw's index
    would read as its own notes, as it reads every subfolder of ``memory/``."""
    if not rel.endswith(_ENGRAM_SUFFIXES):
        return None
    parts = rel.split("/")
    for at, part in enumerate(parts[:-1]):
        if part in _ENGRAM_FOLDERS and _ENGRAM_LAYOUT.dir_of("/".join(parts[at:])) is not None:
            return "".join(f"{p}/" for p in parts[:at])
    return None


def read(files: Files) -> Plan:
    plan = Plan(KIND, "openclaw")
    by_folder: dict[str, list[str]] = {}
    for rel in sorted(files):
        folder = _engram_folder(rel)
        if folder is not None:
            by_folder.setdefault(folder, []).append(rel)
    engrams = {rel for rels in by_folder.values() for rel in rels}
    chosen = [name for name in _LONG_TERM if name in files] + sorted(
        r for r in files if _is_memory_file(r) and r not in engrams)
    if not chosen:
        raise fail("path", "no MEMORY.md or memory/*.md" + (f" ({_engram_files_note(by_folder)})" if by_folder else ""),
                   "an OpenClaw workspace folder (MEMORY.md, memory/)")
    if by_folder:
        # An engram memory folder with a MEMORY.md at its top, or an engram home (its memory folder
        # as memory/), is detected as a workspace: its own files are engram's, not OpenClaw's notes
        # (read as notes, another agent's memories joined the importing agent, their ids dropped).
        plan.warnings.append(_engram_files_note(by_folder))
    bootstrap = [name for name in _BOOTSTRAP if name in files]
    if bootstrap:
        plan.warnings.append(
            f"not read: {', '.join(bootstrap)}: OpenClaw's workspace files, given to its model as the prompt at each"
            " session start, not its memory (MEMORY.md and memory/); to keep what one says (USER.md: who you are;"
            " SOUL.md, IDENTITY.md: the agent's persona), store it with engram remember, as a core memory of the"
            " soul's keys soul:user, soul:identity, soul:philosophy (engram remember --key soul:user --category core TEXT)")
    for rel in chosen:
        daily = _DAILY.match(rel.rsplit("/", 1)[-1]) if rel not in _LONG_TERM else None
        day = _day(daily.group(1), rel) if daily else None
        split = split_blocks(files[rel])
        if split.comments:
            plan.warnings.append(_comments_left_out(rel, split.comments))
        for block in split.blocks:
            where = f"{rel} line {block.line}"
            plan.records.append(Record(
                # Known by its text with \n line endings, as imports that turned \r\n into \n made
                # it: a re-import of a Windows file finds the facts an earlier one stored.
                source_id=f"{rel}\0{_lf(block.text)}", where=where, content=block.text,
                category=Category.CORE if rel in _LONG_TERM else Category.KNOWLEDGE,
                type="experience" if day else "learned",
                tags=tags([slug(h)[:64] for h in block.headings if h.strip() and not _titles(h, rel, daily)]
                          + (["daily"] if day else []), where),
                metadata={"openclaw": {"file": rel, "line": block.line, "headings": list(block.headings)}},
                created_at=day,
                fields={"content": "", "key": ""},  # where names the file and line of the fact
            ))
    return plan


def _titles(heading: str, rel: str, daily: re.Match[str] | None) -> bool:
    """Whether ``heading`` is the file's own title, naming the file rather than a topic: OpenClaw's
    templates open ``MEMORY.md`` with ``# MEMORY.md - Long-Term Memory`` (``USER.md``, ``SOUL.md``
    likewise) and a daily log with its date (``# 2026-03-02``). As a tag it was the file's name on
    every fact of the file (``memory-md-long-term-memory``), a new tag per day for the logs, saying
    only which file the fact is in, which ``metadata["openclaw"]["file"]`` holds (and the daily
    log's date its ``created_at`` and ``daily`` tag). It stays in ``metadata["openclaw"]["headings"]``;
    a title naming a topic (``# Long-term memory``, ``# Acme`` atop ``acme.md``) is a tag still."""
    words = slug(heading)
    return words.startswith(slug(rel.rsplit("/", 1)[-1])) or (daily is not None and words.startswith(daily.group(1)))


def _engram_files_note(by_folder: dict[str, list[str]]) -> str:
    found = [rel for rels in by_folder.values() for rel in rels]
    shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
    where = " and ".join(folder or "the folder itself" for folder in by_folder)
    return (f"not read: {shown}: engram memory files (global/, agents/<agent>/, sessions/<agent>/<session>/), which"
            f" an OpenClaw workspace (MEMORY.md, memory/) does not hold; import {where} with --from folder")


def _comments_left_out(rel: str, lines: tuple[int, ...]) -> str:
    at = sorted(set(lines))
    shown = ", ".join(map(str, at[:10])) + (f" and {len(at) - 10} more" if len(at) > 10 else "")
    return (f"{rel}: {counted(len(lines), 'HTML comment')} ({'line' if len(at) == 1 else 'lines'} {shown}) not"
            " imported: a comment does not show in the note (a template's hint), so it is no memory")


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def _day(text: str, rel: str) -> float:
    try:
        return datetime.combine(date.fromisoformat(text), datetime.min.time(), UTC).timestamp()
    except ValueError:
        raise fail(rel, f"{jsondoc.shown(text)} is not a date", "memory/YYYY-MM-DD.md") from None
