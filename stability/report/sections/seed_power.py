"""`## How many seeds`: the smallest ΔMCC the sweep's seeds can detect, and the seeds a ΔMCC of
`power_delta` needs (α = 0.05, power 0.8), for independent conditions and paired comparisons."""
from __future__ import annotations

from stability.core.markdown import table
from stability.report.context import Context
from stability.report.power import POWER_FILE, power_header, power_rows, seed_power, summarise
from stability.report.section import Built
from stability.statistics.power import ALPHA, POWER


def build(context: Context) -> Built | None:
    """seed_power.csv; None unless some condition has two seeds."""
    options = context.options
    power = seed_power(context.results, options.compare, options.compare_langs, options.power_delta)
    if power.empty:
        return None
    delta = f"{options.power_delta:g}"
    text = (f"## How many seeds\n\nFrom the σ of MCC over each condition's seeds: the minimum detectable ΔMCC "
            f"(MDE) of a two-sided t-test at α = {ALPHA:g} with power {POWER:g} for the seeds the sweep has, and "
            f"the seeds per condition needed to detect ΔMCC = {delta} (`power_delta`). *independent*: against "
            "another condition trained separately and as variable (t-test of two samples); *paired*: the compared "
            "conditions' runs of the same seed paired, σ of their per-seed differences (paired t-test). Every "
            f"category and level in `{POWER_FILE}`; `nli-stability plan plan.power_from=<this folder>` gives the "
            "same for a planned sweep.\n\n" + table(power_header(delta), power_rows(summarise(power))))
    return Built(text, {POWER_FILE: power})
