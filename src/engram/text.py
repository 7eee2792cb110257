"""Text handling shared by every backend: word tokens, stopwords, content fingerprints; and a
count with its noun (``counted``) for the messages engram writes.

Full-text queries are built from word tokens only, so quotes, ``*``, ``NEAR``, ``AND``, ``-``
or unbalanced parentheses in user text are searched as words and can never be a syntax error.
Stopwords are dropped because a ranked OR over them scores almost every row (see
PERFORMANCE.md: an 8-word question with stopwords costs ~40x more over FTS5).
"""

from __future__ import annotations

import datetime
import hashlib
import re

_WORD = re.compile(r"\w+", re.UNICODE)

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves s t don ll ve re d m o y
    also get got let lets us via im ive id youre hes shes thats theres whats""".split()
)

MAX_QUERY_TERMS = 24


def words(text: str) -> list[str]:
    """Lowercased word tokens (letters, digits, underscore; any script)."""
    return [w.lower() for w in _WORD.findall(text)]


def fold(text: str) -> str:
    """``text`` with its letters as SQLite FTS5's ``unicode61`` tokenizer compares them (its
    default ``remove_diacritics=1``): a Latin letter with one diacritic is its base letter
    (``é`` is ``e``, ``Ñ`` is ``n``), a combining diacritic alone is dropped (``e\\u0301`` is ``e``).
    Letters that are not a base letter plus one mark stay as they are, as FTS5 keeps them: ``æ``,
    ``ø``, ``ß``, ``ł``, and letters with two marks (Vietnamese ``ấ``). The PostgreSQL schema step
    ``0012_fold_diacritics`` holds the same table; ``tests/postgres/test_fold_diacritics.py`` pins
    both to SQLite's tokenizer, code point by code point."""
    return text.translate(_FOLD)


# Each base letter and the letters FTS5 folds to it (found by tokenizing every code point).
_FOLDED = {
    "a": "ÀÁÂÃÄÅàáâãäåĀāĂăĄąǍǎȀȁȂȃȦȧḀḁẠạẢảÅ",
    "b": "ḂḃḄḅḆḇ",
    "c": "ÇçĆćĈĉĊċČč",
    "d": "ĎďḊḋḌḍḎḏḐḑḒḓ",
    "e": "ÈÉÊËèéêëĒēĔĕĖėĘęĚěȄȅȆȇȨȩḘḙḚḛẸẹẺẻẼẽ",
    "f": "Ḟḟ",
    "g": "ĜĝĞğĠġĢģǦǧǴǵḠḡ",
    "h": "ĤĥȞȟḢḣḤḥḦḧḨḩḪḫẖ",
    "i": "ÌÍÎÏìíîïĨĩĪīĬĭĮįİǏǐȈȉȊȋḬḭỈỉỊị",
    "j": "Ĵĵǰ",
    "k": "ĶķǨǩḰḱḲḳḴḵ",
    "l": "ĹĺĻļĽľḶḷḺḻḼḽ",
    "m": "ḾḿṀṁṂṃ",
    "n": "ÑñŃńŅņŇňǸǹṄṅṆṇṈṉṊṋ",
    "o": "ÒÓÔÕÖòóôõöŌōŎŏŐőƠơǑǒǪǫȌȍȎȏȮȯỌọỎỏ",
    "p": "ṔṕṖṗ",
    "r": "ŔŕŖŗŘřȐȑȒȓṘṙṚṛṞṟ",
    "s": "ŚśŜŝŞşŠšſȘșṠṡṢṣẛ",
    "t": "ŢţŤťȚțṪṫṬṭṮṯṰṱẗ",
    "u": "ÙÚÛÜùúûüŨũŪūŬŭŮůŰűŲųƯưǓǔȔȕȖȗṲṳṴṵṶṷỤụỦủ",
    "v": "ṼṽṾṿ",
    "w": "ŴŵẀẁẂẃẄẅẆẇẈẉẘ",
    "x": "ẊẋẌẍ",
    "y": "ÝýÿŶŷŸȲȳẎẏẙỲỳỴỵỶỷỸỹ",
    "z": "ŹźŻżŽžẐẑẒẓẔẕ",
    # Greek letter variants unicode61 case-folds and str.lower() keeps
    "β": "ϐ", "ε": "ϵ", "θ": "ϑ", "ι": "\u1fbe", "κ": "ϰ",
    "μ": "µ", "π": "ϖ", "ρ": "ϱ", "σ": "ς", "φ": "ϕ",
}
_COMBINING_MARKS = (  # U+0300-0331, those FTS5 drops
    "\u0300\u0301\u0302\u0303\u0304\u0306\u0307\u0308\u0309\u030a\u030b\u030c\u030f"
    "\u0311\u031b\u0323\u0324\u0325\u0326\u0327\u0328\u032d\u032e\u0330\u0331"
)
_FOLD = str.maketrans({ch: base for base, chars in _FOLDED.items() for ch in chars}
                     | dict.fromkeys(_COMBINING_MARKS))


def search_words(text: str) -> list[str]:
    """The word tokens full text compares: ``words`` of the folded text."""
    return words(fold(text))


def query_terms(text: str, max_terms: int = MAX_QUERY_TERMS) -> list[str]:
    """The distinct searchable terms of a query: 2+ characters, stopwords dropped unless the
    query is nothing but stopwords, at most ``max_terms`` (a cap keeps ranked ORs cheap)."""
    tokens = [w for w in words(text) if len(w) >= 2]
    meaningful = [w for w in tokens if w not in STOPWORDS]
    chosen = meaningful or tokens
    return list(dict.fromkeys(chosen))[:max_terms]


def every_word(text: str) -> list[str]:
    """The distinct words of ``text``, each kept however short or common: the words a memory must
    all hold for forget-by-query to select it. ``query_terms`` drops one-letter words, stopwords
    beside others and words past its cap, which is right for ranking but made forgetting "plan b"
    forget "Plan A" too."""
    return list(dict.fromkeys(words(text)))


def holds_every_word(query: str, *texts: str) -> bool:
    """Whether ``texts`` together hold every word of ``query`` (``every_word``) as a whole word,
    compared as full text folds letters but never stemmed: forget-by-query's test on every
    backend. FTS5's porter and PostgreSQL's english stemmers match "organ" in "The organization
    moved" and "python" in "Pythonic", which a forget must not remove."""
    held: set[str] = set()
    for part in texts:
        held.update(search_words(part))
    return set(every_word(fold(query))) <= held


def single_char_terms(text: str, max_terms: int = MAX_QUERY_TERMS) -> list[str]:
    """The distinct one-character tokens of a query that has no longer ones (``recall b``).

    Full text skips them (one letter matches too much as a ranked word), so PtrClaw's rule applies:
    "falls back to LIKE when ... all tokens are single-char" - a substring match in key or content.
    Empty when the query has any term of 2+ characters."""
    tokens = words(text)
    if any(len(w) >= 2 for w in tokens):
        return []
    return list(dict.fromkeys(tokens))[:max_terms]


def time_words(timestamp: float) -> str:
    """A memory's time as the words full text indexes for it (``"May 8 2023"``, UTC): the same
    words the SQL backends generate in their migrations named ``time_words``."""
    moment = datetime.datetime.fromtimestamp(timestamp, datetime.UTC)
    return f"{_MONTHS[moment.month - 1]} {moment.day} {moment.year}"


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def normalise(content: str) -> str:
    return " ".join(content.split())


def content_hash(content: str) -> str:
    """Fingerprint for de-duplication: identical text up to whitespace."""
    return hashlib.sha256(normalise(content).encode("utf-8")).hexdigest()


# The ``[Memory context]`` block an agent prepends to a user message (``engram.agent.enrich``
# writes it): context the agent was shown, not what the user said. Whatever turns conversation
# text into memories or index entries strips it, so no block is learnt, nested or recalled again.
MEMORY_CONTEXT_OPEN, MEMORY_CONTEXT_CLOSE = "[Memory context]", "[/Memory context]"
# The block as the agent writes it: each marker alone on its line.
_MEMORY_CONTEXT_BLOCK = re.compile(
    r"^" + re.escape(MEMORY_CONTEXT_OPEN) + r"\n.*?^" + re.escape(MEMORY_CONTEXT_CLOSE) + r"$\n*",
    re.DOTALL | re.MULTILINE,
)


def strip_memory_context(text: str) -> str:
    """``text`` without any ``[Memory context]…[/Memory context]`` block."""
    return _MEMORY_CONTEXT_BLOCK.sub("", text).strip()


def counted(n: float, noun: str) -> str:
    """``n`` and ``noun``, in the plural unless ``n`` is 1: ``1 memory``, ``2 memories``, ``1.5 days``
    (a float as ``:g`` writes it). The plural of the nouns engram counts: ``-y`` after a consonant
    is ``-ies``, else ``-s``."""
    shown = f"{n:g}" if isinstance(n, float) else str(n)
    if n == 1:
        return f"{shown} {noun}"
    return f"{shown} {noun[:-1] + 'ies' if noun.endswith('y') and noun[-2:-1] not in 'aeiou' else noun + 's'}"
