"""Split a free-form markdown notes file into the facts it lists (for OpenClaw and Clawless).

People write ``MEMORY.md`` and daily notes as bullets and short paragraphs under headings. Each
bullet (with its indented continuation lines) and each paragraph becomes one ``Block``, carrying
its first line number and the headings above it; headings themselves, rules and blank lines are
structure, not facts. A fenced code block stays whole inside the block it belongs to. The lines of
a block are joined by the file's own line endings (a Windows file's ``\r\n`` kept).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?(.*)$")
_RULE = re.compile(r"^\s*(?:-{3,}|\*{3,}|_{3,})\s*$")


@dataclass(frozen=True, slots=True)
class Block:
    line: int
    text: str
    headings: tuple[str, ...]


def split_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    headings: list[tuple[int, str]] = []
    current: list[str] = []
    endings: list[str] = []  # the line ending after each line of ``current``, as the file has it
    start = 0
    fenced = False

    def flush() -> None:
        nonlocal current, endings
        body = "".join(part + ending for part, ending in zip(current, endings, strict=True)).strip()
        if body:
            blocks.append(Block(start, body, tuple(h for _, h in headings)))
        current, endings = [], []

    raw_lines = text.splitlines(keepends=True)
    lines = text.splitlines()  # (the same lines, without their endings)
    first = 0
    if lines and lines[0].strip() == "---":  # front matter: metadata, not notes
        for i in range(1, len(lines)):
            if lines[i].strip() == "---":
                first = i + 1
                break
    for n, line in enumerate(lines[first:], first + 1):
        ending = raw_lines[n - 1][len(line):]
        if line.strip().startswith("```"):
            if not current:
                start = n
            current.append(line)
            endings.append(ending)
            fenced = not fenced
            continue
        if fenced:
            current.append(line)
            endings.append(ending)
            continue
        heading = _HEADING.match(line)
        bullet = _BULLET.match(line)
        if heading:
            flush()
            level = len(heading.group(1))
            headings = [(lvl, h) for lvl, h in headings if lvl < level] + [(level, heading.group(2))]
        elif not line.strip() or _RULE.match(line):
            flush()
        elif bullet and not bullet.group(1):  # a top-level bullet starts a new fact
            flush()
            start = n
            current.append(bullet.group(2))
            endings.append(ending)
        else:
            if not current:
                start = n
            current.append(line.strip())
            endings.append(ending)
    flush()
    return blocks
