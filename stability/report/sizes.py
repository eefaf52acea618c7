"""Data-size curves: how seed statistics move with the number of added MNLI examples.

Setup names follow the training configs: `rte`, `rte+mnli<N>`, `rte+mnli_all`, optionally
with a feature-control suffix (`rte+mnli10000+Negation50`). A curve joins the setups of
one *family* (the name without its `+mnli...` part), so a controlled subset is never
drawn as if it were a different data size of the plain setup.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

_SETUP_NAME = re.compile(r"^rte(?:\+mnli(\d+|_all))?(?:\+.+)?$")
_MNLI_PART = re.compile(r"\+mnli(?:\d+|_all)(?=\+|$)")

SIZE_CURVE_COLUMNS = ["lang", "n_added", "setup", "overall_mcc_mean", "overall_mcc_std", "rs_corr",
                      "family", "mean_category_mcc_mean", "mean_category_mcc_std"]


def n_added_from_setup(setup: str) -> float:
    """MNLI examples added, read from the setup name: `rte` → 0, `rte+mnli<N>` → N.

    NaN when the name does not say (`rte+mnli_all`, names outside the convention);
    run directories carry the real count in metrics.json instead.
    """
    match = _SETUP_NAME.match(setup)
    if match is None or match.group(1) == "_all":
        return float("nan")
    return float(match.group(1) or 0)


def setup_family(setup: str) -> str:
    """The setup name without its MNLI-size part: the setups one size curve joins."""
    return _MNLI_PART.sub("", setup)


def size_curve(summary: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Seed statistics against n_added, for every (lang, family) with ≥ 2 distinct sizes."""
    sizes = results.groupby(["lang", "setup"], as_index=False)["n_added"].first()
    curve = summary.merge(sizes, on=["lang", "setup"]).dropna(subset=["n_added"])
    curve["family"] = curve["setup"].map(setup_family)
    n_sizes = curve.groupby(["lang", "family"])["n_added"].transform("nunique")
    curve = curve[n_sizes >= 2].copy()
    curve["n_added"] = curve["n_added"].astype(np.int64)
    return curve.sort_values(["lang", "family", "n_added"])[SIZE_CURVE_COLUMNS].reset_index(drop=True)
