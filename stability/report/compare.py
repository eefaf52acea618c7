"""Setup deltas (DESIGN.md section 4): does setup B shift and stabilise the category MCCs of A?

Cells are (language, fine category). A cell counts when ΔMCC > the MCC threshold and
(separately) when Δσ < the σ threshold, both strict. Deltas are rounded to 12 decimals
before the comparison so that floating-point noise (0.3 − 0.2 = 0.09999…) does not decide
whether a cell sits exactly on a threshold.
"""
from __future__ import annotations

import pandas as pd

from stability.core.errors import UserError

DELTA_COLUMNS = ["lang", "category", "coarse", "mcc_mean_a", "mcc_std_a", "mcc_mean_b", "mcc_std_b",
                 "delta_mcc", "delta_std"]
SHARE_COLUMNS = ["lang", "n_cells", "n_delta_mcc_above", "share_delta_mcc_above",
                 "n_delta_std_below", "share_delta_std_below"]
ALL_LANGUAGES = "all"
_DECIMALS = 12


def check_setups(results: pd.DataFrame, setup_a: str, setup_b: str) -> None:
    """Fail early, before any work, when a compared setup is absent or shares no language."""
    available = sorted(results["setup"].unique())
    for setup in (setup_a, setup_b):
        if setup not in available:
            raise UserError(f"--compare: setup {setup!r} not in the results",
                            fix=f"choose among {', '.join(available)}")
    langs = results.groupby("setup")["lang"].agg(set)
    if not langs[setup_a] & langs[setup_b]:
        raise UserError(f"--compare: {setup_a!r} and {setup_b!r} share no language",
                        fix="compare setups trained on the same language")


def setup_deltas(stats: pd.DataFrame, setup_a: str, setup_b: str) -> pd.DataFrame:
    """ΔMCC = mean_B − mean_A and Δσ = σ_B − σ_A per (lang, category) present in both setups."""
    keys = ["lang", "category", "coarse"]
    columns = keys + ["mcc_mean", "mcc_std"]
    a = stats.loc[stats["setup"] == setup_a, columns]
    b = stats.loc[stats["setup"] == setup_b, columns]
    deltas = a.merge(b, on=keys, suffixes=("_a", "_b"), sort=False)
    deltas["delta_mcc"] = deltas["mcc_mean_b"] - deltas["mcc_mean_a"]
    deltas["delta_std"] = deltas["mcc_std_b"] - deltas["mcc_std_a"]
    return deltas[DELTA_COLUMNS]


def delta_shares(deltas: pd.DataFrame, mcc_threshold: float, std_threshold: float) -> pd.DataFrame:
    """Share of cells with ΔMCC > mcc_threshold and with Δσ < std_threshold, per language and overall.

    A share's denominator is the cells where that delta is defined (Δσ needs ≥ 2 seeds).
    """
    delta_mcc = deltas["delta_mcc"].round(_DECIMALS)
    delta_std = deltas["delta_std"].round(_DECIMALS)
    flags = pd.DataFrame({
        "lang": deltas["lang"], "cells": 1,
        "mcc_defined": delta_mcc.notna(), "mcc_above": delta_mcc > mcc_threshold,
        "std_defined": delta_std.notna(), "std_below": delta_std < std_threshold,
    })
    per_lang = flags.groupby("lang", sort=True).sum()
    per_lang.loc[ALL_LANGUAGES] = per_lang.sum()
    return pd.DataFrame({
        "lang": per_lang.index,
        "n_cells": per_lang["cells"].to_numpy(),
        "n_delta_mcc_above": per_lang["mcc_above"].to_numpy(),
        "share_delta_mcc_above": (per_lang["mcc_above"] / per_lang["mcc_defined"]).to_numpy(),
        "n_delta_std_below": per_lang["std_below"].to_numpy(),
        "share_delta_std_below": (per_lang["std_below"] / per_lang["std_defined"]).to_numpy(),
    }, columns=SHARE_COLUMNS)
