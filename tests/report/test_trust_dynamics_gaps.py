"""Dynamics validations are matched by their number: with one seed's `validation-0001.parquet`
missing, that seed is a gap at validation 1 (not its second validation counted as its first),
`category_learning.csv` counts it at validations 2 and 3 only, and report.md names the gap.
An unreadable dynamics file's fix is force=true, which keeps the run."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from report_runs import write_dynamics, write_run

from stability.core.errors import UserError
from stability.core.metrics import mcc
from stability.core.runrecord import RunDir
from stability.report.cli import main

N_ITEMS = 40
CATEGORIES = [["Negation"] if i % 2 else ["Common sense"] for i in range(N_ITEMS)]


def _items() -> pd.DataFrame:
    labels = np.arange(N_ITEMS) % 2
    return pd.DataFrame({"split": "diagnostic", "idx": [str(i) for i in range(N_ITEMS)],
                         "label": labels.astype(np.int8), "premise": "p", "hypothesis": "h",
                         "categories": CATEGORIES})


def _runs(root, rng) -> dict[int, np.ndarray]:
    """Two seeds of en / rte with 3 validations each: (validations, items) predictions."""
    labels = np.arange(N_ITEMS) % 2
    made = {}
    for seed in (0, 1):
        pred = np.array([np.where(rng.random(N_ITEMS) < 0.5 + 0.2 * v, labels, 1 - labels) for v in range(3)],
                        dtype=np.int8)
        run = write_run(root, "en", "rte", seed, labels, pred[-1], CATEGORIES)
        write_dynamics(run, _items(), np.where(pred == 0, 0.9, 0.1).astype(np.float32), pred)
        made[seed] = pred
    return made


def test_a_missing_validation_is_a_gap_by_its_number_and_named_in_the_report(tmp_path):
    preds = _runs(tmp_path / "runs", np.random.default_rng(1))
    gap = tmp_path / "runs" / "en_rte_seed1"
    (gap / "dynamics" / "validation-0001.parquet").unlink()

    dynamics = RunDir(gap).read_dynamics()
    assert dynamics.missing == (1,) and dynamics.recorded.tolist() == [False, True, True]
    assert (dynamics.pred[0] == -1).all() and np.isnan(dynamics.prob_entailment[0]).all()
    np.testing.assert_array_equal(dynamics.pred[1:], preds[1][1:])      # validations 2 and 3 stay 2 and 3

    out = tmp_path / "report"
    main([f"runs={tmp_path / 'runs'}", f"out={out}", "bootstrap=0", "figures=false"])
    curves = pd.read_csv(out / "category_learning.csv")
    overall = curves[curves["category"] == "overall"].set_index("validation")
    assert overall["n_seeds"].to_dict() == {1: 1, 2: 2, 3: 2}
    labels = (np.arange(N_ITEMS) % 2).tolist()
    # validation 1 is seed 0's alone; seed 1's second validation is not taken for its first
    assert overall.loc[1, "mean_mcc"] == pytest.approx(mcc(labels, preds[0][0].tolist()))
    assert overall.loc[2, "mean_mcc"] == pytest.approx(np.mean([mcc(labels, preds[s][1].tolist()) for s in (0, 1)]))
    text = (out / "report.md").read_text(encoding="utf-8")
    assert f"Gap: {gap}: no training dynamics of validation 1 (file missing)" in text


def test_an_unreadable_dynamics_file_names_force_true_as_its_fix(tmp_path):
    _runs(tmp_path / "runs", np.random.default_rng(2))
    broken = tmp_path / "runs" / "en_rte_seed0" / "dynamics" / "validation-0002.parquet"
    broken.write_bytes(b"not parquet")
    with pytest.raises(UserError) as refused:
        RunDir(broken.parent.parent).read_dynamics()
    assert str(refused.value).endswith("(fix: run its training command again with force=true, which keeps this "
                                       "run under replaced/)")
    assert "delete" not in str(refused.value)
