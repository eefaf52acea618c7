"""Deltas between two conditions (docs/design.md, "Metrics"): does condition B shift
and stabilise the category MCCs of A?

A *condition* is a setup and one of its variants, written `setup` (the variant "", the
experiment as configured) or `setup/variant`: `compare=[rte,rte+mnli_all]` compares two
training-data setups, `compare=[rte,rte/lr3e-05]` two learning rates of one setup. Cells are (language, fine category). A cell counts when ΔMCC > the MCC threshold and
(separately) when Δσ < the σ threshold, both strict. Deltas are rounded to 12 decimals
before the comparison so that floating-point noise (0.3 − 0.2 = 0.09999…) does not decide
whether a cell sits exactly on a threshold.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from stability.core.errors import UserError
from stability.statistics.seeds import CONDITION_SEPARATOR, condition_name

DELTA_COLUMNS = ["lang", "category", "coarse", "mcc_mean_a", "mcc_std_a", "mcc_mean_b", "mcc_std_b",
                 "delta_mcc", "delta_std"]
SHARE_COLUMNS = ["lang", "n_cells", "n_delta_mcc_above", "share_delta_mcc_above",
                 "n_delta_std_below", "share_delta_std_below"]
ALL_LANGUAGES = "all"
_DECIMALS = 12


@dataclass(frozen=True)
class Condition:
    """A setup and one of its variants: the seeds of a condition in one language are one group."""

    setup: str
    variant: str = ""

    @classmethod
    def parse(cls, text: str) -> Condition:
        """`rte` → (rte, ""), `rte/lr3e-05` → (rte, lr3e-05)."""
        setup, _, variant = text.partition(CONDITION_SEPARATOR)
        return cls(setup, variant)

    @property
    def key(self) -> tuple[str, str]:
        return self.setup, self.variant

    def rows(self, table: pd.DataFrame) -> pd.Series:
        """Which rows of a table with setup and variant columns belong to the condition."""
        return (table["setup"] == self.setup) & (table["variant"] == self.variant)

    def __str__(self) -> str:
        return condition_name(self.setup, self.variant)


def check_conditions(results: pd.DataFrame, condition_a: str, condition_b: str) -> None:
    """Fail early, before any work, when a compared condition is absent or shares no language,
    or is compared with itself (every delta would be zero)."""
    if Condition.parse(condition_a) == Condition.parse(condition_b):
        raise UserError(f"compare: {condition_a!r} and {condition_b!r} are the same condition",
                        fix="compare two conditions, e.g. compare=[rte,rte+mnli10000] or compare=[rte,rte/lr3e-05]")
    langs = results.groupby(["setup", "variant"])["lang"].agg(set)
    available = ", ".join(condition_name(setup, variant) for setup, variant in langs.index)
    keys = []
    for text in (condition_a, condition_b):
        key = Condition.parse(text).key
        if key not in langs.index:
            raise UserError(f"compare: {text!r} not in the results",
                            fix=f"choose among {available} (a setup, or setup/variant)")
        keys.append(key)
    if not langs[keys[0]] & langs[keys[1]]:
        raise UserError(f"compare: {condition_a!r} and {condition_b!r} share no language",
                        fix="compare conditions trained on the same language")


def check_languages(results: pd.DataFrame, lang_a: str, lang_b: str) -> None:
    """Fail early when a compared language is absent or the two share no condition."""
    conditions = results.groupby("lang")[["setup", "variant"]].apply(lambda part: set(part.itertuples(index=False)))
    for lang in (lang_a, lang_b):
        if lang not in conditions.index:
            raise UserError(f"compare_langs: no runs of {lang!r} in the results",
                            fix=f"choose among {', '.join(conditions.index)}")
    if not conditions[lang_a] & conditions[lang_b]:
        raise UserError(f"compare_langs: {lang_a!r} and {lang_b!r} share no condition (setup and variant)",
                        fix="compare languages trained under the same setup")


def setup_deltas(stats: pd.DataFrame, condition_a: str, condition_b: str) -> pd.DataFrame:
    """ΔMCC = mean_B − mean_A and Δσ = σ_B − σ_A per (lang, category) present in both conditions."""
    keys = ["lang", "category", "coarse"]
    columns = keys + ["mcc_mean", "mcc_std"]
    a = stats.loc[Condition.parse(condition_a).rows(stats), columns]
    b = stats.loc[Condition.parse(condition_b).rows(stats), columns]
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
