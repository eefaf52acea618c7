"""Multi-bootstrap: exact on the identity resample, equal to explicit resampling, sensible intervals."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from report_runs import item_categories, mcc, noisy_predictions

from stability.core.metrics import mcc_from_counts
from stability.report.bootstrap import CI_CATEGORIES, bootstrap_ci, bootstrap_deltas, item_matrix
from stability.report.collect import collect
from stability.statistics.bootstrap import (
    accuracy_from_counts,
    confusion_counts,
    draw_counts,
    point_estimate,
    resampled_scores,
)
from stability.statistics.seeds import category_stats


def runs_frame(labels: np.ndarray, seed_preds: list[np.ndarray], setup: str = "rte") -> pd.DataFrame:
    categories = [";".join(cats) for cats in item_categories(len(labels))]
    rows = [("fr", setup, seed, f"{i:04d}", int(label), int(pred), 0.5, cats)
            for seed, preds in enumerate(seed_preds)
            for i, (label, pred, cats) in enumerate(zip(labels, preds, categories))]
    return pd.DataFrame(rows, columns=["lang", "setup", "seed", "idx", "label", "pred", "prob_entailment",
                                       "categories"]).assign(variant="")


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 330)
    return runs_frame(labels, [noisy_predictions(rng, labels, acc) for acc in (0.6, 0.7, 0.8)])


def sklearn_mcc(frame: pd.DataFrame, seed: int, category: str) -> float:
    run = frame[frame["seed"] == seed]
    chosen = run if category == "overall" else run[run["categories"].str.split(";").map(lambda c: category in c)]
    return mcc(chosen["label"].to_numpy(), chosen["pred"].to_numpy())


def test_identity_resample_matches_sklearn(frame):
    runs = item_matrix(frame)
    n_items, n_seeds = len(runs.idx), len(runs.preds)
    per_seed = mcc_from_counts(*np.moveaxis(confusion_counts(np.ones((1, n_items)), runs), -1, 0))[0]
    for seed in range(n_seeds):
        for c, category in enumerate(CI_CATEGORIES):
            assert per_seed[seed, c] == pytest.approx(sklearn_mcc(frame, seed, category), abs=1e-12)
    expected = [np.mean([sklearn_mcc(frame, s, cat) for s in range(n_seeds)]) for cat in CI_CATEGORIES]
    np.testing.assert_allclose(point_estimate(runs), expected, atol=1e-12)


def test_weighted_sample_equals_explicit_resampling(frame):
    runs = item_matrix(frame)
    rng = np.random.default_rng(0)
    item_counts, seed_counts = draw_counts(rng, 2, len(runs.idx)), draw_counts(rng, 2, len(runs.preds))
    assert (item_counts.sum(axis=1) == len(runs.idx)).all() and (seed_counts.sum(axis=1) == 3).all()
    fast = resampled_scores(item_counts, seed_counts, runs)
    for b in range(2):
        items = np.repeat(np.arange(len(runs.idx)), item_counts[b])
        seeds = np.repeat(np.arange(3), seed_counts[b])
        for c in range(len(CI_CATEGORIES)):
            chosen = items[runs.membership[items, c]]
            slow = np.mean([mcc(runs.labels[chosen], runs.preds[s, chosen]) for s in seeds])
            assert fast[b, c] == pytest.approx(slow, abs=1e-12)


def test_undefined_mcc_is_zero():
    assert mcc_from_counts(np.array([5.0]), np.array([3.0]), np.array([0.0]), np.array([0.0]))[0] == 0.0
    assert mcc_from_counts(np.array([0.0]), np.array([0.0]), np.array([0.0]), np.array([0.0]))[0] == 0.0
    assert mcc_from_counts(np.array([2.0]), np.array([0.0]), np.array([0.0]), np.array([2.0]))[0] == 1.0


def test_interval_contains_estimate(frame):
    table = bootstrap_ci(frame, 300, 0.95, 0)
    assert len(table) == len(CI_CATEGORIES)
    assert (table["ci_low"] <= table["estimate"]).all() and (table["estimate"] <= table["ci_high"]).all()
    assert (table["ci_low"] < table["ci_high"]).all()


def test_interval_narrows_with_more_seeds():
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 2, 330)
    # per-seed accuracy varies a lot, so the seed part of the variance dominates
    preds = [noisy_predictions(rng, labels, acc) for acc in rng.uniform(0.55, 0.95, 20)]
    widths = []
    for n_seeds in (2, 20):
        table = bootstrap_ci(runs_frame(labels, preds[:n_seeds]), 400, 0.9, 0)
        widths.append((table["ci_high"] - table["ci_low"]).mean())
    assert widths[1] < 0.7 * widths[0]


def test_higher_confidence_gives_wider_intervals(frame):
    narrow, wide = (bootstrap_ci(frame, 300, level, 0) for level in (0.5, 0.99))
    assert ((wide["ci_high"] - wide["ci_low"]) >= (narrow["ci_high"] - narrow["ci_low"])).all()


def test_deltas_for_a_clearly_better_setup():
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 2, 330)
    worse = runs_frame(labels, [noisy_predictions(rng, labels, 0.6) for _ in range(3)], "rte")
    better = runs_frame(labels, [labels.copy() for _ in range(3)], "rte+mnli")
    table = bootstrap_deltas(pd.concat([worse, better]), "rte", "rte+mnli", 200, 0.95, 0)
    assert len(table) == len(CI_CATEGORIES)
    expected = 1.0 - point_estimate(item_matrix(worse))
    np.testing.assert_allclose(table["delta_mcc"], expected, atol=1e-12)
    # a resampled category can hold one label only (MCC 0 for both), so p is small, not always 0
    assert (table["ci_low"] > 0).all() and (table["p_delta_le_0"] <= 0.05).all()
    # overall: 330 items, never degenerate, no replicate at or below 0: p at its floor 1 / (B + 1)
    assert table.iloc[-1]["p_delta_le_0"] == pytest.approx(1 / 201)
    assert (table["p_delta_le_0"] > 0).all()
    swapped = bootstrap_deltas(pd.concat([worse, better]), "rte+mnli", "rte", 200, 0.95, 0)
    assert (swapped["ci_high"] < 0).all() and (swapped["p_delta_le_0"] >= 0.95).all()


def test_estimate_agrees_with_metrics_json(synthetic_runs):
    collected = collect([synthetic_runs])
    boot = bootstrap_ci(collected.predictions, 20, 0.95, 0)
    stats = category_stats(collected.results)
    merged = stats.merge(boot, on=["lang", "setup", "category"])
    assert len(merged) == len(stats)
    np.testing.assert_allclose(merged["estimate"], merged["mcc_mean"], atol=1e-12)


def test_accuracy_score_and_its_interval():
    # 3 seeds on 200 items, right on exactly 150, 160 and 170 of them: accuracies by hand
    labels = np.zeros(200, dtype=int)
    labels[::2] = 1
    seed_preds = []
    for n_right in (150, 160, 170):
        preds = labels.copy()
        preds[n_right:] = 1 - preds[n_right:]
        seed_preds.append(preds)
    frame = runs_frame(labels, seed_preds)
    runs = item_matrix(frame)
    overall = CI_CATEGORIES.index("overall")
    assert point_estimate(runs, accuracy_from_counts)[overall] == pytest.approx((0.75 + 0.8 + 0.85) / 3)
    table = bootstrap_ci(frame, 500, 0.95, 0, score=accuracy_from_counts)
    row = table[table["category"] == "overall"].iloc[0]
    assert row["ci_low"] < 0.8 < row["ci_high"] and 0.7 < row["ci_low"] and row["ci_high"] < 0.9
    assert np.isnan(accuracy_from_counts(np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1)))[0]
