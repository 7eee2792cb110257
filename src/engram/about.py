"""engram as an installed package: its name on PyPI, its version, and how to install an extra.

The import name and the command are ``engram``; the distribution on PyPI is ``engram-recall``
(the name ``engram`` belongs to another project there). The version is written once, in
``pyproject.toml``, and read back here from the installed package's metadata.
"""

from __future__ import annotations

import functools

DISTRIBUTION = "engram-recall"


@functools.cache
def current_version() -> str:
    """The installed version (read on first use: ``engram --help`` need not open the metadata)."""
    # importlib.metadata is imported here, not above: it costs ~0.1 s that `engram --help` skips.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # a source tree on sys.path that was never installed
        return "0+unknown"


def __getattr__(name: str) -> str:
    if name == "__version__":
        return current_version()
    raise AttributeError(f"module 'engram.about' has no attribute {name!r}")


def install_hint(extra: str | None = None) -> str:
    """The pip command that installs engram, with ``extra`` when given: ``pip install 'engram-recall[local]'``."""
    return f"pip install '{DISTRIBUTION}[{extra}]'" if extra else f"pip install {DISTRIBUTION}"
