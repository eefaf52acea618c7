"""The data maps' Fisher tests in *How far to trust these numbers*: a report on runs with training dynamics
and annotator features has their A/A false-positive rates in calibration.csv (uncorrected per test and
family-wise after Holm, each item world, its Monte-Carlo interval) and in the section's tests table."""
from __future__ import annotations

import pandas as pd
import test_data_map

from stability.report import cli as report_cli
from stability.report.cli import main
from stability.statistics.fisher_calibration import FISHER, HOLM, INDEPENDENT, UNCORRECTED


def test_fisher_rows_in_calibration_csv_and_the_tests_table(tmp_path, monkeypatch):
    monkeypatch.setattr(report_cli, "annotate_pairs", test_data_map.fake_report_annotate)
    root = test_data_map.write_runs(tmp_path / "runs", dynamics=True)
    out = tmp_path / "report"
    main([f"runs={root}", f"out={out}", "bootstrap=0", "figures=false", "calibration_sims=150"])
    calibration = pd.read_csv(out / "calibration.csv", keep_default_na=False, na_values=[""])
    fisher = calibration[calibration["statistic"] == FISHER].set_index(["world", "method"])
    features = pd.read_csv(out / "data_map_features.csv", keep_default_na=False, na_values=[""])
    tested = int(features["p_ambiguous"].notna().sum())
    assert tested >= 1
    # the training pairs share no sentence: only the independent world; 150 studies, each testing every feature
    assert set(fisher.index) == {(INDEPENDENT, UNCORRECTED), (INDEPENDENT, HOLM)}
    assert fisher.loc[(INDEPENDENT, HOLM), "sims"] == 150
    assert fisher.loc[(INDEPENDENT, UNCORRECTED), "sims"] == 150 * tested
    assert (fisher["level"] == "data map").all() and (fisher["n_seeds"] == 3).all()
    assert ((fisher["mc_low"] <= fisher["measured"]) & (fisher["measured"] <= fisher["mc_high"])).all()
    # Fisher's test is exact: on independent items it holds its 5 % within Monte-Carlo error
    assert (fisher["mc_low"] <= 0.05).all()
    text = (out / "report.md").read_text(encoding="utf-8")
    section = text[text.index("## How far to trust these numbers"):].split("\n## ")[0]
    assert "*independent items*" in section
    assert f"| {FISHER} ({HOLM}) | 3 |" in section and f"| {FISHER} ({UNCORRECTED}) | 3 |" in section
