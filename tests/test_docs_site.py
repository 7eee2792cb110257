"""The documentation site builds with ``mkdocs build --strict``: a broken link, a page missing from
the navigation or a docstring mkdocstrings cannot render fails it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_site_builds_strict_with_generated_references(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="the dev extra installs mkdocs")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    site = tmp_path / "site"
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
                         cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    # the generated references carry every command and setting, and the API page its assets
    assert "engram remember" in (site / "reference" / "cli" / "index.html").read_text()
    assert "ENGRAM_EMBEDDINGS__PROVIDER" in (site / "reference" / "configuration" / "index.html").read_text()
    assert (site / "reference" / "openapi.json").stat().st_size > 1000
    api = (site / "reference" / "api" / "index.html").read_text()
    assert "swagger-ui-bundle.js" in api and "://" not in api.split('id="swagger-ui"')[1].split("</script>")[0]
    assert (site / "reference" / "assets" / "swagger-ui-bundle.js").exists()
    assert 'id="engram.Engram.recall"' in (site / "python-api" / "index.html").read_text()  # from the docstrings
