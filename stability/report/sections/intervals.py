"""`## Bootstrap intervals`: multi-bootstrap intervals of every category MCC (needs predictions.jsonl)."""
from __future__ import annotations

from stability.core.markdown import num, table
from stability.report.bootstrap import bootstrap_ci
from stability.report.calibration import SeedHalf, seed_half
from stability.report.collect import OVERALL
from stability.report.context import Context
from stability.report.section import Built, with_variant
from stability.statistics.calibration import MEAN
from stability.statistics.seeds import GROUP_KEY


def build(context: Context) -> Built | None:
    """bootstrap_ci.csv; None with bootstrap=0 or without predictions."""
    options = context.options
    if not options.bootstrap or context.predictions.empty:
        return None
    intervals = bootstrap_ci(context.predictions, options.bootstrap, options.confidence, options.random_state,
                             clusters=context.clusters)
    rows, variants = [], context.has_variants
    label, half = interval_label(context)
    for (lang, setup, variant), group in intervals.groupby(GROUP_KEY, sort=True):
        overall = group[group["category"] == OVERALL].iloc[0]
        fine = group[group["category"] != OVERALL]
        rows.append(with_variant([lang, setup], variant, variants) + [half.interval(overall.estimate, overall.ci_low, overall.ci_high),
                     num(overall.naive_ci_width), num((fine["ci_high"] - fine["ci_low"]).mean()),
                     int(((fine["ci_low"] > 0) | (fine["ci_high"] < 0)).sum())])
    level = f"{options.confidence:.0%}"
    text = (f"## Bootstrap intervals\n\n{level} multi-bootstrap intervals (seeds and items resampled "
            f"together); per category in `bootstrap_ci.csv`. {context.clusters.described(context.predictions)} "
            "*Naive width*: the width of the overall interval with items resampled one by one: too narrow where "
            "the answers to a cluster's items go together, too wide where they cancel (a swapped pair with opposite "
            "labels answered alike is one right and one wrong every time). The header gives the measured "
            "coverage of the interval's seed half (*How far to trust these numbers*).\n\n"
            + table(with_variant(["lang", "setup"], "variant", variants) + [
                     f"overall MCC [{label}]",
                     "naive width", "mean category CI width",
                     "categories with CI excluding 0"], rows))
    return Built(text, {"bootstrap_ci.csv": intervals})


def interval_label(context: Context) -> tuple[str, SeedHalf]:
    """How the tables name the multi-bootstrap interval (its level, its seed half's method and measured
    coverage), and the seed half that prints each interval, or *too few seeds* in its place."""
    half = seed_half(context.calibration, MEAN)
    return f"{context.options.confidence:.0%} multi-bootstrap CI; {half.label}", half
