"""Split a free-form markdown notes file into the facts it lists (for OpenClaw and Clawless).

People write ``MEMORY.md`` and daily notes as bullets and short paragraphs under headings. Each
bullet (with its indented continuation lines) and each paragraph becomes one ``Block``, carrying
its first line number and the headings above it; headings themselves, rules and blank lines are
structure, not facts. A fenced code block stays whole inside the block it belongs to. The lines of
a block are joined by the file's own line endings (a Windows file's ``\r\n`` kept).

HTML comments (``<!-- Who are you working with? -->``, the hints in OpenClaw's templates) are not
facts: they do not show in the rendered note and are nothing the user told the agent. A comment is
left out of the text it sits in (a line that held only comments separates blocks, as the HTML block
it starts does in CommonMark); one inside a fenced code block or a code span is code, kept as it is.
The line of each comment left out is counted in ``Split.comments``, for the importer to report.
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


@dataclass(frozen=True, slots=True)
class Split:
    blocks: list[Block]
    comments: tuple[int, ...]  # the line each HTML comment left out starts on


# A code span (a run of backticks to the next run of as many) or the opening of an HTML comment.
_SPAN_OR_COMMENT = re.compile(r"(`+)(?:.*?[^`])?\1(?!`)|<!--")
_COMMENT_END = "-->"


def _without_comments(line: str, inside: bool) -> tuple[str, bool, int]:
    """``line`` with the HTML comments in it taken out, whether a comment is still open at its end,
    and how many comments it opened. ``inside``: a comment opened on an earlier line is still open.
    The spaces a comment leaves at the start (after the indentation) or end of the line go with it;
    text between is kept as it is ("a <!-- x --> b" keeps both spaces)."""
    pieces: list[str] = []  # the text outside comments, in order
    continued = inside
    opened = 0
    at = 0
    while at <= len(line):
        if inside:
            end = line.find(_COMMENT_END, at)
            if end < 0:
                pieces.append("")  # the line ends in a comment
                break
            at, inside = end + len(_COMMENT_END), False
            continue
        found = _SPAN_OR_COMMENT.search(line, at)
        if not found:
            pieces.append(line[at:])
            break
        if found.group(0) == "<!--":
            pieces.append(line[at:found.start()])
            at, inside = found.end(), True
            opened += 1
        else:  # a code span: shown as it is, a "<!--" in it too
            pieces.append(line[at:found.end()])
            at = found.end()
    if not opened and not continued:  # no comment here (a "<!--" in a code span at most)
        return line, inside, 0
    if not pieces[0].strip():  # a comment opened the line: keep the indentation, not the spaces after it
        pieces = [pieces[0], "".join(pieces[1:]).lstrip()]
    if not pieces[-1].strip():  # a comment closed the line
        return "".join(pieces).rstrip(), inside, opened
    return "".join(pieces), inside, opened


def split_blocks(text: str) -> Split:
    blocks: list[Block] = []
    headings: list[tuple[int, str]] = []
    current: list[str] = []
    endings: list[str] = []  # the line ending after each line of ``current``, as the file has it
    start = 0
    fenced = False
    commented = False  # an HTML comment opened on an earlier line is still open
    comments: list[int] = []

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
        if fenced:
            current.append(line)
            endings.append(ending)
            fenced = not line.strip().startswith("```")
            continue
        if commented or "<!--" in line:
            line, commented, opened = _without_comments(line, commented)
            comments.extend([n] * opened)
            if not line.strip():  # only comments: nothing shown, and the paragraph before it ends
                flush()
                continue
        if line.strip().startswith("```"):
            if not current:
                start = n
            current.append(line)
            endings.append(ending)
            fenced = True
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
    return Split(blocks, tuple(comments))
