"""A model held on its first call, and what a test needs to see writes wait in the queue."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable

from engram.embed import EmbeddingIdentity
from engram.testing.provider_servers import bag_of_words_vector
from engram.writes import WriteQueue


class HeldModel:
    """A hashed bag-of-words provider whose first call waits for ``release``; it records each
    call's batch size, so a test sees which writes were embedded together."""

    def __init__(self) -> None:
        self.identity = EmbeddingIdentity("bow", "held", 16)
        self.release = threading.Event()
        self.first_call = threading.Event()
        self.batches: list[int] = []

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        self.batches.append(len(texts))
        if not self.first_call.is_set():
            self.first_call.set()
            assert self.release.wait(20), "the test never released the first batch"
        return [bag_of_words_vector(t, self.identity.dims) for t in texts]


def threads_waiting_to_write() -> int:
    """Threads in ``WriteQueue.write`` right now (each a caller waiting for its batch)."""
    code = WriteQueue.write.__code__
    count = 0
    for frame in sys._current_frames().values():
        while frame is not None:
            if frame.f_code is code:
                count += 1
                break
            frame = frame.f_back
    return count


def eventually(check: Callable[[], bool], timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.01)
    return check()
