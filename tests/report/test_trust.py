"""`## How far to trust these numbers` and calibration.csv: on the stored smoke sweep and on synthetic
runs with a comparison, the section comes first, every row is in calibration.csv with its Monte-Carlo
interval, the measured rates are the simulator's (the percentile σ interval found broken at few seeds),
the choice follows the rule, and the same options give the same file."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from report_runs import write_synthetic_runs

from stability.report.calibration import COLUMNS, choose
from stability.report.cli import main

SMOKE = Path(__file__).resolve().parents[1] / "fixtures" / "smoke_main_041fde0"
BOOTSTRAP = 100   # resamples of the report's intervals, and so of the simulated studies' percentile bootstraps


def _read(out: Path) -> pd.DataFrame:
    return pd.read_csv(out / "calibration.csv", keep_default_na=False, na_values=[""]) \
        .fillna({"reference": ""})


def _sections(out: Path) -> list[str]:
    return [line for line in (out / "report.md").read_text().splitlines() if line.startswith("## ")]


def test_the_smoke_sweep_gets_calibration_csv_and_the_first_section(tmp_path):
    out = tmp_path / "report"
    main([f"runs={SMOKE}", f"out={out}", f"bootstrap={BOOTSTRAP}", "figures=false", "calibration_sims=400"])
    assert _sections(out)[0] == "## How far to trust these numbers"
    table = _read(out)
    assert list(table.columns) == COLUMNS
    assert set(table["lang"]) == {"en"} and set(table["n_seeds"]) == {2}
    assert (table["sims"] == 400).all()
    assert ((table["mc_low"] <= table["measured"]) & (table["measured"] <= table["mc_high"])).all()
    normal = table[(table["statistic"] == "σ") & (table["world"] == "normal")].set_index("method")["measured"]
    # at 2 seeds the percentile bootstrap's σ interval misses the truth most of the time, χ²'s does not
    assert normal["percentile"].max() < 0.65 and normal["chi2"].min() > 0.9
    text = (out / "report.md").read_text()
    assert "| σ | χ² | 2 |" in text and "| σ | percentile bootstrap | 2 |" in text
    # bootstrap=0: the report prints no percentile interval, so none is simulated; the rest is as before
    main([f"runs={SMOKE}", f"out={tmp_path / 'none'}", "bootstrap=0", "figures=false", "calibration_sims=400"])
    without = _read(tmp_path / "none")
    assert "percentile" not in set(without["method"]) and "percentile bootstrap" not in \
        (tmp_path / "none" / "report.md").read_text()
    assert set(without["statistic"]) == set(table["statistic"])


@pytest.fixture(scope="module")
def compared(tmp_path_factory) -> Path:
    root = write_synthetic_runs(tmp_path_factory.mktemp("trust"))
    out = root.parent / "report"
    main([f"runs={root}", f"out={out}", f"bootstrap={BOOTSTRAP}", "figures=false", "calibration_sims=300",
          "compare=[rte,rte+mnli10000]", "random_state=4"])
    return out


def test_pairs_have_coverage_and_a_a_false_positive_rates_with_thresholds(compared):
    table = _read(compared)
    pairs = table[table["reference"] != ""]
    assert set(pairs["condition"]) == {"rte+mnli10000"} and set(pairs["reference"]) == {"rte"}
    assert set(pairs["n_seeds_reference"]) == {3}
    tests = pairs[(pairs["measure"] == "false positives") & (pairs["level"] != "family")]
    assert set(tests["statistic"]) == {"Welch's t-test", "Brown–Forsythe", "bootstrap Δ p", "ASO ε_min"}
    assert set(pairs.loc[pairs["level"] == "family", "statistic"]) == {"bootstrap Δ p, whole family"}
    assert (tests["nominal"] == 0.05).all()
    # at 3 vs 3 seeds: normal seeds need ε_min far below deepsig's 0.2 for 5 % false positives; the cells' own
    # runs resampled tie so often in some cells that more than 5 % of A/A studies have ε_min 0: no threshold there
    aso = tests[tests["statistic"] == "ASO ε_min"]
    assert (aso.loc[aso["world"] == "normal", "threshold"] < 0.2).all()
    assert aso.loc[aso["world"] == "resampling", "threshold"].isna().any()
    text = (compared / "report.md").read_text()
    assert "at 3 vs 3 seeds no ε_min threshold gives 5 % false positives" in text


def test_the_choice_is_nearest_nominal_among_those_reaching_it(compared):
    table = _read(compared)
    choices = choose(table)
    deciding = table[(table["measure"] == "coverage") & table["world"].isin(["normal", "heavy", "failed"])]
    worst = deciding.groupby(["lang", "condition", "reference", "level", "category", "statistic", "method"]) \
        .agg(measured=("measured", "min"), mc_high=("mc_high", "min"))
    for row in choices.itertuples():
        methods = worst.loc[(row.lang, row.condition, row.reference, row.level, row.category, row.statistic)]
        reaching = methods[methods["mc_high"] >= 0.95]
        if len(reaching):
            assert row.method == (reaching["measured"] - 0.95).abs().idxmin() and row.usable
        else:
            assert row.method == methods["measured"].idxmax()
            assert row.usable == (methods["measured"].max() >= 0.90)


def test_same_options_same_file_and_calibration_sims_zero_turns_it_off(compared, tmp_path):
    root = compared.parent / "outputs"
    again = tmp_path / "again"
    main([f"runs={root}", f"out={again}", f"bootstrap={BOOTSTRAP}", "figures=false", "calibration_sims=300",
          "compare=[rte,rte+mnli10000]", "random_state=4"])
    pd.testing.assert_frame_equal(_read(compared), _read(again))
    off = tmp_path / "off"
    main([f"runs={root}", f"out={off}", "bootstrap=0", "figures=false", "calibration_sims=0"])
    assert not (off / "calibration.csv").exists()
    assert "## How far to trust these numbers" not in (off / "report.md").read_text()


@pytest.mark.parametrize("sims", [-1, 10**9])   # 10⁹: gigabytes of simulated studies, refused before any
def test_a_simulation_count_out_of_range_is_one_line(tmp_path, capsys, sims):
    with pytest.raises(SystemExit) as exit_info:
        main([f"runs={SMOKE}", f"out={tmp_path / 'r'}", f"calibration_sims={sims}"])
    assert exit_info.value.code == 2
    assert "pass calibration_sims=<a number in [0, 10000]>" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
