"""Almost stochastic order between two seed distributions (Dror et al. 2019; del Barrio et al. 2018).

A mean difference says nothing about how the seeds of two conditions overlap; stochastic
order does: A dominates B when every quantile of A's scores is at least B's. Almost
stochastic order (ASO) measures how much that is violated, as the share of the squared
Wasserstein distance between the two quantile functions where A lies below B, and ε_min is
a bootstrap upper confidence bound of that share:

    ε_min(A over B) = 0    A stochastically dominates B
    ε_min(A over B) < 0.5  A is almost stochastically better than B
    ε_min(A over B) ≈ 0.5  no order (as often when the seeds overlap)

The computation is the `deepsig` package's (`aso`, `multi_aso`), an optional extra; every
call passes a `seed`, so the same scores give the same ε_min (deepsig seeds numpy's global
random state from it; nothing here draws from that state). Many comparisons at once are
Bonferroni-corrected through the confidence level of the bound (`bonferroni_confidence`).
`aso_available()` tells the report whether the extra is installed; without it the report
leaves ASO out and says `MISSING_NOTE`. deepsig's bootstrap runs in Python, milliseconds per iteration, so the
number of `iterations` is an argument.
"""
from __future__ import annotations

import importlib.util
import warnings
from types import ModuleType
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from stability.core.errors import require

EXTRA = "stats"
MISSING_NOTE = (f"Almost stochastic order (ε_min) needs the optional extra: "
                f"pip install 'nli-stability[{EXTRA}]'")
ASO_COLUMNS = ["eps_min_b_over_a", "eps_min_a_over_b", "n_seeds_a", "n_seeds_b"]
CONFIDENCE = 0.95
ITERATIONS = 1000
# deepsig warns when both distributions are identical (it then sets the violation ratio to 0.5);
# with MCC 0.0 for every seed of both sides that is common and not worth a warning.
_IDENTICAL = "Division by zero encountered in violation ratio."


def aso_available() -> bool:
    """Whether deepsig (the `stats` extra) is installed, without importing it."""
    return importlib.util.find_spec("deepsig") is not None


def _deepsig() -> ModuleType:
    return require("deepsig", "almost stochastic order needs the deepsig package",
                   fix=f"pip install 'nli-stability[{EXTRA}]'")


def bonferroni_confidence(confidence: float, comparisons: int) -> float:
    """1 − (1 − c) / m: the confidence level each of m comparisons needs for family-wise level c.

    deepsig's own options (`aso(num_comparisons=m)`, `multi_aso(use_bonferroni=True)`) raise
    c to c + (1 − c) / m instead, i.e. α to α · (1 − 1/m): right only for m = 2, no
    correction as m grows, and α = 0 (every ε_min 1) for the single pair of a two-condition
    `multi_aso`. So the corrected level is computed here and deepsig's options stay off.
    """
    return 1.0 - (1.0 - confidence) / max(comparisons, 1)


def epsilon_min(scores_a: ArrayLike, scores_b: ArrayLike, *, seed: int, confidence: float = CONFIDENCE,
                comparisons: int = 1, iterations: int = ITERATIONS) -> float:
    """ε_min(A over B) of `deepsig.aso`: 0 = A dominates B, 0.5 = no order.

    `comparisons` > 1: Bonferroni over that many comparisons (`bonferroni_confidence`).
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_IDENTICAL)
        return float(_deepsig().aso(np.asarray(scores_a, float), np.asarray(scores_b, float),
                                    confidence_level=bonferroni_confidence(confidence, comparisons),
                                    num_bootstrap_iterations=iterations, show_progress=False, seed=seed))


def epsilon_min_matrix(scores: Mapping[str, ArrayLike], *, seed: int, confidence: float = CONFIDENCE,
                       comparisons: int | None = None, iterations: int = ITERATIONS) -> pd.DataFrame:
    """ε_min of every ordered pair of conditions by `deepsig.multi_aso`: row A, column B = ε_min(A over B).

    Bonferroni over `comparisons` (default: the k(k − 1)/2 pairs of the k conditions; 1
    for none). Both directions of a pair come from one bootstrap (deepsig uses
    ε_W(A, B) = 1 − ε_W(B, A)); the first-named condition of a pair is bootstrapped as
    `deepsig.aso(A, B)` is. The diagonal (a condition against itself) is NaN.
    """
    pairs = len(scores) * (len(scores) - 1) // 2 if comparisons is None else comparisons
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_IDENTICAL)
        matrix = _deepsig().multi_aso({name: np.asarray(values, float) for name, values in scores.items()},
                                      confidence_level=bonferroni_confidence(confidence, pairs),
                                      use_bonferroni=False, num_bootstrap_iterations=iterations,
                                      return_df=True, show_progress=False, seed=seed)
    values = matrix.to_numpy(dtype=float, copy=True)
    np.fill_diagonal(values, np.nan)
    return pd.DataFrame(values, index=matrix.index, columns=matrix.columns)


def aso_table(scores: pd.DataFrame, by: Sequence[str], condition: str, a: str, b: str, *, seed: int,
              value: str = "mcc", confidence: float = CONFIDENCE, bonferroni: bool = True,
              iterations: int = ITERATIONS) -> pd.DataFrame:
    """ε_min between the seed scores of conditions `a` and `b`, per group of `by`.

    `scores` has one row per run and cell: the `by` columns, `condition` (e.g. `setup`,
    or `lang` for languages on one setup), `value` (the seed's score). Each group where
    both conditions have scores is one comparison; with `bonferroni` the confidence level
    is corrected for all m of them (`bonferroni_confidence`).
    Columns: the `by` columns; `eps_min_b_over_a` (ε_min(B over A): small when B is
    better, the direction of Δ = B − A); `eps_min_a_over_b`; `n_seeds_a`, `n_seeds_b`.
    Both directions come from one `multi_aso` bootstrap per group; `eps_min_b_over_a`
    equals `deepsig.aso(B, A)` with the same seed and level.
    """
    groups = [(key, cell) for key, cell in scores.groupby(list(by), sort=True)
              if {a, b} <= set(cell[condition])]
    family = len(groups) if bonferroni else 1
    rows = []
    for key, cell in groups:
        # b first: its row is deepsig's direct bootstrap, equal to aso(b, a)
        side = {name: cell.loc[cell[condition] == name, value].to_numpy(float) for name in (b, a)}
        matrix = epsilon_min_matrix(side, seed=seed, confidence=confidence, comparisons=family,
                                    iterations=iterations)
        rows.append([*key, matrix.loc[b, a], matrix.loc[a, b], len(side[a]), len(side[b])])
    return pd.DataFrame(rows, columns=[*by, *ASO_COLUMNS])
