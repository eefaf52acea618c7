"""The paper's released French/German/Swedish files, read through the language configs."""
from __future__ import annotations

from collections import Counter

import pytest
from helpers import runs, train_cli

from stability.core.config import compose_config
from stability.core.schemas.train import train_settings
from stability.data.loading import load_run_data


def _run_data(lang: str, root):
    return load_run_data(train_settings(compose_config([f"lang={lang}", f"data.root={root}"])))


def test_french_release_counts(shared_data):
    data = _run_data("fr", shared_data)
    assert len(data.train) == 2616 and len(data.validation) == 307
    diag = data.diagnostic
    assert len(diag) == 1104
    assert sum(e.label == 0 for e in diag) == 459
    counts = Counter(c for e in diag for c in e.categories)
    assert counts["Negation"] == 82 and len(counts) == 33
    assert all(isinstance(e.idx, str) for e in data.train + diag)


@pytest.mark.parametrize("lang", ["de", "sv"])
def test_translations_align_with_french(shared_data, lang):
    french = _run_data("fr", shared_data).diagnostic
    other = _run_data(lang, shared_data).diagnostic
    assert [(e.idx, e.label, e.categories) for e in other] == \
        [(e.idx, e.label, e.categories) for e in french]
    assert other[0].premise != french[0].premise


@pytest.mark.slow
def test_tiny_run_on_french_scores_all_categories(shared_data, tmp_path):
    out = tmp_path / "outputs"
    result = train_cli(["lang=fr", "model=tiny", f"data.root={shared_data}", "data.max_train_samples=64",
                        "trainer.max_epochs=1", "seed=0", f"paths.output_dir={out}"], tmp_path)
    assert result.returncode == 0, result.stderr
    metrics = runs(out)["default/fr/rte/model-tiny_ep1_ntrain64/seed0"]
    expected = Counter(c for e in _run_data("fr", shared_data).diagnostic for c in e.categories)
    assert metrics["category_n"] == dict(expected) and len(metrics["category_mcc"]) == 33
    assert metrics["n_items"] == 1104 and metrics["n_train"] == 64
