"""Failed runs are counted and left out of the non-failed statistics; undefined MCCs are not drawn as 0.00."""
from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from report_runs import item_categories, noisy_predictions, write_metrics, write_run

from stability.statistics import figures
from stability.report.cli import main
from stability.report.collect import collect
from stability.report.failed import FailedRule, failed_runs, without_failed

N_ITEMS = 66


def _set_validation(run, accuracy: float, majority: float | None) -> None:
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["val_accuracy"] = accuracy
    if majority is not None:
        metrics["val_majority"] = majority
    (run / "metrics.json").write_text(json.dumps(metrics))


@pytest.fixture
def runs_with_a_failure(tmp_path):
    """fr rte seeds 0-2; seed 2 answers entailment everywhere and is no better than the majority."""
    rng = np.random.default_rng(1)
    labels, categories = rng.integers(0, 2, N_ITEMS), item_categories(N_ITEMS)
    root = tmp_path / "runs"
    for seed in range(3):
        preds = np.zeros(N_ITEMS, int) if seed == 2 else noisy_predictions(rng, labels, 0.8)
        run = write_run(root, "fr", "rte", seed, labels, preds, categories)
        _set_validation(run, 0.52 if seed == 2 else 0.7, 0.52)
    return root


def test_rule_and_evidence(runs_with_a_failure):
    collected = collect([runs_with_a_failure])
    failed = failed_runs(collected.runs, collected.predictions, FailedRule())
    assert list(failed["failed"]) == [False, False, True]
    assert "constant diagnostic predictions" in failed.iloc[2]["reason"]
    assert "not above the majority share 0.520" in failed.iloc[2]["reason"]
    assert set(failed["judged_by"]) == {"validation and predictions"}
    # a margin makes accuracy 0.7 over a majority share of 0.52 too little
    assert failed_runs(collected.runs, collected.predictions, FailedRule(margin=0.2))["failed"].all()


def test_without_failed_drops_exactly_the_failed_runs_rows(runs_with_a_failure):
    collected = collect([runs_with_a_failure])
    failed = failed_runs(collected.runs, collected.predictions, FailedRule())
    predictions = collected.predictions.iloc[::-1]                      # rows keep their order and index
    assert without_failed(predictions, failed).equals(predictions[predictions["seed"] != 2])
    assert without_failed(predictions, failed.assign(failed=False)) is predictions


def test_old_record_without_majority_is_judged_by_predictions(tmp_path):
    labels, categories = np.array([0, 1] * 20), item_categories(40)
    run = write_run(tmp_path, "de", "rte", 0, labels, np.ones(40, int), categories)       # no val_majority
    collected = collect([tmp_path])
    row = failed_runs(collected.runs, collected.predictions, FailedRule()).iloc[0]
    assert (bool(row["failed"]), row["judged_by"]) == (True, "predictions")
    assert run.name in collected.runs.iloc[0]["source"]
    metrics_only = write_metrics(tmp_path / "m", "sv", "rte", 0, [0.1] * 33, 0.1)      # neither evidence
    collected = collect([metrics_only.parent])
    row = failed_runs(collected.runs, collected.predictions, FailedRule()).iloc[0]
    assert not row["failed"] and row["judged_by"].startswith("nothing")


@pytest.mark.slow
def test_failed_run_counted_and_left_out_of_nonfailed_statistics(runs_with_a_failure, tmp_path):
    out = tmp_path / "report"
    main([f"runs={runs_with_a_failure}", "calibration_sims=0", f"out={out}", "bootstrap=0"])
    failed = pd.read_csv(out / "failed_runs.csv")
    assert failed["failed"].sum() == 1 and failed.loc[failed["failed"], "seed"].tolist() == [2]
    results = pd.read_csv(out / "results.csv")
    overall = results[results["level"] == "all"].set_index("seed")["mcc"]
    everything = pd.read_csv(out / "summary.csv").iloc[0]
    kept = pd.read_csv(out / "summary_nonfailed.csv").iloc[0]
    assert (everything["n_seeds"], kept["n_seeds"]) == (3, 2)
    assert everything["overall_mcc_mean"] == pytest.approx(overall.mean())
    assert kept["overall_mcc_mean"] == pytest.approx(overall[[0, 1]].mean())
    assert kept["overall_mcc_std"] == pytest.approx(overall[[0, 1]].std(ddof=1))
    stats = pd.read_csv(out / "category_stats_nonfailed.csv")
    assert "seed_2" not in stats.columns
    report = (out / "report.md").read_text()
    assert "## Failed runs" in report and "| fr | rte | 1 of 3 | 0 |" in report
    assert "| fr | rte | 2 | validation accuracy 0.520 not above" in report
    assert "|  |  | non-failed | 2 |" in report                       # the second summary row


def test_degenerate_flag_travels_through_results_csv(tmp_path):
    run = write_metrics(tmp_path / "runs", "fr", "rte", 0, [0.0] * 33, 0.0)
    metrics = json.loads((run / "metrics.json").read_text())
    metrics["degenerate"] = ["Negation", "Logic", "overall"]
    (run / "metrics.json").write_text(json.dumps(metrics))
    main([f"runs={tmp_path / 'runs'}", "calibration_sims=0", f"out={tmp_path / 'a'}", "bootstrap=0", "figures=false"])
    results = pd.read_csv(tmp_path / "a" / "results.csv")
    assert list(results.columns) == ["lang", "setup", "variant", "seed", "level", "category", "n_items", "mcc",
                                     "n_added", "commit", "dirty", "degenerate"]
    assert sorted(results.loc[results["degenerate"], "category"]) == ["Logic", "Negation", "overall"]
    main([f"runs={tmp_path / 'a' / 'results.csv'}", "calibration_sims=0", f"out={tmp_path / 'b'}", "bootstrap=0",
          "figures=false"])
    pd.testing.assert_frame_equal(results, pd.read_csv(tmp_path / "b" / "results.csv"))


def test_exclude_failed_drops_the_run_everywhere(runs_with_a_failure, tmp_path):
    out = tmp_path / "report"
    main([f"runs={runs_with_a_failure}", "calibration_sims=0", f"out={out}", "bootstrap=0", "figures=false",
          "exclude_failed=true"])
    assert pd.read_csv(out / "summary.csv").iloc[0]["n_seeds"] == 2
    assert set(pd.read_csv(out / "item_agreement.csv")["n_seeds"]) == {2}
    assert "left out of every table" in (out / "report.md").read_text()


def test_degenerate_cell_is_not_drawn_as_zero():
    matrix = pd.DataFrame({"0": [0.5, 0.0], "1": [0.0, -0.25]}, index=["Negation", "Conjunction"])
    undefined = pd.DataFrame({"0": [False, True], "1": [False, False]}, index=matrix.index)
    fig, ax = plt.subplots()
    figures.draw_heatmap(ax, matrix, 1.0, "MCC", "t", undefined=undefined, failed=["1"])
    texts = {(round(t.get_position()[0], 1), round(t.get_position()[1], 1)): t.get_text() for t in ax.texts}
    plt.close(fig)
    assert texts[(0.5, 1.5)] == figures.UNDEFINED_TEXT            # Conjunction, seed 0: undefined
    assert texts[(1.5, 0.5)] == "0.00"                            # a real 0.0 keeps its number
    assert texts[(0.5, 0.5)] == "0.50"
    assert list(texts.values()).count("0.00") == 1
    labels = [label.get_text() for label in ax.get_xticklabels()]
    assert labels == ["0", "1\n(failed)"]


def test_degenerate_column_of_a_hand_written_csv(tmp_path, capsys):
    csv = tmp_path / "r.csv"
    csv.write_text("lang,setup,seed,category,mcc,degenerate\n"
                   "fr,rte,0,Negation,0.0,true\nfr,rte,0,Conjunction,0.1,\nfr,rte,0,Datives,0.2,no\n")
    collected = collect([csv])
    flags = dict(zip(collected.results["category"], collected.degenerate))
    assert flags["Negation"] == True and flags["Datives"] == False and pd.isna(flags["Conjunction"])  # noqa: E712
    csv.write_text("lang,setup,seed,category,mcc,degenerate\nfr,rte,0,Negation,0.0,maybe\n")
    with pytest.raises(SystemExit):
        main([f"runs={csv}", "figures=false"])
    assert "r.csv:2: degenerate must be true or false" in capsys.readouterr().err
