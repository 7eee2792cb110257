"""One backend object per database: it opens the connection (or pool, or files) once and hands
out every store that lives there. See ``backends/base.py``."""

from engram.backends.base import Backend, FileCare

__all__ = ["Backend", "FileCare"]
