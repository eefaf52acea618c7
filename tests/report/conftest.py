"""The report tests' shared fixture; the run-writing helpers are in report_runs.py."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from report_runs import item_categories, noisy_predictions, write_run


@pytest.fixture
def synthetic_runs(tmp_path: Path) -> Path:
    """fr and de, setups rte (n_added 0) and rte+mnli10000, 3 seeds each, 120 items."""
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 120)
    categories = item_categories(120)
    root = tmp_path / "outputs"
    for lang in ("fr", "de"):
        for setup, n_added, accuracy in (("rte", 0, 0.65), ("rte+mnli10000", 10000, 0.8)):
            for seed in range(3):
                write_run(root, lang, setup, seed, labels, noisy_predictions(rng, labels, accuracy),
                          categories, n_added=n_added)
    return root
