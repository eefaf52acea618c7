"""Data-size curves: how seed statistics move with the number of added examples (MNLI, or
another NLI dataset mixed in, e.g. translate-train XNLI).

A curve joins the setups of one *family* (`stability.core.setups.setup_family`: the name
without its size) trained with one variant, so a controlled subset is never drawn as if it
were a different data size of the plain setup, nor a learning rate as a data size. The setup
with nothing added (`rte`) starts the MNLI curve and every other dataset's curve.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from stability.core.setups import family_start, setup_family
from stability.statistics.seeds import GROUP_KEY

SIZE_CURVE_COLUMNS = ["lang", "n_added", "setup", "variant", "overall_mcc_mean", "overall_mcc_std", "rs_corr",
                      "family", "mean_category_mcc_mean", "mean_category_mcc_std"]


def size_curve(summary: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Seed statistics against n_added, for every (lang, family, variant) with ≥ 2 distinct sizes."""
    sizes = results.groupby(GROUP_KEY, as_index=False)["n_added"].first()
    curve = summary.merge(sizes, on=GROUP_KEY).dropna(subset=["n_added"])
    curve["family"] = curve["setup"].map(setup_family)
    starts = [curve[curve["setup"] == family_start(family)].assign(family=family)
              for family in curve["family"].unique() if family_start(family)]
    curve = pd.concat([curve, *starts], ignore_index=True)
    n_sizes = curve.groupby(["lang", "family", "variant"])["n_added"].transform("nunique")
    curve = curve[n_sizes >= 2].copy()
    curve["n_added"] = curve["n_added"].astype(np.int64)
    return curve.sort_values(["lang", "family", "variant", "n_added"])[SIZE_CURVE_COLUMNS].reset_index(drop=True)
