"""The key a new memory stored without one gets: the key proposed for it (``ids.key_from_content``)
when its scope holds no memory under it, else that key suffixed ``-N``; every backend asks this
one search, so the same memories get the same keys on each.

Templated content (imported chat turns, agents writing "User said that ...") proposes one key
thousands of times in a scope. Finding the lowest free suffix means reading every ``p-N`` key
stored, on every write: quadratic over such an import (on SQLite the 3,000th such write cost four
times the first). Instead the search looks keys up by exact value, in a few batches (one indexed
query each on SQL backends) whatever the number of suffixes stored:

1. ``p`` alone (most keys proposed are free).
2. ``p-2`` ... ``p-16``, and ``p-32``, ``p-64`` ... ``p-2**20`` in one batch: the lowest free one
   of ``p-2`` ... ``p-16`` wins, as it always did for a short run.
3. Else ``hi``, the lowest free one of the powers of two (further powers are looked up if all are
   taken), and ``lo``, the suffix before it in that batch (taken), bound a search: 15 suffixes
   spread between them are looked up, the first free one becomes ``hi`` and the one before it
   ``lo``, until they are adjacent: ``p-hi`` is free and ``p-(hi-1)`` is taken.

While no suffixed memory was deleted (nor a ``p-N`` key given by hand) the suffixes in use run
without a gap, and this is the lowest free one, one past the highest. After a delete it is a free
suffix next to a taken one: a gap among the first 16 is reused, a gap further up may be or may
not, but the same gap on every backend, as this search is the same everywhere.

Writers in one scope are serialised by each backend (a write transaction on SQLite, a lock per
scope on PostgreSQL, a lock in process) and keys are UNIQUE per scope, so two writers never get
the same suffix.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

# p, p-2 ... p-16: a short run of suffixes gets the lowest free one of these.
_FIRST = 16
# Powers of two looked up with them: 32 ... 2**20 (more are looked up when all those are taken).
_POWERS = 16
# Suffixes looked up per batch of the search between ``lo`` and ``hi``: it narrows the range 16-fold a batch.
_SPREAD = 15

Held = Callable[[Sequence[str]], set[str]]
"""Which of the given keys a memory in the scope holds (exact comparison)."""


def free_key(proposed: str, held: Held) -> str:
    """A key no memory of the scope holds: ``proposed`` itself, or ``proposed-N`` (see module docstring)."""

    def name(n: int) -> str:
        return proposed if n == 1 else f"{proposed}-{n}"

    if not held([proposed]):  # most keys proposed are free: one look-up
        return proposed
    first = list(range(2, _FIRST + 1))
    powers = [_FIRST * 2**i for i in range(1, _POWERS + 1)]
    taken = held([name(n) for n in first + powers])
    lowest = next((n for n in first if name(n) not in taken), None)
    if lowest is not None:
        return name(lowest)
    lo, hi = _FIRST, None
    while hi is None:
        for n in powers:
            if name(n) not in taken:
                hi = n
                break
            lo = n
        else:  # every power taken (keys given by hand can do that): the next powers
            powers = [lo * 2**i for i in range(1, _POWERS + 1)]
            taken = held([name(n) for n in powers])
    while hi - lo > 1:
        between = sorted({lo + (hi - lo) * j // (_SPREAD + 1) for j in range(1, _SPREAD + 1)} - {lo})
        taken = held([name(n) for n in between])
        for n in between:
            if name(n) not in taken:
                hi = n
                break
            lo = n
    return name(hi)
