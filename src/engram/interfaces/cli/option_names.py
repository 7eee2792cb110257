"""An error on a value given to an option names the option as the user typed it, for every command.

The engine names its fields (``category``, ``limit``, ``where.priority.gte``); an option whose
name is its field's own word (``--category``, ``--limit``, ``--where``) fills it, so an error on
that field is re-raised naming ``--category``: what the user typed and ``--help`` shows, as HTTP
names its ``?tag=``. Nothing is listed for these: the command's own options say which they are, so
a new option is named without anyone remembering to. An option under another word (``--tag``
fills ``tags``) is mapped beside the call that passes it (``memory.FILTER_OPTIONS``) and renamed
there first; both go through ``present.wire_names``, the one place a door's names are applied. A
positional argument (``remember CONTENT``) keeps the field's word: there is no option to name.

Every ``typer.Typer`` of the CLI is made with ``cls=OptionNamingGroup``: the group whose command
ran is the one that knows which command that was once its error comes out.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup, TyperOption

from engram.errors import ValidationError


def same_word_options(command: TyperCommand | TyperGroup) -> dict[str, str]:
    """The engine field each of ``command``'s long options names by its own word: ``category`` for
    ``--category``, ``min_relevance`` for ``--min-relevance`` (``--no-...`` flags left out)."""
    return {opt[2:].replace("-", "_"): opt for param in command.params if isinstance(param, TyperOption)
            for opt in param.opts if opt.startswith("--")}


class OptionNamingGroup(TyperGroup):
    """A command group whose commands' ``ValidationError`` names the option typed (module doc)."""

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ValidationError as exc:
            # The command that ran: a subcommand, or this group's own callback (``engram conflicts``).
            command = self.get_command(ctx, ctx.invoked_subcommand) if ctx.invoked_subcommand else self
            if command is None or (command is not self and isinstance(command, TyperGroup)):
                raise  # a group below, which named it as its own command's
            from engram.interfaces import present

            named = present.wire_named(exc, same_word_options(command))
            if named is exc:
                raise
            raise named from exc
