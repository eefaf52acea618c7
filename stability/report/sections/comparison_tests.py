"""`## Tests: B − A`: per (language, category) of `compare=[A,B]`, the two-sided p-value adjusted
over all cells of the comparison (Holm, BH) and, with `aso=true`, almost stochastic order, counted as
dominance below the ε_min threshold calibrated at each cell's design."""
from __future__ import annotations

from stability.report.calibration import aso_thresholds, seed_half
from stability.report.compare import Condition
from stability.report.context import Context
from stability.report.section import Built
from stability.report.sequential_pairs import withheld_text
from stability.report.significance import LEVELS, tests_markdown, tests_table, with_dominance
from stability.statistics.calibration import DELTA
from stability.statistics.seeds import condition_name

FILE = "delta_tests.csv"


def build(context: Context) -> Built | None:
    """delta_tests.csv; None without compare, bootstrap or predictions; no tests, one note, for a
    pair an adaptive sweep decided (`report.sequential_pairs`)."""
    options = context.options
    if not options.compare:
        return None
    a, b = (str(Condition.parse(condition)) for condition in options.compare)
    if context.decided_sequentially(a, b):
        return Built(f"## Tests: {b} − {a}\n\n"
                     + withheld_text(a, b, "a fixed-n test of each cell (its p-values, Holm, BH, ε_min)") + "\n")
    if not context.compared_deltas:
        return None
    tests = tests_table(context.compared_deltas, ["lang"], options.confidence)
    results = context.results
    scores = results[results["level"].isin(LEVELS)]
    scores = scores.assign(condition=[condition_name(*key) for key in zip(scores["setup"], scores["variant"])])
    dominance = with_dominance(tests, scores[scores["condition"].isin([a, b])], ["lang"], "condition", a, b,
                               wanted=options.aso, iterations=options.aso_iterations,
                               confidence=options.confidence, seed=options.random_state,
                               thresholds=aso_thresholds(context.calibration, b, a))
    text = (f"## Tests: {b} − {a}\n\nPer (language, category): ΔMCC = {b} − {a} on the diagnostic items both "
            "conditions scored (paired over items, seeds drawn independently). "
            + tests_markdown(dominance.table, ["lang"], a, b, options.confidence,
                             dominance.note, FILE,
                             seed_half(context.calibration, DELTA, condition=b, reference=a)))
    return Built(text, {FILE: dominance.table})
