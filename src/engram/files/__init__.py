"""Memory as files: the memory folder people read, edit, grep and version with ordinary tools.

- ``layout``: where each memory's file is (``global/``, ``agents/<agent>/``,
  ``sessions/<agent>/<session>/``, the names written as ``disk_names.portable`` folder names;
  one file per tag, category or type); ``folder_names`` renames folders an earlier version named
  with the names as they are.
- ``markdown`` / ``yaml_format``: the two file formats (ClawCode's), parsed into ``Entry`` records
  with schema validation and rendered back; bullets keep an unobtrusive ``<!-- id:... -->`` marker.
- ``sync``: two-way sync (``FileSync``) with a sync-state record (``state``) so conflicts are
  detected: ``mirror`` writes engine changes into files, ``scan`` and ``reconcile`` read the folder
  back, ``write`` writes a pass's files, ``wiring`` attaches it at start-up; ``conflicts`` keeps
  the losing file text in ``.conflict`` files; ``watcher`` runs it continuously.
- ``export``: per-type JSON files (PHP entity), folder export and import.
- ``paths``: nothing outside the memory folder is ever read or written.

The operator's ``MEMORY.md`` (``memory_md``) is not in the memory folder: it is
``ENGRAM_HOME/MEMORY.md``, in the home folder above it (``home/memory`` by default), put into the
agent's prompt. Sync never reads or writes it; a ``MEMORY.md`` inside the memory folder is reported
by sync and import (``layout.Layout.misplaced``), never read.
"""
