"""A comparison's whole family in *How far to trust these numbers*: calibration.csv has, for `compare` and for
`compare_langs`, the A/A rate at which some cell of the family is significant before correction, after Holm
and after BH, with Monte-Carlo intervals, and the section's tests table names them."""
from __future__ import annotations

import pandas as pd
from report_runs import write_synthetic_runs

from stability.report.cli import main


def test_both_families_have_uncorrected_holm_and_bh_rows(tmp_path):
    runs = write_synthetic_runs(tmp_path)
    out = tmp_path / "report"
    main([f"runs={runs}", f"out={out}", "bootstrap=100", "figures=false", "calibration_sims=150",
          "compare=[rte,rte+mnli10000]", "compare_langs=[fr,de]", "random_state=4"])
    table = pd.read_csv(out / "calibration.csv", keep_default_na=False, na_values=[""])
    family = table[table["level"] == "family"]
    keys = set(zip(family["lang"], family["condition"], family["reference"]))
    assert keys == {("all languages", "rte+mnli10000", "rte"), ("de", "all conditions", "fr · all conditions")}
    assert set(family["method"]) == {"uncorrected", "Holm", "BH"} and (family["world"] == "resampling").all()
    assert (family["sims"] == 150).all()
    rates = family.set_index(["lang", "method"])["measured"]
    for lang in ("all languages", "de"):
        # every Holm rejection is a BH rejection, every BH rejection an uncorrected one
        assert rates[(lang, "Holm")] <= rates[(lang, "BH")] <= rates[(lang, "uncorrected")]
        # 74 cells at 3 vs 3 seeds: uncorrected, some cell is "significant" in most A/A comparisons
        assert rates[(lang, "uncorrected")] > 0.3
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "| bootstrap Δ p, whole family (Holm) | 3 vs 3 |" in text
    assert "of A/A comparisons have some cell with p < 0.05 before correction" in text
