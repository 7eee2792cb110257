"""The public surface is deliberate: changing it must change this test too."""

import engram


def test_public_names_are_pinned() -> None:
    assert sorted(engram.__all__) == [
        "Category", "ConfigError", "Engram", "EngramError", "Filters", "Hit", "Layer", "Memory",
        "NotFoundError", "RecallResult", "Scope", "ScoreParts", "SnapshotError", "StorageError",
        "ValidationError", "WriteResult",
    ]
    for name in engram.__all__:
        assert getattr(engram, name) is not None
