"""`## Which method stabilises what`: per (lang, setup), every variant (a stabilisation method)
against the reference method (`reference=`): failed-run rate, σ and mean of MCC over seeds, σ's
ratio to the reference's, and which categories' σ differs from the reference's (`stability.report.stabilizers`)."""
from __future__ import annotations

import logging

import pandas as pd

from stability.core.markdown import num, table
from stability.core.schemas.report import REFERENCE
from stability.report import figures
from stability.report.collect import OVERALL
from stability.report.context import Context
from stability.report.section import Built, figure_links
from stability.report.stabilizers import (FILE, Pairs, all_failed, method_labels, reference_pairs,
                                          stabilizers_table, with_dominance)

_NAMED = 8   # categories named per method in "σ differs"; more are counted

log = logging.getLogger(__name__)


def build(context: Context) -> Built | None:
    """stabilizers.csv and stabilizers_<setup>.png where some (lang, setup) has the reference and
    another variant; else a note naming the variants and the `reference=` to pass when some (lang,
    setup) has several variants (or `reference=` was set), and None when there is nothing to compare."""
    options = context.options
    pairs = reference_pairs(context.results, options.reference)
    if not pairs.references:
        return _no_reference(pairs, options.reference) if options.reference != REFERENCE or pairs.variants else None
    stats = stabilizers_table(context.results, context.failed, pairs, bootstrap=options.bootstrap,
                              confidence=options.confidence, random_state=options.random_state)
    dominance = with_dominance(stats, context.results, wanted=options.aso, iterations=options.aso_iterations,
                               confidence=options.confidence, seed=options.random_state)
    stats = dominance.table
    alpha = 1 - options.confidence
    drawn = figures.stabilizer_heatmaps(stats, alpha, context.out) if options.figures else []
    level = f"{options.confidence:.0%}"
    tested = stats["p_variance"].notna().sum()
    failed = ("Failed runs are left out of σ and the mean (`exclude_failed=true`), not out of the failed rate."
              if options.exclude_failed
              else "Failed runs count in σ and the mean (`exclude_failed=true` leaves them out).")
    text = (f"## Which method stabilises what\n\nPer (language, setup), each method (a variant, named by the items that "
            f"set it apart from the others; `{FILE}` has the whole variant) against the reference {_shown(options.reference)} (`reference=`): failed runs, the failed rate with its {level} "
            f"Wilson interval, σ of the overall MCC over seeds with its {level} bootstrap interval, its ratio to the "
            f"reference's σ (σ / σ ref) with its {level} bootstrap interval (∞: the reference's resampled σ "
            f"can be 0), and the mean. "
            f"*σ differs*: the cells (overall, coarse, fine categories) whose σ differs from the reference's "
            f"(Brown–Forsythe, Holm over all {tested} compared cells, p < {alpha:g}), ↓ steadier, ↑ less steady. "
            f"{failed} Every cell, with Welch's test of the means, in `{FILE}`. {dominance.note}\n\n")
    for (lang, setup), part in stats.groupby(["lang", "setup"], sort=False):
        text += f"**{lang} · {setup}**\n\n" + table(
            ["method", "seeds", "failed", f"failed rate [{level} CI]", f"σ overall [{level} CI]",
             f"σ / σ ref [{level} CI]", "mean overall",
             f"σ differs (Holm p < {alpha:g})"], _rows(part, alpha)) + "\n"
    text += _notes(pairs)
    if drawn:
        text += figure_links(drawn)
    return Built(text, {FILE: stats}, drawn)


def _rows(part: pd.DataFrame, alpha: float) -> list[list]:
    rows = []
    labels = method_labels(list(part["method"].drop_duplicates()))
    for method, cells in part.groupby("method", sort=False):
        overall = cells[cells["category"] == OVERALL]
        first = (overall if not overall.empty else cells).iloc[0]
        is_reference = method == first.reference
        failed = "–" if pd.isna(first.failed) else f"{first.failed} of {first.n_runs}"
        rate = ("–" if pd.isna(first.failed_rate)
                else f"{num(first.failed_rate, 2)} [{num(first.failed_low, 2)}, {num(first.failed_high, 2)}]")
        spread = (f"{num(first.std_mcc)} [{num(first.std_low)}, {num(first.std_high)}]" if not overall.empty else "–")
        ratio = ("–" if overall.empty or is_reference or all_failed(first) or pd.isna(first.std_ratio)
                 else _ratio(first.std_ratio)
                 + ("" if pd.isna(first.std_ratio_low)   # bootstrap=0: no interval
                    else f" [{_ratio(first.std_ratio_low)}, {_ratio(first.std_ratio_high)}]"))
        mean = num(first.mean_mcc) if not overall.empty else "–"
        rows.append([labels[method] + (" (reference)" if is_reference else ""),
                     int(first.n_seeds), failed, rate, spread, ratio, mean,
                     "reference" if is_reference else
                     "– (every run failed: a σ of failed runs is no stability)" if all_failed(first) else
                     _differs(cells, part, alpha)])
    return rows


def _ratio(value: float) -> str:
    """A σ ratio with two decimals, ∞ for an unbounded upper end, – where undefined."""
    return "∞" if value == float("inf") else num(value, 2)


def _differs(cells: pd.DataFrame, part: pd.DataFrame, alpha: float) -> str:
    """`Logic ↓, Negation ↑, …`: the cells whose σ differs from the reference's (Holm)."""
    reference = part[part["method"] == part["reference"]].set_index(["level", "category"])["std_mcc"]
    significant = cells[cells["p_variance_holm"] < alpha]
    named = [f"{r.category} {'↓' if r.std_mcc < reference.get((r.level, r.category), float('nan')) else '↑'}"
             for r in significant.itertuples()]
    if not named:
        return "none"
    return ", ".join(named[:_NAMED]) + (f", … {len(named) - _NAMED} more" if len(named) > _NAMED else "")


def _notes(pairs: Pairs) -> str:
    """Groups with several reference candidates, and groups of several variants without a reference."""
    lines = [f"{lang} · {setup}: several variants carry the reference ({', '.join(f'`{v}`' for v in found)}); "
             f"`{pairs.references[(lang, setup)]}` is the reference, the others are compared with it."
             for (lang, setup), found in pairs.ambiguous.items()]
    missing = [f"{lang} · {setup}" for lang, setup in pairs.variants if (lang, setup) not in pairs.references]
    if missing:
        lines.append(f"Not compared (no variant is the reference): {', '.join(missing)}.")
    return "".join(f"{line}\n\n" for line in lines)


def _shown(variant: str) -> str:
    return f"`{variant}`" if variant else "`''` (the experiment as configured)"


def _no_reference(pairs: Pairs, reference: str) -> Built:
    """`reference=` (set, or the default) names no variant: say which variants there are and how to choose one, in
    report.md and in one line on the console (the section would otherwise just be missing)."""
    log.warning("warning: %s", _no_reference_line(pairs, reference))
    if not pairs.variants:
        found = "no (language, setup) has two or more variants, so there is nothing to compare."
        example = ""
    else:
        found = "the variants per (language, setup) are " + "; ".join(
            f"{lang} · {setup}: {', '.join(_shown(v) for v in variants)}"
            for (lang, setup), variants in pairs.variants.items()) + "."
        named = sorted({v for variants in pairs.variants.values() for v in variants if v})
        example = (f" Pass the reference method as one of them (or one `_`-separated item of one), e.g. "
                   f"`reference={named[0]}`; `reference=''` makes the runs of the experiment as configured the "
                   "reference.") if named else ""
    default = " (the default)" if reference == REFERENCE else ""
    return Built(f"## Which method stabilises what\n\n`reference={reference}`{default} matches no variant of these runs: "
                 f"{found}{example}\n")


def _no_reference_line(pairs: Pairs, reference: str) -> str:
    """The console's line for a `reference=` that names no variant: the variants there are."""
    problem = f"reference={reference} matches no variant of these runs, so no method is compared"
    if not pairs.variants:
        return f"{problem}: no (language, setup) has two or more variants"
    variants = sorted({v for found in pairs.variants.values() for v in found}, key=lambda v: (v == "", v))
    shown = [variant or "''" for variant in variants]
    return f"{problem}: the variants are {', '.join(shown)} (pass one, e.g. reference={shown[0]})"
