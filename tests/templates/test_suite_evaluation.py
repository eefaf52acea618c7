"""A smoke run scored on a generated suite: per-category MCC like any diagnostic set, and the
report's per-template / per-feature accuracy table."""
from __future__ import annotations

from collections import Counter

import pytest
from forked_cli import run_module
from helpers import QUICK, QUICK_VARIANT, predictions, runs, train_cli

from stability.core.taxonomy import FINE_CATEGORIES


@pytest.mark.slow
def test_smoke_run_on_a_generated_suite_and_its_report(tmp_path):
    out = tmp_path / "outputs"
    result = train_cli([*QUICK, "seed=0", "hydra.mode=RUN", "data.diagnostic=generated", "data.suite.n=4",
                        f"paths.output_dir={out}"], tmp_path)
    assert result.returncode == 0, result.stderr
    # a folder of its own: the ordinary smoke run of seed 0 is left alone
    metrics = runs(out)[f"smoke@suite-all-n4-seed0/en/rte/{QUICK_VARIANT}/seed0"]
    # 30 English templates × 4 items; every category scored, the suite's ones on their items
    assert metrics["n_items"] == 120 and set(metrics["category_mcc"]) == set(FINE_CATEGORIES)
    assert metrics["category_n"]["Negation"] == 8 and metrics["category_n"]["Intervals/Numbers"] == 16
    assert metrics["category_n"]["Relative clauses"] == 16 and metrics["category_n"]["Factivity"] == 0
    assert all(-1 <= value <= 1 for value in metrics["category_mcc"].values())
    items = predictions(out / f"smoke@suite-all-n4-seed0/en/rte/{QUICK_VARIANT}/seed0")
    assert Counter(item["template"] for item in items)["negation.entailed"] == 4
    assert all(set(item["features"]) <= {"name.GENDER", "name1.GENDER", "name2.GENDER"} for item in items)

    report = run_module("stability.report", [f"runs={out}", "bootstrap=20", "figures=false", "calibration_sims=0"],
                        tmp_path, timeout=300)
    assert report.returncode == 0, report.stderr
    folder = out / "report"
    text = (folder / "report.md").read_text(encoding="utf-8")
    section = text[text.index("## Test suites: accuracy per template and feature"):]
    assert "| template | label | category | category MCC | items | accuracy |" in section
    assert "| negation.entailed | entailment | Negation |" in section
    assert "| name.GENDER | " in section
    table = (folder / "template_accuracy.csv").read_text(encoding="utf-8").splitlines()
    assert table[0] == ("lang,setup,variant,template,label,categories,feature,value,n_items,n_seeds,accuracy_mean,"
                        "accuracy_std")
    assert len(table) > 30
