"""Path safety for the memory folder: nothing outside it is ever read or written.

Every path is relative to the folder's root and goes through ``resolve``: absolute paths, ``..``
and symlinks anywhere below the root are refused (a symlink could point anywhere, so none is
followed, even one that points inside). Files are opened with ``O_NOFOLLOW`` so a symlink swapped
in between the check and the open is refused too. Writes are atomic: a temporary file in the
same folder, flushed, then renamed over the target.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from engram.errors import ValidationError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class PathRefused(ValidationError):
    """A path that would leave the memory folder, a symlink, or an unreadable file."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__("path", f"{path}: {problem}", "UTF-8 files inside the memory folder, no symlinks or '..'")
        self.path = path


class Folder:
    """The memory folder. ``root`` is resolved once; relative paths use ``/`` on every platform.
    ``create``: make the root when it is missing; False for a caller that only reads (a missing
    folder then reads as an empty one, and a read leaves nothing on disk)."""

    def __init__(self, root: Path, *, max_file_bytes: int = 5_000_000, create: bool = True) -> None:
        if create:
            root.mkdir(parents=True, exist_ok=True)
        self.root = root.resolve()
        self.max_file_bytes = max_file_bytes

    def resolve(self, rel: str) -> Path:
        """The absolute path of ``rel`` inside the folder; raises ``PathRefused``."""
        pure = PurePosixPath(rel)
        if pure.is_absolute() or not pure.parts or any(p in ("..", ".", "") for p in pure.parts):
            raise PathRefused(rel, "not a plain relative path inside the memory folder")
        current = self.root
        for part in pure.parts:
            if "\x00" in part or "\\" in part:
                raise PathRefused(rel, "has characters not allowed in a file name")
            current = current / part
            if current.is_symlink():
                raise PathRefused(rel, "is or passes through a symlink; symlinks are never followed")
        return current

    def relative(self, path: Path) -> str:
        """``path`` (absolute, inside the folder) as a relative ``/`` path; raises ``PathRefused``."""
        try:
            rel = Path(os.path.abspath(path)).relative_to(self.root)
        except ValueError:
            raise PathRefused(str(path), "is outside the memory folder") from None
        return rel.as_posix()

    def exists(self, rel: str) -> bool:
        return self.resolve(rel).is_file()

    def read_text(self, rel: str, *, max_bytes: int | None = None) -> str:
        """The file's text, without a leading byte order mark; raises ``PathRefused`` for a symlink,
        a file over ``max_bytes`` (default ``max_file_bytes``: engram's own bookkeeping files pass
        their own bound) or one that is not UTF-8, and ``FileNotFoundError`` when it is gone."""
        limit = self.max_file_bytes if max_bytes is None else max_bytes
        path = self.resolve(rel)
        try:
            fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PathRefused(rel, "is a symlink; symlinks are never followed") from None
            raise
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise PathRefused(rel, "is not a regular file")
            if info.st_size > limit:
                raise PathRefused(rel, f"is {info.st_size} bytes; files over {limit} bytes are refused")
            data = handle.read(limit + 1)
        try:
            # "utf-8-sig": a byte order mark some editors put first (Windows Notepad) is a mark of
            # the encoding, not text; it is dropped when engram rewrites the file.
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise PathRefused(rel, f"is not UTF-8 (byte {exc.start})") from None

    def write_text(self, rel: str, text: str, *, durable: bool = True) -> os.stat_result:
        """Replace the file atomically (temporary file + rename); raises ``PathRefused``. Returns
        what the written file's ``stat`` says (taken before the rename, so a later change by
        someone else cannot pass for it). ``durable``: its text reaches the disk (fsync) before
        the rename, so a power loss leaves the old text or the new one, never an empty file; a
        caller whose file is rebuilt from the others after such a loss may skip that wait."""
        path = self.resolve(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.resolve(rel)  # the folders just made, or already there, must not be symlinks
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
                handle.flush()
                if durable:
                    os.fsync(handle.fileno())
                written = os.fstat(handle.fileno())
            os.replace(tmp, path)  # a rename replaces a symlink itself, never its target
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return written

    def append_text(self, rel: str, text: str, *, durable: bool = False) -> os.stat_result:
        """Add ``text`` at the end of the file (made when missing; never through a symlink), waiting
        for the disk only when ``durable``; returns the file's ``stat`` after the write. Not atomic
        as ``write_text`` is: a crash may leave part of it, which a reader must tell from a whole one."""
        with self._open_append(rel, os.O_CREAT) as fd:
            _write_all(fd, text)
            if durable:
                os.fsync(fd)
            return os.fstat(fd)

    def append_to(self, rel: str, text: str, expected: tuple[int, int, int]) -> os.stat_result | None:
        """Add ``text`` at the end of the file when it is still the one ``expected`` describes
        (inode, size, modification time), and wait for the disk; returns the file's ``stat`` after
        it, or None, writing nothing, when the file is another (changed, replaced, gone). A write
        that fails part-way is cut back off. A crash may still leave part of it: the sync state
        records where the file ended first (``state.intend_appends``) and the next pass cuts a
        partial end off (``undo_append``)."""
        try:
            opened = self._open_append(rel, 0)
        except FileNotFoundError:
            return None
        with opened as fd:
            before = os.fstat(fd)
            if (before.st_ino, before.st_size, before.st_mtime_ns) != expected:
                return None
            try:
                _write_all(fd, text)
                os.fsync(fd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, before.st_size)
                raise
            return os.fstat(fd)

    def undo_append(self, rel: str, size: int, added: int, before: str, after: str) -> bool:
        """Cut the file back to its first ``size`` bytes when it is what an append of ``added``
        bytes cut short left after text of hash ``before`` (``text_hash``); whether it did. A
        whole append (the text of hash ``after``) stays, and a file edited since (its start
        changed, or more added after) is left as it is."""
        try:
            opened = self._open_append(rel, 0)
        except FileNotFoundError:
            return False
        with opened as fd:
            length = os.fstat(fd).st_size
            if not size < length <= size + added:
                return False
            data = os.pread(fd, length, 0)
            if (length == size + added and _bytes_hash(data) == after) or _bytes_hash(data[:size]) != before:
                return False
            os.ftruncate(fd, size)
            os.fsync(fd)
            return True

    @contextlib.contextmanager
    def _open_append(self, rel: str, flags: int) -> Iterator[int]:
        path = self.resolve(rel)
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | flags | _NOFOLLOW, 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PathRefused(rel, "is a symlink; symlinks are never followed") from None
            raise
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise PathRefused(rel, "is not a regular file")
            yield fd
        finally:
            os.close(fd)

    def remove(self, rel: str) -> bool:
        """Delete the file if it is there; returns whether it was."""
        path = self.resolve(rel)
        try:
            path.unlink()
            return True
        except FileNotFoundError:
            return False

    def walk(self, rel_dir: str = "") -> Iterator[tuple[str, bool]]:
        """Every file below ``rel_dir`` as ``(relative path, is_symlink)``, sorted; symlinked
        folders are reported as symlinks and never entered; dot-files are skipped."""
        start = self.resolve(rel_dir) if rel_dir else self.root
        if not start.is_dir():
            return
        stack = [start]
        found: list[tuple[str, bool]] = []
        while stack:
            folder = stack.pop()
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name.startswith("."):
                        continue
                    rel = self.relative(Path(entry.path))
                    if entry.is_symlink():
                        found.append((rel, True))
                    elif entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    elif entry.is_file(follow_symlinks=False):
                        found.append((rel, False))
        yield from sorted(found)


def _write_all(fd: int, text: str) -> None:
    data = memoryview(text.encode("utf-8"))
    while data:
        data = data[os.write(fd, data):]


def _bytes_hash(data: bytes) -> str | None:
    """``text_hash`` of UTF-8 ``data``; None when it is not UTF-8 (a write cut inside a character)."""
    try:
        return text_hash(data.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def text_hash(text: str) -> str:
    """A short content hash used by the sync state."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


class RunningHash:
    """``text_hash`` of a text that grows at its end, kept so the grown text's hash costs what was
    added, not the whole text again (~1 ms a store into a file of 5,000 entries)."""

    def __init__(self, text: str) -> None:
        self._sha = hashlib.sha256(text.encode("utf-8"))

    def grown(self, tail: str) -> RunningHash:
        """The hash of the text followed by ``tail`` (this one is left as it is)."""
        grown = RunningHash("")
        grown._sha = self._sha.copy()
        grown._sha.update(tail.encode("utf-8"))
        return grown

    @property
    def digest(self) -> str:
        return self._sha.hexdigest()[:20]
