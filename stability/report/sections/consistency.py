"""`## Cross-lingual consistency`: does the model decide the same way on the same item in two languages?

consistency.csv, consistency_summary.csv, consistency_by_category.csv (and, given data-QA
folders, consistency_flagged.csv), a κ heat map and per-category bars per condition (setup, variant);
the statistics are `stability.report.consistency`.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from stability.core.errors import UserError
from stability.core.markdown import num, table
from stability.report import figures
from stability.report.agreement import ALL_ITEMS
from stability.report.alignment import unaligned_note
from stability.report.compare import Condition
from stability.report.consistency import (ALL_RUNS, NON_FAILED, Consistency, consistency_of_runs,
                                          flagged_consistency, kappa_matrix, lowest_kappa_pair, setup_runs)
from stability.report.context import Context
from stability.report.section import LISTED, Built, figure_links, pm, with_variant
from stability.statistics.seeds import condition_name


def build(context: Context) -> Built | None:
    """None when no condition has predictions of two languages."""
    if context.predictions.empty:
        return None
    runs = setup_runs(context.predictions)
    consistency = consistency_of_runs(runs, context.failed)
    if consistency is None:
        return None
    chosen = context.options.consistency_pair
    tables = {"consistency.csv": consistency.pairs, "consistency_summary.csv": consistency.summary,
              "consistency_by_category.csv": consistency.by_category}
    conditions = consistency.summary[["setup", "variant"]].drop_duplicates().itertuples(index=False, name=None)
    pairs = {key: pair for key in sorted(conditions) if (pair := _bar_pair(consistency, key, chosen)) is not None}
    flagged = None
    if context.flagged_by_lang is not None:
        flagged = tables["consistency_flagged.csv"] = flagged_consistency(runs, context.flagged_by_lang, context.failed)
    drawn = _figures(consistency, pairs, context.failed, context.out) if context.options.figures else []
    text = _markdown(consistency, pairs, bool(chosen), flagged, context.has_variants, unaligned_note(context.predictions)) \
        + "\n" + figure_links(drawn)
    return Built(text, tables, drawn)


def _bar_pair(tables: Consistency, key: tuple[str, str], chosen: list[str] | None) -> tuple[str, str] | None:
    """The language pair of a condition's per-category bars: the chosen one, or the lowest κ."""
    if not chosen:
        return lowest_kappa_pair(tables.summary, key)
    part = tables.summary[Condition(*key).rows(tables.summary)]
    pair = (chosen[0], chosen[1])
    if not ((part["lang_a"] == pair[0]) & (part["lang_b"] == pair[1])).any():
        raise UserError(f"no runs of both {pair[0]} and {pair[1]} in {condition_name(*key)!r} with a shared seed",
                        fix="choose two languages of the report: consistency_pair=[a,b]")
    return pair


def _failed_note(failed: pd.DataFrame, key: tuple[str, str], has_nonfailed_panel: bool) -> str:
    runs = failed[Condition(*key).rows(failed)]
    n_failed = int(runs["failed"].sum())
    if not n_failed:
        return ""
    return f"{n_failed} of {len(runs)} runs failed" + ("" if has_nonfailed_panel else ": no run pair without a failed run")


def _figures(tables: Consistency, pairs: dict[tuple[str, str], tuple[str, str]], failed: pd.DataFrame,
             out: Path) -> list[Path]:
    """Per condition: the κ heat map (all runs, and non-failed runs when some failed) and the bars of its pair."""
    drawn = []
    for key, pair in pairs.items():
        panels = {title: tuple(kappa_matrix(tables.summary, key, runs, value)
                               for value in ("kappa_mean", "kappa_std", "n_pairs"))
                  for runs, title in ((ALL_RUNS, "all runs"), (NON_FAILED, "non-failed runs"))
                  if ((tables.summary["runs"] == runs) & Condition(*key).rows(tables.summary)).any()}
        note = _failed_note(failed, key, len(panels) > 1)
        drawn.append(figures.kappa_heatmap(panels, condition_name(*key), out, note))
        drawn.append(figures.consistency_bars(tables.by_category, key, pair, out))
    return drawn


def _markdown(crossed: Consistency, pairs_drawn: dict[tuple[str, str], tuple[str, str]], pair_chosen: bool,
              flagged: pd.DataFrame | None, variants: bool, unaligned: str) -> str:
    summary = crossed.summary
    condition = with_variant(["setup"], "variant", variants)
    rows = []
    for r in summary[summary["lang_a"] <= summary["lang_b"]].itertuples():
        own = r.lang_a == r.lang_b
        pair = f"{r.lang_a} (seed baseline)" if own else f"{r.lang_a} – {r.lang_b}"
        rows.append(with_variant([r.setup], r.variant, variants)
                    + [pair, r.runs, r.n_pairs, r.n_items, pm(r.consistency_mean, r.consistency_std),
                       pm(r.kappa_mean, r.kappa_std), "" if own else num(r.kappa_baseline),
                       "" if own else num(r.kappa_minus_baseline)])
    splits = [with_variant([r.setup], r.variant, variants)
              + [f"{r.lang_a} → {r.lang_b}", r.runs, num(r.consistency_correct_mean), num(r.consistency_incorrect_mean),
                 f"{r.n_ent_ent} / {r.n_ent_not} / {r.n_not_ent} / {r.n_not_not}"]
              for r in summary[summary["lang_a"] != summary["lang_b"]].itertuples()]
    text = ("## Cross-lingual consistency\n\nThe translated diagnostic sets share their items (matched by `idx`), "
            "so each item is one meaning in several languages. *Consistency* is the share of items on which two "
            "runs predict the same label; Cohen's *κ* corrects it for chance: two runs that answer "
            "\"entailment\" everywhere agree 100 % and mean nothing (κ = 0). Language pairs compare runs of the "
            "same seed; the *seed baseline* compares two seeds of one language (run-to-run agreement). A pair whose "
            "κ reaches the mean of its two languages' baselines (κ − baseline ≈ 0) is as consistent across "
            "languages as the model is with itself. Mean ± σ over seeds (seed pairs for baselines); every run "
            "pair in `consistency.csv`, per category in `consistency_by_category.csv`."
            + (f" {unaligned}" if unaligned else "") + "\n\n"
            + table(condition + ["pair", "runs", "run pairs", "items", "consistency", "κ", "κ baseline",
                     "κ − baseline"], rows))
    if crossed.n_constant:
        text += (f"\n**Warning:** {crossed.n_constant} of {len(crossed.pairs)} run pairs include a run "
                 "with constant predictions on the shared items. κ is 0 for them, and their consistency only "
                 "reflects how often the other run gives that same label.\n")
    text += ("\nAgreement split by correctness in A (share of A's right / wrong items on which B agrees; weighted "
             "by those item counts they give the consistency) and transitions of the prediction from A to B summed "
             "over seeds (ent = entailment, not = not_entailment):\n\n"
             + table(condition + ["A → B", "runs", "A right", "A wrong", "ent→ent / ent→not / not→ent / not→not"],
                     splits))
    for key, (a, b) in pairs_drawn.items():
        part = crossed.by_category
        part = part[Condition(*key).rows(part) & (part["lang_a"] == a) & (part["lang_b"] == b)
                    & (part["runs"] == "all") & (part["category"] != ALL_ITEMS)]
        lowest = part[part["level"] == "fine"].sort_values(["consistency_mean", "category"]).head(LISTED)
        why = "chosen with consistency_pair" if pair_chosen else \
            "the pair with the lowest κ; choose another with consistency_pair=[a,b]"
        text += (f"\n{condition_name(*key)}, {a} – {b} ({why}): least consistent categories "
                 + ", ".join(f"{r.category} ({num(r.consistency_mean)}, {r.n_items} items)"
                             for r in lowest.itertuples()) + ".\n")
    if flagged is not None:
        text += ("\nData QA × consistency: items flagged by `stability.dataqa` (line- or word-level language check, "
                 "or premise = hypothesis, in either language's diagnostic file) against the other items; mean over "
                 "seeds. Negative difference = less consistent on flagged items; few flagged items make it noisy.\n\n"
                 + table(condition + ["pair", "runs", "flagged items", "other items", "consistency flagged",
                          "consistency other", "difference", "κ flagged", "κ other"],
                         [with_variant([r.setup], r.variant, variants) + [
                           f"{r.lang_a} – {r.lang_b}", r.runs, r.n_items_flagged, r.n_items_unflagged,
                           num(r.consistency_flagged), num(r.consistency_unflagged),
                           num(r.consistency_difference), num(r.kappa_flagged), num(r.kappa_unflagged)]
                          for r in flagged.itertuples()]))
        if flagged.empty or not flagged["n_items_flagged"].any():
            text += "\nNo diagnostic item of these languages carries a translation finding: nothing to compare.\n"
    return text
