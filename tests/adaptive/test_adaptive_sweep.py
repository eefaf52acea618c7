"""An adaptive sweep on the smoke data (tiny model, built-in data): rounds of ordinary multiruns,
seeds added only where the interval is still wide, a record that an interrupted sweep goes on
from, status lines and the report's section.

The interval widths are computed here from the runs' metrics.json with scipy's t interval (the
method the report's calibration chooses for these cells, which the record is checked to say), not
through the project's code; the target is set between the two conditions' widths after two
seeds, so the test knows which condition must get a third seed.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from forked_cli import run_module
from scipy import stats

from helpers import assert_one_line_error, train_cli
from stability.adaptive.sweep import run_adaptive
from stability.core.adaptiverecord import MAXIMUM, OPEN, REACHED, read_record
from stability.report.cli import main as report_main
from stability.train import train

CONDITIONS = ("en/rte", "fr/rte")


def _overall(out: Path, condition: str, seeds: int) -> np.ndarray:
    return np.array([json.loads((out / condition / f"seed{seed}" / "metrics.json").read_text())["overall_mcc"]
                     for seed in range(seeds)])


def _t_width(scores: np.ndarray) -> float:
    low, high = stats.t.interval(0.95, len(scores) - 1, loc=scores.mean(), scale=stats.sem(scores))
    return float(high - low)


def _stamps(out: Path) -> dict[str, int]:
    return {str(path.relative_to(out)): path.stat().st_mtime_ns for path in out.rglob("metrics.json")}


@pytest.mark.slow   # five smoke runs (four of a fixed sweep, one of round 2) and a small report: minutes on a CPU
def test_an_adaptive_sweep_adds_seeds_only_where_the_interval_is_wide_and_goes_on_after_an_interrupt(tmp_path):
    out = tmp_path / "outputs" / "adaptive"
    base = ["experiment=smoke", "lang=en,fr", f"out={out}"]
    fixed = train_cli([*base, "seed=0,1"], tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    widths = {condition: _t_width(_overall(out, condition, 2)) for condition in CONDITIONS}
    narrow, wide = sorted(CONDITIONS, key=widths.get)
    assert widths[wide] > 1.3 * widths[narrow], widths   # the smoke runs' seeds differ enough to tell them apart
    target = math.sqrt(widths[narrow] * widths[wide])
    adaptive = [*base, "adaptive=precision", "adaptive.start=2", "adaptive.max=3", f"adaptive.target={target:.6f}"]
    before = _stamps(out)

    def interrupted_after_round_one(line: list[str], ready=None) -> None:
        record = read_record(out)
        if record is not None and record.rounds:   # round 1's decisions are written: killed before round 2 trains
            raise KeyboardInterrupt
        train(line, ready)

    with pytest.raises(KeyboardInterrupt):
        run_adaptive(adaptive, interrupted_after_round_one)
    first = read_record(out)
    assert first is not None and len(first.rounds) == 1
    round_one = first.rounds[0]
    assert (round_one.seeds, round_one.ran) == ([0, 1], list(CONDITIONS))
    for condition, state in ((narrow, REACHED), (wide, OPEN)):
        decision = round_one.decisions[condition]
        assert decision["cells"][0]["method"] == "t" and decision["n_seeds"] == 2
        assert decision["width"] == pytest.approx(widths[condition], rel=1e-9) and decision["state"] == state
    assert _stamps(out) == before   # round 1 found the fixed sweep's runs: none trained again

    resumed = train_cli(adaptive, tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    final = read_record(out)
    assert final.rounds[0] == round_one   # not decided again
    assert len(final.rounds) == 2 and final.next_round() is None
    round_two = final.rounds[1]
    assert (round_two.seeds, round_two.ran) == ([2], [wide])
    assert (out / wide / "seed2" / "metrics.json").is_file() and not (out / narrow / "seed2").exists()
    assert {name: stamp for name, stamp in _stamps(out).items() if name in before} == before
    width = _t_width(_overall(out, wide, 3))
    decision = round_two.decisions[wide]
    if decision["cells"][0]["method"] == "t":
        assert decision["width"] == pytest.approx(width, rel=1e-9)
        assert decision["state"] == (REACHED if width < target else MAXIMUM)
    else:   # no usable interval at three seeds: the maximum ends it
        assert decision["width"] is None and decision["state"] == MAXIMUM
    assert "round 2: seeds 2 for 1 condition" in resumed.stdout

    record = (out / "adaptive.json").read_bytes()
    other = train_cli([*adaptive[:-1], f"adaptive.target={2 * target:.6f}"], tmp_path)
    assert_one_line_error(other, "adaptive.json", "another plan (goal.target:", "out=<another folder>")
    assert (out / "adaptive.json").read_bytes() == record

    status = run_module("stability.status", [f"runs={out}"], tmp_path)
    assert status.returncode == 0, status.stderr
    assert "round 1: seeds 0–1 for 2 conditions: 1 open, 1 reached" in status.stdout
    assert "done after 2 rounds" in status.stdout

    report_main([f"runs={out}", f"out={tmp_path / 'report'}", "figures=false", "bootstrap=100", "calibration_sims=50"])
    page = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "## Adaptive design" in page and "come from an adaptive sweep" in page
    assert f"| 1 | 0, 1 | 2 | {narrow} |" in page and f"| 2 | 2 | 1 | {wide} |" in page
