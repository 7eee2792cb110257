"""The ``engram`` command's entry point, and what a Ctrl-C before the command did anything says.

A command spends its first second or so importing the app, reading its options and settings and
opening the store; a Ctrl-C then did nothing the user could see, yet said nothing either (typer
turns an interrupt into a silent exit 130) or, while the app was still importing, printed
Python's traceback. This module imports nothing heavy, so ``main`` is running before the app is
imported, and it keeps the one mark of how far a run got: ``starting`` (importing, parsing, the
global options), ``command`` (the command's own code runs: from here an interrupt may have left
work done, and the command's own stop says so, or nothing is said), ``opening`` (the settings are
being read, or the command's first engine or the token store opened: the store, its migrations,
each in its own transaction), then ``working``. Stopped while ``starting`` or ``opening``, the run
says so in one line on standard error and exits 130, as any interrupted command does. Only the
app's process marks it (``CliState``, ``app.main``); a test that calls the app in-process marks it
too and is never told.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

STOPPED_EARLY = "interrupted before doing anything"

_phase = "starting"


def command_begins() -> None:
    """The global options are read: the command's own code runs next."""
    global _phase
    if _phase == "starting":
        _phase = "command"


@contextmanager
def opening_engine() -> Iterator[None]:
    """Around opening an engine: the command's first, opened before it did anything else (engines
    are opened when a command first needs one), is still the run starting up."""
    with _starting(then="working"):
        yield


@contextmanager
def reading_settings() -> Iterator[None]:
    """Around reading the settings, every command's start-up whether it opens an engine or not
    (``engram token``, ``engram mcp install``, ``engram config show`` open none, and were silent
    when stopped here). Read before the command's first engine, the run is back at ``command``
    after: opening that engine is starting up too."""
    with _starting(then="command"):
        yield


@contextmanager
def _starting(*, then: str) -> Iterator[None]:
    """A step of start-up, if the command's own code has done nothing else yet; ``then``: the
    phase after it."""
    global _phase
    if _phase != "command":
        yield
        return
    _phase = "opening"
    try:
        yield
    except KeyboardInterrupt:
        raise  # stopped while opening: still nothing done, as ``app.main`` will say
    except BaseException:
        _phase = "working"  # a command may carry on after an engine it could not open
        raise
    _phase = then


def nothing_done() -> bool:
    """Whether an interrupt now stops the run before its command did anything."""
    return _phase in ("starting", "opening")


def stopped_early() -> NoReturn:
    """Say that the run stopped before doing anything, and exit as interrupted (130)."""
    sys.stderr.write(f"{STOPPED_EARLY}\n")
    sys.stderr.flush()
    raise SystemExit(130)


def main() -> None:
    """The ``engram`` command: the app, imported here so that a Ctrl-C while it imports is answered."""
    try:
        from engram.interfaces.cli.app import main as run_app
    except KeyboardInterrupt:
        stopped_early()
    run_app()
