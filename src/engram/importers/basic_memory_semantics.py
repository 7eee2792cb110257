"""What basic-memory reads from a note's markdown: its observations, relations and wiki-links, by
the rules of its markdown-it plugins (observation and relation), so a folder imports as
basic-memory itself indexes it.

basic-memory parses the body with markdown-it (CommonMark) and looks at each paragraph and heading
(an ``inline`` token: its text without list markers, block-quote marks or the lines' indentation,
its lines joined by ``\\n``). Outside a block quote, one is an observation when it opens with
``[category]`` and a space, or when a word of it starts with ``#`` (a ``#tag``): a task
(``[ ]``, ``[x]``, ``[-]``), a lone markdown link and a lone wiki-link are not, and a clock time
(``[00:01:42]``, a transcript's) or a task-like mark (``[/]``, ``[?]``, ``[X]``) is no category. The
observation with a category is the rest of the first line after it; one without is the whole
block, every line of it. Inside a list item (block quote or not) a block is a relation when it
is ``type [[Target]]`` with an optional ``(context)`` and nothing else, the type one word or quoted
(``"depends on" [[Target]]``); otherwise each ``[[Target]]`` in it is a plain link. A note whose
front matter says ``bm_parse_semantics: false`` has none of these.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

_CATEGORY = re.compile(r"^\[([^\[\]()]+)\]\s+(.+)")
_EMPTY_CATEGORY = re.compile(r"^\[\]\s+(.+)")
_CLOCK = r"\d{1,3}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?"
_CLOCK_TIME = re.compile(rf"^{_CLOCK}(?:\s+-\s+{_CLOCK})?$")  # a transcript's time code (or span), no category
_TASKS = ("[ ]", "[x]", "[-]")
_LONE_LINK = re.compile(r"^\[.*?\]\(.*?\)$|^\[\[.*?\]\]$")  # a markdown link or wiki-link and nothing else
_WIKI = re.compile(r"\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]")


@dataclass(frozen=True, slots=True)
class Block:
    """A paragraph or heading as basic-memory reads it: its observation (``category``, None for
    none, and ``said``, the text after it with its tags and context), its relation (``type``,
    ``target``), its plain wiki-links' targets, and how many of its lines, from its first, are the
    observation's or relation's (0: it is prose)."""

    category: str | None = None
    said: str | None = None
    relation: tuple[str, str] | None = None
    links: tuple[str, ...] = ()
    read: int = 0


def read_blocks(text: str, semantics: bool = True) -> tuple[list[str], dict[int, Block]]:
    """``text``'s role on each of its markdown lines (``read``: an observation's or relation's,
    ``heading``: an ATX heading's that is neither, ``text``: a paragraph's or heading's,
    ``unread``: code, HTML, blank or a rule) and its blocks by first line. ``semantics`` False
    (``bm_parse_semantics: false``): every block is prose with no links."""
    tokens = _markdown().parse(text)
    roles = ["unread"] * (text.count("\n") + text.count("\r") + 1)  # at least one per markdown line
    blocks: dict[int, Block] = {}
    quoted, in_item = 0, False
    for at, token in enumerate(tokens):
        quoted += {"blockquote_open": 1, "blockquote_close": -1}.get(token.type, 0)
        # (As basic-memory tracks it: a nested item's end ends the outer one's too.)
        in_item = {"list_item_open": True, "list_item_close": False}.get(token.type, in_item)
        if token.type != "inline" or at == 0 or tokens[at - 1].map is None:
            continue
        opening = tokens[at - 1]
        begin, end = opening.map  # type: ignore[misc]
        block = _block(token.content, quoted=quoted > 0, in_item=in_item, heading=opening.type == "heading_open") \
            if semantics else Block()
        for line in range(begin, end):
            roles[line] = "read" if line < begin + block.read else "text"
        if opening.type == "heading_open" and opening.markup.startswith("#") and not block.read:
            roles[begin] = "heading"
        blocks[begin] = block
    return roles, blocks


def _block(content: str, *, quoted: bool, in_item: bool, heading: bool) -> Block:
    lines = content.count("\n") + 1
    category, said, read = None, None, 0
    observed = None if quoted else _observation(content)
    if observed is not None:
        category, said, through = observed
        read = lines if heading or category is None else content[:through].count("\n") + 1
    relation = _relation(content) if in_item else None
    if relation is not None:
        read = lines
    links = () if relation is not None else tuple(t.strip() for t in _WIKI.findall(content))
    return Block(category=category, said=said, relation=relation, links=links, read=read)


def _observation(content: str) -> tuple[str | None, str, int] | None:
    """The block's observation: its category (None: none), its text, and where in ``content`` that
    ends; None when it is no observation."""
    content = content.strip()
    if not content or content.startswith(_TASKS) or _LONE_LINK.match(content):
        return None
    category = _category(content)
    if category is not None:
        found = category.group(1).strip() or None, category.group(2).strip(), category.end()
    elif any(word.startswith("#") for word in content.split()):
        empty = _EMPTY_CATEGORY.match(content)
        found = None, (empty.group(1) if empty else content).strip(), len(content)
    else:
        return None
    said = found[1]
    # Nothing but a (context): basic-memory keeps no observation without text.
    return None if said.endswith(")") and "(" in said and not said[: said.rfind("(")].strip() else found


def _category(content: str) -> re.Match[str] | None:
    found = _CATEGORY.match(content)
    if found is None:
        return None
    category = found.group(1).strip()
    task_mark = len(category) == 1 and (category in "xX" or not category.isalnum())
    return None if task_mark or _CLOCK_TIME.match(category) else found


def _relation(content: str) -> tuple[str, str] | None:
    """``type [[Target]] (context)`` as basic-memory reads a relation: the type one word or quoted,
    nothing after the target but one parenthesised context; None otherwise."""
    content = content.strip()
    start = content.find("[[")
    end = content.find("]]", start + 2) if start != -1 else -1
    if end == -1:
        return None
    before = content[:start].strip()
    if before[:1] in ("'", '"') and before.endswith(before[0]):
        kind = before[1:-1].strip()
    else:
        kind = "" if any(c.isspace() for c in before) else before
    target = content[start + 2: end].strip()
    after = content[end + 2:].strip()
    if not kind or not target or (after and not _one_group(after)):
        return None
    return kind, target


def _one_group(text: str) -> bool:
    """Whether ``text`` is one balanced ``(...)`` and nothing more: ``(a) and [[B]] (c)`` is not
    (its second link would be lost)."""
    if not text.startswith("("):
        return False
    depth = 0
    for at, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return at == len(text) - 1
    return False


@cache
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt  # (Rich's markdown parser: installed with engram)

    return MarkdownIt("commonmark")  # basic-memory's parser, in its preset
