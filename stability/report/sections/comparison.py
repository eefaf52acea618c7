"""`## Comparison: B vs A`: does condition B shift and stabilise the category MCCs of A?"""
from __future__ import annotations

from stability.core.markdown import num, table
from stability.report import figures
from stability.report.bootstrap import delta_ci_table
from stability.report.calibration import seed_half
from stability.report.clusters import drawn_units
from stability.report.collect import OVERALL
from stability.report.compare import ALL_LANGUAGES, Condition, delta_shares, setup_deltas
from stability.report.context import Context
from stability.report.section import Built, figure_links, pm
from stability.report.sequential_pairs import withheld_text
from stability.statistics.calibration import DELTA


def build(context: Context) -> Built | None:
    """deltas.csv, delta_shares.csv and, with predictions, bootstrap_deltas.csv; None without compare."""
    options = context.options
    if not options.compare:
        return None
    a, b = (str(Condition.parse(condition)) for condition in options.compare)
    deltas = setup_deltas(context.category_stats, a, b)
    shares = delta_shares(deltas, options.delta_mcc, options.delta_std)
    tables = {"deltas.csv": deltas, "delta_shares.csv": shares}
    boot = None
    if options.bootstrap and not context.predictions.empty:
        boot = tables["bootstrap_deltas.csv"] = delta_ci_table(context.compared_deltas, options.confidence)
    drawn = [figures.delta_heatmaps(deltas, a, b, context.out)] if options.figures else []
    rows = [[r.lang, r.n_cells, f"{r.n_delta_mcc_above} ({num(r.share_delta_mcc_above, 2)})",
             f"{r.n_delta_std_below} ({num(r.share_delta_std_below, 2)})"] for r in shares.itertuples()]
    text = (f"## Comparison: {b} vs {a}\n\nΔ = {b} − {a} per (language, category). Cells with "
            f"ΔMCC > {options.delta_mcc:g} and with Δσ < {options.delta_std:g} "
            f"(strict; `{ALL_LANGUAGES}` = every language):\n\n"
            + table(["lang", "cells", f"ΔMCC > {options.delta_mcc:g}", f"Δσ < {options.delta_std:g}"], rows))
    largest = deltas.sort_values("delta_mcc", ascending=False)
    for title, part in (("Largest", largest.head(5)), ("Smallest", largest.tail(5)[::-1])):
        text += (f"\n{title} ΔMCC:\n\n" + table(
            ["lang", "category", f"MCC {a}", f"MCC {b}", "ΔMCC", "Δσ"],
            [[r.lang, r.category, pm(r.mcc_mean_a, r.mcc_std_a), pm(r.mcc_mean_b, r.mcc_std_b),
              num(r.delta_mcc), num(r.delta_std)] for r in part.itertuples()]))
    if boot is not None and not boot.empty:
        decided = context.decided_sequentially(a, b)
        if decided:
            boot["p_delta_le_0"] = float("nan")
        rows, half = [], seed_half(context.calibration, DELTA, condition=b, reference=a)
        for lang, group in boot.groupby("lang", sort=True):
            overall = group[group["category"] == OVERALL].iloc[0]
            fine = group[group["category"] != OVERALL]
            p_values = [] if decided else [num(overall.p_delta_le_0), int((fine["p_delta_le_0"] < 0.05).sum())]
            rows.append([lang, half.interval(overall.delta_mcc, overall.ci_low, overall.ci_high), *p_values])
        p_text = "" if decided else "; p = share of bootstrap Δ ≤ 0 (per category in `bootstrap_deltas.csv`)"
        text += (f"\nBootstrap (paired {drawn_units(options.cluster)}, independent seeds){p_text}:\n\n"
                 + table(["lang", f"overall ΔMCC [{options.confidence:.0%} multi-bootstrap CI; {half.label}]",
                          *([] if decided else ["p (Δ ≤ 0)", "categories with p < 0.05"])], rows))
        if decided:
            text += "\n" + withheld_text(a, b, "the share of bootstrap Δ ≤ 0 as a p-value") + "\n"
    if drawn:
        text += "\n" + figure_links(drawn)
    return Built(text, tables, drawn)
