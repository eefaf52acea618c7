"""benchmarks/adaptive_seeds.py, its CPU path: the study's σ spread, and figures that agree with each
other and with the statistics they come from."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from forked_cli import run_script

from stability.statistics.sequential import boundaries, information_fractions

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "adaptive_seeds.py"
sys.path.append(str(SCRIPT.parent))
import adaptive_seeds  # noqa: E402  (benchmarks/ is not a package)


def test_sigmas_have_the_studys_median_quartiles_and_range():
    sigmas = adaptive_seeds.draw_sigmas(np.random.default_rng(0), 200_000)
    assert np.quantile(sigmas, [0.25, 0.5, 0.75]) == pytest.approx([0.09, 0.12, 0.19], abs=0.002)
    assert 0 <= sigmas.min() < 0.002 and 0.338 < sigmas.max() <= 0.34


def test_cpu_path_prints_runs_and_error_rates_that_agree(tmp_path):
    figures = tmp_path / "figures.json"
    done = run_script(SCRIPT, ["--sims", "20", "--targets", "0.5", "--max-seeds", "12",
                               "--json", str(figures)], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(figures.read_text())
    assert result["design"]["precision_looks"] == [3, 6, 9, 12]
    for row in result["precision"]:
        shares = row["seeds_per_condition"]
        assert sum(shares.values()) == pytest.approx(1)
        # runs are the conditions' seeds at their stops
        assert row["adaptive_runs"] == pytest.approx(10 * sum(int(k) * share for k, share in shares.items()))
        assert 30 <= row["adaptive_runs"] <= row["fixed_max_runs"] == 120
        assert row["ratio_same_precision"] == pytest.approx(row["adaptive_runs"] / row["fixed_same_precision_runs"])
        assert 0 <= row["reached_share"] <= 1
        assert 0.8 < row["coverage"]["rate"] <= 1
    for row in result["decision"]:
        bounds = boundaries(information_fractions([3, 6, 9]), 0.05, row["spending"])
        assert row["bounds"] == pytest.approx(bounds, abs=1e-4)
        # every bound is above 1.96: a sequential rejection is a rejection of the naive rule on the same draws
        assert row["naive_false_positives"]["rate"] >= row["false_positives"]["rate"]
        assert 3 <= row["seeds_per_arm"] <= 9 and row["fixed_runs"] == 90
        assert row["runs"] <= row["fixed_runs"]
    lines = done.stdout.splitlines()
    assert sum(line.startswith("| normal | 0.5 |") or line.startswith("| heavy | 0.5 |") for line in lines) == 2
    assert any("runs saved" in line for line in lines)


def test_wrong_arguments_are_refused_in_one_line(tmp_path):
    done = run_script(SCRIPT, ["--looks", "6", "3"], tmp_path)
    assert done.returncode == 2
    assert "--looks must be increasing" in done.stderr.splitlines()[-1]
