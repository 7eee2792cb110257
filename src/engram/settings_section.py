"""The base of every settings section (``[recall]``, ``[lifecycle.backup]``, ...).

Pydantic takes ``nan`` and ``inf`` as floats: nan then failed the first bound it met
(``ENGRAM_RECALL__MIN_RELEVANCE=nan``: "Input should be greater than or equal to 0", as if it were
a number out of range) and inf passed every lower bound (a schedule's interval, an age) to reach a
timeout or a date later. No setting means anything by either, so every section refuses them
("Input should be a finite number", named with where it was set, as any refused setting). A
section added later inherits the rule (``tests/unit/test_config.py`` checks each one does).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

# A setting whose None means no limit marks its field ``json_schema_extra={"none_is": UNLIMITED}``:
# ``config show`` then prints the word a config file or variable takes for it (TOML has no null),
# not "none", which read as "not set" and could not be written back.
UNLIMITED = "unlimited"


class SettingsSection(BaseModel):
    """A settings section: pydantic's model, with nan and inf refused in its float fields."""

    model_config = ConfigDict(allow_inf_nan=False)
