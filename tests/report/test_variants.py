"""Variants are never pooled: two learning rates of one (lang, setup) are two groups in every
statistic, and `compare` takes them as conditions. Expected values are worked out by hand."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from forked_cli import run_module

from stability.core.identity import run_subdir
from stability.core.runrecord import Prediction, RunDir, RunRecord
from stability.core.taxonomy import FINE_CATEGORIES
from stability.report.cli import main
from stability.report.collect import collect

LR = "lr3e-05"
LABELS = np.array([0, 1, 0, 1, 0, 1, 0, 1])
CATEGORIES = [("Negation",)] * 4 + [("Conjunction",)] * 4
# overall MCC of seeds 0, 1, 2 per (lang, variant); category c of a run scores overall + 0.001 · (index of c)
OVERALL = {("fr", ""): [0.1, 0.2, 0.3], ("fr", LR): [0.5, 0.7, 0.9],
           ("de", ""): [0.0, 0.1, 0.5], ("de", LR): [0.3, 0.3, 0.6]}
FAILED = ("fr", LR, 2)          # validation accuracy not above the majority share
FLIPPED_MCC = 12 / math.sqrt(240)   # 8 balanced items, one prediction wrong: (4·3 − 1·0) / √(5·4·4·3)


def predictions(lang: str, variant: str, seed: int) -> np.ndarray:
    """Default variant: every run right everywhere. lr3e-05: fr seed s is wrong on item s; de
    predicts the opposite of fr on every item."""
    if not variant:
        return LABELS.copy()
    fr = LABELS.copy()
    fr[seed] = 1 - fr[seed]
    return fr if lang == "fr" else 1 - fr


def write_runs(root: Path, variants: dict[tuple[str, str], list[float]] = OVERALL) -> Path:
    for (lang, variant), overall in variants.items():
        for seed, mcc in enumerate(overall):
            run = RunDir(root / run_subdir(lang, "rte", variant, seed))
            preds = predictions(lang, variant, seed)
            run.path.mkdir(parents=True)
            run.write_predictions(Prediction(str(i), int(label), int(pred), 0.5, categories)
                                  for i, (label, pred, categories) in enumerate(zip(LABELS, preds, CATEGORIES)))
            run.write_record(RunRecord(
                lang=lang, setup="rte", seed=seed, variant=variant, seed_init=seed, seed_order=seed, n_items=8,
                val_accuracy=0.5 if (lang, variant, seed) == FAILED else 0.7, val_majority=0.5, overall_mcc=mcc,
                category_mcc={name: mcc + 0.001 * i for i, name in enumerate(FINE_CATEGORIES)},
                category_n={name: 4 for name in FINE_CATEGORIES}))
    return root


pytestmark = pytest.mark.slow   # the module's report fixture reports for seconds


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    root = write_runs(tmp_path_factory.mktemp("variants") / "runs")
    out = root.parent / "report"
    main([f"runs={root}", "calibration_sims=0", f"out={out}", "bootstrap=200", f"compare=[rte,rte/{LR}]"])
    return out


def read(out: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(out / name, keep_default_na=False, na_values=[""]).fillna({"variant": ""})


def test_summary_has_one_row_per_variant_with_its_own_mean_and_sigma(report):
    summary = read(report, "summary.csv").set_index(["lang", "variant"])
    assert list(summary.index) == [("de", ""), ("de", LR), ("fr", ""), ("fr", LR)]
    assert (summary["n_seeds"] == 3).all()
    expected = {("fr", ""): (0.2, 0.1), ("fr", LR): (0.7, 0.2),           # σ: √((0.1² + 0 + 0.1²) / 2) = 0.1
                ("de", ""): (0.2, math.sqrt(0.07)), ("de", LR): (0.4, math.sqrt(0.03))}
    for key, (mean, std) in expected.items():
        assert summary.loc[key, "overall_mcc_mean"] == pytest.approx(mean)
        assert summary.loc[key, "overall_mcc_std"] == pytest.approx(std)
        assert summary.loc[key, "mean_category_mcc_mean"] == pytest.approx(mean + 0.016)   # offsets 0 … 0.032
        assert summary.loc[key, "mean_category_mcc_std"] == pytest.approx(std)
    text = (report / "report.md").read_text()
    assert "| lang | setup | variant | runs | seeds |" in text
    assert f"| fr | rte | {LR} | all seeds | 3 | 0.700 ± 0.200 |" in text
    assert "| fr | rte |  | all seeds | 3 | 0.200 ± 0.100 |" in text


def test_category_stats_keep_variants_apart(report):
    stats = read(report, "category_stats.csv").set_index(["lang", "variant", "category"])
    negation = 0.001 * FINE_CATEGORIES.index("Negation")
    assert stats.loc[("fr", "", "Negation"), "mcc_mean"] == pytest.approx(0.2 + negation)
    assert stats.loc[("fr", LR, "Negation"), "mcc_mean"] == pytest.approx(0.7 + negation)
    assert stats.loc[("fr", LR, "Negation"), "mcc_std"] == pytest.approx(0.2)
    assert [column for column in stats.columns if column.startswith("seed_")] == ["seed_0", "seed_1", "seed_2"]


def test_failed_run_belongs_to_its_variant_only(report):
    failed = read(report, "failed_runs.csv")
    assert list(failed.columns[:4]) == ["lang", "setup", "variant", "seed"]
    assert failed.loc[failed["failed"], ["lang", "variant", "seed"]].values.tolist() == [list(FAILED)]
    nonfailed = read(report, "summary_nonfailed.csv").set_index(["lang", "variant"])
    assert nonfailed.loc[("fr", LR), "n_seeds"] == 2
    assert nonfailed.loc[("fr", LR), "overall_mcc_mean"] == pytest.approx(0.6)
    assert nonfailed.loc[("fr", ""), "n_seeds"] == 3          # seed 2 of the default variant did not fail


def test_item_agreement_counts_the_seeds_of_one_variant(report):
    items = read(report, "item_agreement.csv")
    assert (items["n_seeds"] == 3).all()
    default = items[(items["lang"] == "fr") & (items["variant"] == "")]
    assert (default["agreement"] == 1).all()
    lr = items[(items["lang"] == "fr") & (items["variant"] == LR)].set_index("idx")["agreement"]
    assert list(lr.loc[[0, 1, 2]]) == pytest.approx([1 / 3] * 3)     # one seed of three flips: 1 pair of 3 agrees
    assert (lr.loc[[3, 4, 5, 6, 7]] == 1).all()
    by_category = read(report, "agreement_by_category.csv")
    assert set(zip(by_category["lang"], by_category["variant"])) == {("fr", ""), ("fr", LR), ("de", ""), ("de", LR)}


def test_bootstrap_estimates_are_per_variant(report):
    overall = read(report, "bootstrap_ci.csv").query("category == 'overall'").set_index(["lang", "variant"])
    assert (overall["n_seeds"] == 3).all()
    assert overall.loc[("fr", ""), "estimate"] == pytest.approx(1.0)
    assert overall.loc[("fr", LR), "estimate"] == pytest.approx(FLIPPED_MCC)
    assert overall.loc[("de", LR), "estimate"] == pytest.approx(-FLIPPED_MCC)    # de answers the opposite of fr


def test_consistency_compares_languages_within_one_variant(report):
    pairs = read(report, "consistency.csv")
    assert pairs.groupby("variant").size().to_dict() == {"": 12, LR: 12}   # 2 directions × 3 seeds + 2 × C(3, 2)
    assert (pairs.loc[pairs["variant"] == "", "consistency"] == 1).all()
    lr = pairs[pairs["variant"] == LR]
    assert (lr.loc[lr["lang_a"] != lr["lang_b"], "consistency"] == 0).all()
    assert np.allclose(lr.loc[lr["lang_a"] == lr["lang_b"], "consistency"], 6 / 8)   # seeds s, t differ on items s, t


def test_compare_two_variants_gives_the_differences_by_hand(report):
    deltas = read(report, "deltas.csv").set_index(["lang", "category"])
    assert len(deltas) == 2 * 33
    assert np.allclose(deltas.loc["fr", "delta_mcc"], 0.5) and np.allclose(deltas.loc["fr", "delta_std"], 0.1)
    assert np.allclose(deltas.loc["de", "delta_mcc"], 0.2)
    assert np.allclose(deltas.loc["de", "delta_std"], math.sqrt(0.03) - math.sqrt(0.07))
    boot = read(report, "bootstrap_deltas.csv").query("category == 'overall'").set_index("lang")
    assert boot.loc["fr", "delta_mcc"] == pytest.approx(FLIPPED_MCC - 1)
    assert boot.loc["de", "delta_mcc"] == pytest.approx(-FLIPPED_MCC - 1)
    assert f"## Comparison: rte/{LR} vs rte" in (report / "report.md").read_text()


def test_figures_name_and_title_the_variant(report):
    names = {path.name for path in report.glob("*.png")}
    assert {"heatmap_fr_rte.png", f"heatmap_fr_rte_{LR}.png", f"heatmap_languages_rte_{LR}.png",
            f"kappa_rte_{LR}.png", f"deltas_rte_vs_rte_{LR}.png"} <= names


def test_runs_table_carries_the_seed_design(tmp_path):
    grid = {("fr", variant): [0.1, 0.2] for variant in ("", "init1", "order1", "init1_order1")}
    collected = collect([write_runs(tmp_path / "runs", grid)])
    runs = collected.runs.set_index(["variant", "seed"])
    assert set(runs["family"]) == {""}                   # one seed_init × seed_order grid
    assert runs.loc[("init1", 1), "seed_init"] == 1 and runs.loc[("init1", 1), "seed_order"] == 1
    assert str(runs["seed_init"].dtype) == "Int64"


def test_csv_variant_column_is_optional_and_grouped(tmp_path, capsys):
    csv = tmp_path / "r.csv"
    csv.write_text("lang,setup,variant,seed,category,mcc\n"
                   "fr,rte,,0,Negation,0.1\nfr,rte,,1,Negation,0.3\n"
                   "fr,rte,lr3e-05,0,Negation,0.5\nfr,rte,lr3e-05,1,Negation,0.9\n")
    main([f"runs={csv}", "calibration_sims=0", "bootstrap=0", "figures=false"])
    summary = read(tmp_path / "report", "summary.csv").set_index("variant")
    assert summary.loc["", "mean_category_mcc_mean"] == pytest.approx(0.2)
    assert summary.loc[LR, "mean_category_mcc_mean"] == pytest.approx(0.7)
    csv.write_text("lang,setup,variant,seed,category,mcc\nfr,rte,a/b,0,Negation,0.1\n")
    with pytest.raises(SystemExit):
        main([f"runs={csv}", "figures=false"])
    assert "r.csv:2: variant contains '/'" in capsys.readouterr().err


@pytest.mark.slow
def test_learning_rate_sweep_end_to_end(tmp_path):
    """The issue's example: two learning rates × two seeds of the smoke experiment, then the report."""
    repo = Path(__file__).resolve().parents[2]
    train = run_module("stability.train", ["experiment=smoke", "seed=0..1", "trainer.learning_rate=1e-5,3e-5",
                                           f"paths.output_dir={tmp_path}"], repo, timeout=900)
    assert train.returncode == 0, train.stderr
    report = run_module("stability.report", [f"runs={tmp_path / 'smoke'}", "bootstrap=0", "figures=false",
                                             "calibration_sims=0"], repo, timeout=300)
    assert report.returncode == 0, report.stderr
    summary = read(tmp_path / "smoke" / "report", "summary.csv")
    assert list(summary["variant"]) == ["lr1e-05", "lr3e-05"] and list(summary["n_seeds"]) == [2, 2]
    text = (tmp_path / "smoke" / "report" / "report.md").read_text()
    assert "| en | rte | lr1e-05 | all seeds | 2 |" in text and "| en | rte | lr3e-05 | all seeds | 2 |" in text
