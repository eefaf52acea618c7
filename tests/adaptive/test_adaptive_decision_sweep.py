"""An adaptive sweep with the decision goal on the smoke data (tiny model, built-in data): two
learning rates compared in English, the z of each look recomputed here from the runs' metrics.json
with scipy's Welch test, the pair decided by the plan's boundary, both arms always run together."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from helpers import train_cli
from stability.core.adaptiverecord import OPEN, read_record
from stability.statistics.sequential import ACCEPT, REJECT, boundaries

A, B = "en/rte", "en/rte/lr0.002"


def _overall(out: Path, condition: str, seeds: int) -> np.ndarray:
    return np.array([json.loads((out / condition / f"seed{seed}" / "metrics.json").read_text())["overall_mcc"]
                     for seed in range(seeds)])


@pytest.mark.slow   # four to six smoke runs: minutes on a CPU
def test_a_decision_sweep_runs_both_arms_until_the_sequential_test_decides(tmp_path):
    out = tmp_path / "outputs" / "decision"
    result = train_cli(["experiment=smoke", "lang=en", "trainer.learning_rate=1e-3,2e-3", f"out={out}",
                        "adaptive=decision", "adaptive.compare=[rte,rte/lr0.002]", "adaptive.start=2",
                        "adaptive.max=3"], tmp_path)
    assert result.returncode == 0, result.stderr
    record = read_record(out)
    bounds = boundaries([2 / 3, 1.0])
    assert record.plan.goal["looks"] == [2, 3] and record.plan.goal["bounds"] == pytest.approx(bounds)
    for done in record.rounds:
        assert done.ran == [A, B]   # the pair runs together
        seeds = done.seeds[-1] + 1
        test = stats.ttest_ind(_overall(out, B, seeds), _overall(out, A, seeds), equal_var=False)
        z = float(np.sign(test.statistic) * stats.norm.isf(test.pvalue / 2))
        decision = done.decisions[B]
        assert decision["cells"][0]["z"] == pytest.approx(z, rel=1e-9) and decision["n_seeds"] == seeds
        crossed = abs(z) >= bounds[done.number - 1]
        expected = REJECT if crossed else (ACCEPT if done.number == 2 else OPEN)
        assert decision["state"] == done.decisions[A]["state"] == expected
    assert record.next_round() is None and len(record.rounds) == (1 if record.rounds[0].decisions[A]["state"] != OPEN
                                                                  else 2)
