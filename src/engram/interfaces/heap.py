"""What the garbage collector walks in a server process (``engram serve``, ``engram mcp``).

A full collection walks every object the collector tracks: ~85,000 after ``engram serve`` starts,
~120,000 in ``engram mcp`` once it has answered (the MCP SDK and its pydantic schemas, the
framework, the engine, the model's wrapper). Two moments pay for that walk with nothing to find.

While serving, a full pass comes round every few hundred stores as the heap grows, revisiting
objects that live as long as the process (``freeze_startup_heap``). At exit, the interpreter's
own shutdown runs full passes again, more than one as it takes the modules apart (perf showed
two stretches of collection): measured on ``engram mcp`` after its last answer, those passes were
0.3 s of an idle 2-core host and 0.9-1.7 s of the same host under load, the larger part of
the wait of a client that launches the server per task and waits for it to exit
(``freeze_for_exit``). ``gc.freeze()`` moves every tracked object into a generation no collection
walks; objects made later are collected as usual.

An object frozen is never freed by the collector, only by its reference count: one that later
becomes unreachable in a reference cycle stays (its finaliser never runs). So freezing waits until
that cannot matter: at start, once what start-up built (kept until exit) is built; at exit, once
everything engram opened is closed, its stores committed and their files shut by their owners
rather than left to a finaliser.
"""

from __future__ import annotations

import atexit
import gc

_frozen_at_exit = False


def freeze_startup_heap() -> None:
    """Put what the server built at start (framework, app, engine, the loaded model's wrapper:
    objects it keeps until it exits) beyond the reach of the garbage collector's full passes.

    A full pass comes round every few hundred stores as the heap grows: ~85,000 objects after
    start, ~36 ms of CPU each pass on a busy 2-core host, all of it revisiting objects that live as
    long as the process (~0.06-0.09 ms a store under 16 storing clients, and a stall of the event
    loop for every request in flight). Frozen, a pass walks only what was made since. Garbage at
    that moment is collected first: at start, nearly nothing becomes garbage later. Call once,
    after the start-up work (``engram serve`` does once the model is loaded), never from code that
    builds servers repeatedly in one process (tests), where it would keep every earlier server's
    objects alive."""
    gc.collect()
    gc.freeze()


def freeze_for_exit() -> None:
    """Freeze the heap as the interpreter exits, so that its shutdown's full collections (each a
    walk of every object) walk nothing of it; the process's memory goes back to the system
    whole. Call it once whatever the process opened is closed (``engram mcp`` does once the
    engine is): the garbage left then (the closed engine's reference cycles, the server's) holds
    nothing a finaliser still has to flush. Registered with ``atexit`` rather than done at once,
    so that the freeze happens as the process ends, after the command returns (a command run
    inside another process, as tests do, leaves that process's heap alone until it exits too);
    the other exit handlers (logging's flush, weakref finalisers) run after it as usual."""
    global _frozen_at_exit
    if not _frozen_at_exit:
        _frozen_at_exit = True
        atexit.register(gc.freeze)
