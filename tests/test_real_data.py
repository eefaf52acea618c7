"""The paper's released French/German/Swedish files, read through the language configs."""
from __future__ import annotations

from collections import Counter

import pytest
from hydra import compose, initialize_config_dir

from stability.data.loading import load_run_data
from stability.train import CONF_DIR


def _run_data(lang: str, root):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose("train", overrides=[f"lang={lang}", f"data.root={root}"])
    return load_run_data(cfg)


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
