"""Text written in the user's editor, for the CLI's ``--edit`` options (``conflicts resolve --take merge --edit``).

Why not ``typer.edit``: Typer 0.29 vendors click privately and no longer exposes ``edit``, and
``click`` is not a dependency of engram, so the editor is started here the way git starts it:
``$VISUAL``, else ``$EDITOR``, else ``vi``, on a temporary file, the command split as a shell would
(``shlex``: an ``EDITOR`` of ``code --wait`` runs ``code`` with ``--wait``), the file read back as
UTF-8 exactly as the editor left it. An editor that cannot be started or exits non-zero is a
``ValidationError`` on the option, so the command changes nothing and exits 2 as other usage
errors do (``app.exit_code``).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path

from engram.errors import ValidationError

DEFAULT_EDITOR = "vi"  # git's default when neither VISUAL nor EDITOR is set
_ALLOWED = "an editor command in $VISUAL or $EDITOR that exits 0 (e.g. EDITOR='nano' or 'code --wait'), or --content TEXT"


def editor_command() -> tuple[str, list[str]]:
    """The editor to run and where it came from: ``$VISUAL``, else ``$EDITOR``, else ``vi`` (an empty
    variable counts as unset, as in git). Raises ``ValidationError`` on ``--edit`` for a command
    ``shlex`` cannot split (an unclosed quote)."""
    for name in ("VISUAL", "EDITOR"):
        value = os.environ.get(name, "").strip()
        if value:
            try:
                words = shlex.split(value)
            except ValueError as exc:
                raise ValidationError("--edit", f"${name} {value!r} is not a command ({exc})", _ALLOWED) from None
            if words:
                return f"${name}", words
    return "the default editor", [DEFAULT_EDITOR]


def edit_text(text: str, *, option: str = "--edit", suffix: str = ".md") -> str:
    """``text`` as the user leaves it after editing it in their editor (module doc), read back byte
    for byte as UTF-8. Raises ``ValidationError`` on ``option`` when the editor cannot be started,
    exits non-zero, or leaves text that is not UTF-8; the temporary file is removed in every case."""
    source, command = editor_command()
    handle, name = tempfile.mkstemp(prefix="engram-edit-", suffix=suffix)
    path = Path(name)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(text.encode("utf-8"))
        shown = shlex.join(command)
        try:
            done = subprocess.run([*command, str(path)], check=False)
        except OSError as exc:  # not found, not executable
            unset = "; neither $VISUAL nor $EDITOR is set" if not source.startswith("$") else ""
            raise ValidationError(option, f"cannot start {source} {shown!r} ({exc.strerror or exc}){unset}",
                                  _ALLOWED) from None
        if done.returncode != 0:
            raise ValidationError(option, f"{source} {shown!r} exited with status {done.returncode}; nothing was changed",
                                  _ALLOWED)
        data = path.read_bytes()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValidationError(option, f"the edited text is not UTF-8 ({exc.reason} at byte {exc.start})",
                                  "UTF-8 text") from None
    finally:
        path.unlink(missing_ok=True)
