"""What the Letta reader's modules share: the kind they import as (its own module, so
``blocks`` and ``messages`` need not import the package that imports them)."""

KIND = "letta"
