"""How many seeds: the seed-power table of the report (`seed_power.csv`) from the runs' MCCs.

Per condition (lang, setup, variant) and category (fine, coarse, and `overall`), the σ of
MCC over its seeds gives, for the *independent* design (this condition against another
trained separately and assumed as variable), the minimum detectable ΔMCC with the seeds it
has and the seeds per side needed for ΔMCC = `power_delta` (`stability.statistics.power`,
α = 0.05, power 0.8). A comparison (`compare=[A,B]`, `compare_langs=[A,B]`) adds the
*paired* design: the runs of A and B with the same seed number are paired, and σ is that of
their per-seed differences B − A.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from pandas.api.typing import SeriesGroupBy

from stability.core.errors import UserError
from stability.core.markdown import num
from stability.report.collect import OVERALL
from stability.report.compare import Condition
from stability.statistics.power import power_table
from stability.statistics.seeds import GROUP_KEY, condition_name

POWER_FILE = "seed_power.csv"
SEED_POWER_COLUMNS = ["comparison", "lang", "setup", "variant", "level", "category", "design", "n_seeds", "sigma",
                      "min_detectable_delta", "target_delta", "seeds_needed"]
CELL = ["level", "category"]
MIN_SEEDS = 2
SUMMARY_KEY = ["comparison", "design", "lang", "setup", "variant"]


def _spread(values: SeriesGroupBy) -> pd.DataFrame:
    """n_seeds and σ (ddof = 1) per group, groups with at least two seeds."""
    spread = values.agg(n_seeds="count", sigma="std").reset_index()
    return spread[spread["n_seeds"] >= MIN_SEEDS]


def condition_sigmas(results: pd.DataFrame) -> pd.DataFrame:
    """σ of MCC over the seeds of each (lang, setup, variant, level, category)."""
    return _spread(results.groupby([*GROUP_KEY, *CELL], sort=True)["mcc"])


def paired_sigmas(results: pd.DataFrame, side: pd.Series, a: str, b: str, keys: Sequence[str]) -> pd.DataFrame:
    """σ of the per-seed differences B − A per (keys, level, category); `side` names each result
    row's side (a condition or a language), and runs of A and B pair by seed number."""
    chosen = side.isin([a, b])
    wide = results[chosen].assign(side=side[chosen]).pivot(index=[*keys, *CELL, "seed"], columns="side", values="mcc")
    differences = (wide[b] - wide[a]).dropna() if {a, b} <= set(wide.columns) else pd.Series(dtype=float)
    if differences.empty:
        return pd.DataFrame(columns=[*keys, *CELL, "n_seeds", "sigma"])
    return _spread(differences.groupby(level=[*keys, *CELL], sort=True))


def seed_power(results: pd.DataFrame, compare: list[str] | None, compare_langs: list[str] | None,
               delta: float) -> pd.DataFrame:
    """seed_power.csv: independent rows per condition (`comparison` empty), paired rows per compared
    language (`compare`: setup and variant empty) or condition (`compare_langs`: lang empty).
    A category without diagnostic items (MCC 0 in every seed by construction) has no row."""
    results = results[results["n_items"].fillna(1) > 0]
    frames = [_design(condition_sigmas(results), "independent", "", delta)]
    if compare:
        a, b = (str(Condition.parse(condition)) for condition in compare)
        side = pd.Series([condition_name(*key) for key in zip(results["setup"], results["variant"])],
                         index=results.index)
        frames.append(_design(paired_sigmas(results, side, a, b, ["lang"]), "paired", f"{b} − {a}", delta))
    if compare_langs:
        a, b = compare_langs
        frames.append(_design(paired_sigmas(results, results["lang"], a, b, ["setup", "variant"]), "paired",
                              f"{b} − {a}", delta))
    frames = [frame for frame in frames if not frame.empty]
    if not frames:
        return pd.DataFrame(columns=SEED_POWER_COLUMNS)
    table = pd.concat(frames, ignore_index=True)
    return table.reindex(columns=SEED_POWER_COLUMNS).fillna({"lang": "", "setup": "", "variant": ""})


def _design(sigmas: pd.DataFrame, design: str, comparison: str, delta: float) -> pd.DataFrame:
    """`power_table` of one design, tagged with its comparison (empty input: empty output)."""
    if sigmas.empty:
        return sigmas
    return power_table(sigmas, n="n_seeds", design=design, delta=delta).assign(comparison=comparison)


def summarise(power: pd.DataFrame) -> pd.DataFrame:
    """One row per condition (or compared pair) of a seed-power table: the overall MCC's σ, MDE and
    seeds needed; over the fine categories the median σ and MDE, how many reach MDE ≤ target, and
    the median and largest seeds needed (rounded up)."""
    rows = []
    for key, part in power.groupby(SUMMARY_KEY, sort=False, dropna=False):
        overall = part[part["category"] == OVERALL]
        fine = part[part["level"] == "fine"]
        needed = fine["seeds_needed"].dropna().astype(float)
        first = overall.iloc[0] if len(overall) else None
        rows.append({
            **dict(zip(SUMMARY_KEY, key)), "n_seeds": part["n_seeds"].max(),
            "overall_sigma": np.nan if first is None else first.sigma,
            "overall_mde": np.nan if first is None else first.min_detectable_delta,
            "overall_seeds_needed": np.nan if first is None else first.seeds_needed,
            "fine_median_sigma": fine["sigma"].median(), "fine_median_mde": fine["min_detectable_delta"].median(),
            "fine_detectable": int((fine["min_detectable_delta"] <= fine["target_delta"]).sum()),
            "fine_categories": len(fine),
            "fine_median_seeds_needed": np.ceil(needed.median()) if len(needed) else np.nan,
            "fine_most_seeds_needed": needed.max() if len(needed) else np.nan,
        })
    return pd.DataFrame(rows)


def read_seed_power(path: Path) -> pd.DataFrame:
    """A report's seed_power.csv (`path`: the file or the report folder holding it)."""
    file = path / POWER_FILE if path.is_dir() else path
    try:
        table = pd.read_csv(file, keep_default_na=False, na_values={"sigma": [""], "n_seeds": [""]})
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise UserError(f"cannot read the seed-power table ({err.__class__.__name__})", path=file,
                        fix="point at a report folder written by nli-stability report (it holds seed_power.csv)") \
            from None
    missing = sorted(set(SEED_POWER_COLUMNS) - set(table.columns))
    if missing:
        raise UserError(f"not a seed-power table: missing columns {', '.join(missing)}", path=file,
                        fix="point at seed_power.csv of nli-stability report")
    return table.astype({"lang": str, "setup": str, "variant": str, "comparison": str})


def planned_power(report: pd.DataFrame, planned: pd.DataFrame, delta: float) -> pd.DataFrame:
    """The report's independent σ per (lang, setup, variant, cell) with a planned sweep's seeds.

    `planned` has one row per planned condition: `lang`, `setup`, `variant`, `n_seeds`. A
    planned condition the report has no runs of keeps one row with no σ (empty results).
    """
    sigmas = report.loc[(report["comparison"] == "") & (report["design"] == "independent"),
                        [*GROUP_KEY, *CELL, "sigma"]]
    cells = planned.merge(sigmas, on=GROUP_KEY, how="left")
    return power_table(cells, n="n_seeds", design="independent", delta=delta).assign(comparison="")


def power_header(delta: str) -> list[str]:
    """The columns of `power_rows`, for report.md and the plan's printout."""
    return ["design", "condition", "seeds", "overall MCC: σ", "MDE", f"seeds for Δ = {delta}",
            "fine categories: median σ", "median MDE", f"MDE ≤ {delta}", f"seeds for Δ = {delta}: median / most"]


def power_rows(summary: pd.DataFrame) -> list[list[str]]:
    """The summary's rows as cells: a comparison is named with the language or condition it holds."""
    rows = []
    for r in summary.itertuples():
        where = " · ".join(name for name in (r.lang, condition_name(r.setup, r.variant)) if name)
        rows.append([r.design, f"{r.comparison} ({where})" if r.comparison else where, str(int(r.n_seeds)),
                     num(r.overall_sigma), num(r.overall_mde), _count(r.overall_seeds_needed),
                     num(r.fine_median_sigma), num(r.fine_median_mde), f"{r.fine_detectable} of {r.fine_categories}",
                     f"{_count(r.fine_median_seeds_needed)} / {_count(r.fine_most_seeds_needed)}"])
    return rows


def _count(value: float) -> str:
    return "–" if pd.isna(value) else str(int(value))
