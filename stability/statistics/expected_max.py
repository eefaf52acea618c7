"""Expected best validation score over n runs (Dodge et al. 2019, "Show Your Work").

"We ran 10 seeds and report the best" hides how much the best depends on the number of
runs. Treating the N finished runs as the empirical distribution of a run's outcome and
drawing n of them with replacement, the expected maximum has a closed form: with the
validation scores sorted v_(1) ≤ … ≤ v_(N),

    E[max_n] = Σ_i v_(i) · [(i / N)^n − ((i − 1) / N)^n],    n = 1, 2, …

since (i / N)^n is the probability that all n draws are at most v_(i). n = 1 gives the
mean, large n the maximum. The same weights, over runs sorted by validation score, give
the expected value of any other score of the run that the best validation score selects
(e.g. the diagnostic overall MCC: does picking the best-validating seed pick a better
diagnostic model?). Runs tied on the validation score are selected with equal
probability, i.e. a tied group contributes the mean of its other scores (the exact
expectation when ties are broken at random).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

EXPECTED_MAX_COLUMNS = ["n", "n_runs", "expected_max_valid", "expected_selected_score"]


def max_weights(n_runs: int, n_max: int) -> np.ndarray:
    """(n_max, n_runs): row n − 1 holds P(the maximum of n draws is the i-th smallest of n_runs)."""
    fractions = np.arange(n_runs + 1) / n_runs
    powers = fractions[None, :] ** np.arange(1, n_max + 1, dtype=float)[:, None]
    return np.diff(powers, axis=1)


def expected_max(values: ArrayLike, n_max: int | None = None) -> np.ndarray:
    """E[max of n runs] for n = 1..n_max (default: the number of runs), by the closed form."""
    ordered = np.sort(np.asarray(values, dtype=float))
    return max_weights(len(ordered), n_max or len(ordered)) @ ordered


def expected_selected(select_by: ArrayLike, score: ArrayLike, n_max: int | None = None) -> np.ndarray:
    """E[`score` of the run with the best `select_by` among n runs], n = 1..n_max.

    Ties in `select_by` are broken at random: each tied run's `score` is replaced by the
    mean of its group before weighting.
    """
    frame = pd.DataFrame({"by": np.asarray(select_by, float), "score": np.asarray(score, float)})
    frame["score"] = frame.groupby("by")["score"].transform("mean")
    ordered = frame.sort_values("by", kind="stable")["score"].to_numpy()
    return max_weights(len(ordered), n_max or len(ordered)) @ ordered


def expected_max_table(runs: pd.DataFrame, by: Sequence[str] = ("lang", "setup"), valid: str = "val_accuracy",
                       score: str = "overall_mcc") -> pd.DataFrame:
    """Both curves per group of `by`, one row per n = 1..N (N = the group's runs).

    `runs` has one row per run with the `by` columns, `valid` and `score`; runs missing
    either are left out. Columns: the `by` columns; `n` (runs drawn); `n_runs` (N);
    `expected_max_valid` (E[max of n validation scores]); `expected_selected_score`
    (E[`score` of the best-validating of n runs]).
    """
    frames = []
    for key, group in runs.dropna(subset=[valid, score]).groupby(list(by), sort=True):
        n_runs = len(group)
        frames.append(pd.DataFrame({
            **dict(zip(by, key)), "n": np.arange(1, n_runs + 1), "n_runs": n_runs,
            "expected_max_valid": expected_max(group[valid]),
            "expected_selected_score": expected_selected(group[valid], group[score]),
        }))
    columns = [*by, *EXPECTED_MAX_COLUMNS]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)
