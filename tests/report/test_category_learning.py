"""`## When each category is learned` on hand-made training dynamics: 2 languages × 3 seeds × 3
validations over 60 diagnostic items (and a few training and validation items the section must
ignore). Negation (all of Logic) is answered constantly at validation 1 and perfectly from
validation 2 on; Common sense (all of Knowledge) is answered constantly throughout; the other items
are noisy. One seed of `de` stops after 2 validations.

Checked: every per-validation MCC equals `core.metrics.score_diagnostic` of the stored predictions;
mean and σ equal numpy over the seeds that reached the validation; the interval is the project's
multi-bootstrap (`statistics.bootstrap.bootstrap_samples`) drawn from the same generator; the onsets
of the clear-cut categories are the hand-derived ones; and through the report CLI, runs without
dynamics leave the section and its files out while runs with them get both CSVs and the figure."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from report_runs import write_dynamics, write_run

from stability.core.metrics import score_diagnostic
from stability.core.runrecord import Dynamics
from stability.core.taxonomy import COARSE_CATEGORIES, COARSE_OF, FINE_CATEGORIES, TAXONOMY
from stability.report.category_learning import CATEGORIES, group_dynamics, learning_tables, seed_scores
from stability.report.cli import main
from stability.report.dynamics import RunDynamics
from stability.statistics.bootstrap import ItemMatrix, bootstrap_samples, percentile_interval

LANGS = ("de", "fr")
SEEDS = (0, 1, 2)
N_ITEMS = 60
BOOT = 300
CONFIDENCE = 0.95
RANDOM_STATE = 7
EARLY_STOP = ("de", 1)   # this run has 2 validations, the others 3
NEGATION, COMMON_SENSE = range(0, 12), range(12, 20)
OTHERS = [name for coarse in ("Lexical Semantics", "Predicate-Argument Structure") for name in TAXONOMY[coarse]]


def categories() -> list[list[str]]:
    """Items 0–11 Negation, 12–19 Common sense, the rest two Lexical / Predicate-Argument categories each."""
    cats = [["Negation"]] * len(NEGATION) + [["Common sense"]] * len(COMMON_SENSE)
    cats += [sorted({OTHERS[i % len(OTHERS)], OTHERS[(3 * i + 1) % len(OTHERS)]}) for i in range(N_ITEMS - 20)]
    return cats


def gold() -> np.ndarray:
    return np.arange(N_ITEMS) % 2   # alternating: every category has both labels


def items() -> pd.DataFrame:
    """5 training, 5 validation, then the diagnostic items (idx "0".."59", as in predictions.jsonl)."""
    labels = np.concatenate([np.zeros(5, int), np.ones(5, int), gold()])
    return pd.DataFrame({
        "split": ["train"] * 5 + ["validation"] * 5 + ["diagnostic"] * N_ITEMS,
        "idx": [f"t{i}" for i in range(5)] + [f"v{i}" for i in range(5)] + [str(i) for i in range(N_ITEMS)],
        "label": labels.astype(np.int8), "premise": "p", "hypothesis": "h",
        "categories": [[]] * 10 + categories(),
    })


def diagnostic_predictions(rng: np.random.Generator, lang: str, seed: int) -> np.ndarray:
    """(validations, 60): validation 1 coin flips (Negation and Common sense constant 0), then 70 %
    and 85 % correct; Negation perfect from validation 2, Common sense always 0."""
    labels = gold()
    n_val = 2 if (lang, seed) == EARLY_STOP else 3
    preds = []
    for v in range(n_val):
        pred = rng.integers(0, 2, N_ITEMS) if v == 0 else np.where(rng.random(N_ITEMS) < 0.55 + 0.15 * v, labels, 1 - labels)
        pred[list(NEGATION)] = 0 if v == 0 else labels[list(NEGATION)]
        pred[list(COMMON_SENSE)] = 0
        preds.append(pred)
    return np.array(preds, dtype=np.int8)


def full_matrices(diagnostic: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """prob_entailment and pred over all items: training items unseen (NaN, -1), validation items anything."""
    n_val = len(diagnostic)
    pred = np.concatenate([np.full((n_val, 5), -1), np.ones((n_val, 5)), diagnostic], axis=1).astype(np.int8)
    prob = np.where(pred == 0, 0.9, 0.1).astype(np.float32)
    prob[:, :5] = np.nan
    return prob, pred


@pytest.fixture(scope="module")
def predictions() -> dict[tuple[str, int], np.ndarray]:
    rng = np.random.default_rng(3)
    return {(lang, seed): diagnostic_predictions(rng, lang, seed) for lang in LANGS for seed in SEEDS}


@pytest.fixture(scope="module")
def runs(predictions) -> list[RunDynamics]:
    """In memory, as `read_run_dynamics` gives them; validated by steps: epochs 1, 1, 2."""
    made = []
    for (lang, seed), diagnostic in predictions.items():
        prob, pred = full_matrices(diagnostic)
        log = pd.DataFrame({"epoch": [1, 1, 2], "step": [50, 100, 150], "loss": 0.5, "val_accuracy": 0.6,
                            "seconds": 1.0}).head(len(diagnostic))
        made.append(RunDynamics(lang, "rte", "", seed, f"{lang}_{seed}", log, Dynamics(items(), prob, pred)))
    return made


@pytest.fixture(scope="module")
def tables(runs) -> tuple[pd.DataFrame, pd.DataFrame]:
    return learning_tables(runs, BOOT, CONFIDENCE, RANDOM_STATE)


def scored(pred: np.ndarray) -> dict[str, float]:
    """category → MCC of one seed at one validation, by the project's scoring of a finished run."""
    cats = categories()
    scores = score_diagnostic(gold().tolist(), pred.tolist(), cats, [sorted({COARSE_OF[c] for c in item}) for item in cats])
    return {"overall": scores.overall_mcc, **scores.coarse_mcc, **scores.category_mcc}


def test_each_seeds_validation_mcc_equals_the_project_scoring_of_its_stored_predictions(runs, predictions):
    for group in group_dynamics(runs):
        for v in range(group.n_validations):
            reached = [group.seeds[s] for s in group.reached(v)]
            expected = np.array([[scored(predictions[group.lang, seed][v])[c] for c in CATEGORIES] for seed in reached])
            np.testing.assert_allclose(seed_scores(group.runs(v)), expected, rtol=0, atol=1e-12)


def test_mean_and_sigma_per_validation_equal_numpy_over_the_seeds_that_reached_it(tables, predictions):
    curves = tables[0]
    assert len(curves) == (3 + 3) * len(CATEGORIES)   # both languages have a run with 3 validations
    for row in curves.itertuples(index=False):
        values = [scored(predictions[row.lang, seed][row.validation - 1])[row.category]
                  for seed in SEEDS if len(predictions[row.lang, seed]) >= row.validation]
        assert row.n_seeds == len(values)
        assert row.mean_mcc == pytest.approx(np.mean(values), abs=1e-12)
        assert row.std_mcc == pytest.approx(np.std(values, ddof=1), abs=1e-12)
    de3 = curves[(curves["lang"] == "de") & (curves["validation"] == 3)]
    assert (de3["n_seeds"] == 2).all()
    assert list(curves.drop_duplicates("validation")[["epoch", "step"]].itertuples(index=False, name=None)) == \
        [(1, 50), (1, 100), (2, 150)]
    levels = curves.drop_duplicates("category").set_index("category")["level"]
    assert levels["overall"] == "all" and (levels[list(COARSE_CATEGORIES)] == "coarse").all() \
        and (levels[list(FINE_CATEGORIES)] == "fine").all()


def test_the_interval_is_the_projects_multi_bootstrap_from_the_same_generator(tables, predictions):
    """The first group drawn (de, sorted) at validation 1 uses a fresh generator seeded with random_state."""
    cats = categories()
    fine = np.array([[name in item for name in FINE_CATEGORIES] for item in cats])
    coarse = np.array([[any(COARSE_OF[c] == name for c in item) for name in COARSE_CATEGORIES] for item in cats])
    membership = np.column_stack([np.ones(N_ITEMS, bool), coarse, fine])
    order = np.argsort(np.arange(N_ITEMS).astype(str))   # the section aligns seeds on sorted idx
    runs = ItemMatrix(np.arange(N_ITEMS).astype(str)[order], gold()[order],
                      np.stack([predictions["de", seed][0] for seed in SEEDS])[:, order].astype(np.int64),
                      membership[order])
    low, high = percentile_interval(bootstrap_samples(np.random.default_rng(RANDOM_STATE), BOOT, runs), CONFIDENCE)
    first = tables[0][(tables[0]["lang"] == "de") & (tables[0]["validation"] == 1)]
    np.testing.assert_allclose(first["mcc_low"], low, atol=1e-12)
    np.testing.assert_allclose(first["mcc_high"], high, atol=1e-12)
    assert (first["reliably_above_zero"] == (low > 0)).all()


def test_a_category_learned_at_validation_2_has_its_onset_there_and_one_never_learned_has_none(tables):
    onset = tables[1].set_index(["lang", "category"])
    for lang in LANGS:
        for category in ("Negation", "Logic"):
            row = onset.loc[(lang, category)]
            assert row["first_reliable_validation"] == 2 and row["first_reliable_epoch"] == 1
            assert (row["n_seeds"], row["n_seeds_reached"]) == (3, 3)
            assert (row["onset_mean"], row["onset_std"], row["onset_min"], row["onset_max"]) == (2.0, 0.0, 2, 2)
            assert (row["onset_epoch_mean"], row["onset_epoch_min"], row["onset_epoch_max"]) == (1.0, 1, 1)
            assert (row["final_mean_mcc"], row["final_std_mcc"]) == (1.0, 0.0)
        for category in ("Common sense", "Knowledge"):
            row = onset.loc[(lang, category)]
            assert pd.isna(row["first_reliable_validation"]) and pd.isna(row["onset_mean"])
            assert row["n_seeds_reached"] == 0
            assert row["final_mean_mcc"] == 0.0   # constant answers: MCC undefined, scored 0.0


def test_without_bootstrap_the_curves_have_no_interval_and_no_onset(runs, tables):
    curves, onset = learning_tables(runs, 0, CONFIDENCE, RANDOM_STATE)
    pd.testing.assert_series_equal(curves["mean_mcc"], tables[0]["mean_mcc"])
    assert curves["mcc_low"].isna().all() and not curves["reliably_above_zero"].any()
    assert onset["first_reliable_validation"].isna().all() and (onset["n_seeds_reached"] == 0).all()


def write_runs(root: Path, predictions: dict, dynamics: bool) -> Path:
    for (lang, seed), diagnostic in predictions.items():
        run = write_run(root, lang, "rte", seed, gold(), diagnostic[-1], categories())
        if dynamics:
            write_dynamics(run, items(), *full_matrices(diagnostic))
    return root


@pytest.mark.slow
def test_report_has_the_section_only_for_runs_that_recorded_dynamics(tmp_path, predictions):
    plain = write_runs(tmp_path / "plain", predictions, dynamics=False)
    main([f"runs={plain}", "calibration_sims=0", f"out={tmp_path / 'plain_report'}", "bootstrap=0", "figures=false"])
    text = (tmp_path / "plain_report" / "report.md").read_text(encoding="utf-8")
    assert "When each category is learned" not in text
    assert not list((tmp_path / "plain_report").glob("category_learning*"))

    recorded = write_runs(tmp_path / "recorded", predictions, dynamics=True)
    out = tmp_path / "recorded_report"
    # bootstrap=50, few: the whole report draws them
    main([f"runs={recorded}", "calibration_sims=0", f"out={out}", "bootstrap=50", f"random_state={RANDOM_STATE}"])
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "## When each category is learned" in text and "![category_learning_rte](category_learning_rte.png)" in text
    assert (out / "category_learning_rte.png").stat().st_size > 0
    curves = pd.read_csv(out / "category_learning.csv", keep_default_na=False, na_values=[""])
    onset = pd.read_csv(out / "category_learning_onset.csv", keep_default_na=False, na_values=[""])
    assert len(curves) == 6 * len(CATEGORIES) and len(onset) == 2 * len(CATEGORIES)
    negation = onset[onset["category"] == "Negation"]
    assert (negation["first_reliable_validation"] == 2).all() and (negation["first_reliable_epoch"] == 2).all()
    overall = curves[(curves["category"] == "overall") & (curves["lang"] == "fr") & (curves["validation"] == 3)]
    assert overall["mean_mcc"].iloc[0] == pytest.approx(np.mean([scored(predictions["fr", s][2])["overall"] for s in SEEDS]))
