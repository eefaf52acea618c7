"""MNLI mixing: collapsed labels, nested subsamples with their own seed, setup names."""
from __future__ import annotations

import pytest
from helpers import QUICK, QUICK_VARIANT, runs, train_cli

from annotators import annotate
from stability.core.config import compose_config
from stability.core.errors import UserError
from stability.core.schemas.train import train_settings
from stability.core.setups import setup_name
from stability.data.formats import read_examples
from stability.data.mnli import mnli_addition, nested_sample, parse_n_samples
from stability.data.sources import BUILTIN_DIR

POOL = read_examples(BUILTIN_DIR / "mnli" / "train.jsonl", "en", source="mnli")


def test_three_way_labels_collapse():
    raw = (BUILTIN_DIR / "mnli" / "train.jsonl").read_text().count('"gold_label": "entailment"')
    assert sum(e.label == 0 for e in POOL) == raw
    assert sum(e.label == 1 for e in POOL) == len(POOL) - raw > 0


def test_subsamples_are_nested_and_seeded():
    small, large = nested_sample(POOL, 10, seed=7), nested_sample(POOL, 50, seed=7)
    assert len(small) == 10 and small == large[:10]
    assert nested_sample(POOL, 50, seed=7) == large
    assert nested_sample(POOL, 50, seed=8) != large
    assert nested_sample(POOL, "all", seed=7) == POOL
    with pytest.raises(UserError, match="pool has 240"):
        nested_sample(POOL, 241, seed=7)


@pytest.mark.parametrize("value, expected", [(0, 0), ("all", "all"), ("ALL", "all"), (1000, 1000)])
def test_n_samples_values(value, expected):
    assert parse_n_samples(value) == expected


@pytest.mark.parametrize("value", [-1, "many", 2.5])
def test_bad_n_samples(value):
    with pytest.raises(UserError, match="is not a count"):
        parse_n_samples(value)


@pytest.mark.parametrize("args, expected", [
    ((0,), "rte"), ((10000,), "rte+mnli10000"), (("all",), "rte+mnli_all"),
    ((10000, "Negation", 25), "rte+mnli10000+Negation25"),
    ((10000, "Intervals/Numbers", 50.0), "rte+mnli10000+Intervals-Numbers50"),
])
def test_setup_names(args, expected):
    assert setup_name(*args) == expected


@pytest.mark.slow
def test_a_run_with_mnli_records_its_setup(tmp_path):
    out = tmp_path / "outputs"
    result = train_cli([*QUICK, "seed=0", "hydra.mode=RUN", "data.mnli.n_samples=40",
                        f"paths.output_dir={out}"], tmp_path)
    assert result.returncode == 0, result.stderr
    metrics = runs(out)[f"smoke/en/rte+mnli40/{QUICK_VARIANT}/seed0"]
    assert metrics["setup"] == "rte+mnli40" and metrics["n_added"] == 40
    assert metrics["n_train"] == 32 + 40


@pytest.mark.slow
def test_a_feature_presence_run_trains_on_its_controlled_subset(tmp_path):
    """The annotator picks 40 MNLI pairs of which exactly half contain a negation."""
    out = tmp_path / "outputs"
    result = train_cli([*QUICK, "seed=0", "hydra.mode=RUN", "data.mnli.n_samples=40",
                        "data.mnli.feature=Negation", "data.mnli.presence=50",
                        f"paths.output_dir={out}"], tmp_path)
    assert result.returncode == 0, result.stderr
    metrics = runs(out)[f"smoke/en/rte+mnli40+Negation50/{QUICK_VARIANT}/seed0"]
    assert metrics["n_added"] == 40
    settings = train_settings(compose_config(["experiment=smoke", "data.mnli.n_samples=40",
                                              "data.mnli.feature=Negation", "data.mnli.presence=50"]))
    added = mnli_addition(settings)
    assert sum(bool(f.has("Negation")) for f in annotate(added, "en")) == 20
