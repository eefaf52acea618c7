"""`## Tests: language B − language A`: per (condition, category) of `compare_langs=[A,B]`, Δ on
the items both languages share (matched by idx), two-sided p-values adjusted over all cells
(Holm, BH) and, with `aso=true`, almost stochastic order."""
from __future__ import annotations

from stability.report.calibration import language_aso_thresholds, seed_half
from stability.report.context import Context
from stability.report.section import Built
from stability.report.significance import LEVELS, tests_markdown, tests_table, with_dominance
from stability.statistics.calibration import DELTA
from stability.statistics.seeds import condition_name

FILE = "lang_tests.csv"
KEYS = ["setup", "variant"]


def build(context: Context) -> Built | None:
    """lang_tests.csv; None without compare_langs, bootstrap or predictions of both languages."""
    if not context.language_deltas:
        return None
    options = context.options
    a, b = options.compare_langs
    tests = tests_table(context.language_deltas, KEYS, options.confidence)
    results = context.results
    scores = results[results["level"].isin(LEVELS) & results["lang"].isin([a, b])]
    dominance = with_dominance(tests, scores, KEYS, "lang", a, b, wanted=options.aso,
                               iterations=options.aso_iterations, confidence=options.confidence,
                               seed=options.random_state,
                               thresholds=language_aso_thresholds(context.calibration, a, b))
    shown = dominance.table.assign(
        condition=[condition_name(*key) for key in zip(dominance.table["setup"], dominance.table["variant"])])
    text = (f"## Tests: {b} − {a}\n\nPer (condition, category): ΔMCC = {b} − {a} on the same setup and variant, "
            "on the diagnostic items both languages have (matched by `idx`: the same sentence pair translated; "
            "paired over items, each language's seeds drawn on their own). "
            + tests_markdown(shown, ["condition"], a, b, options.confidence,
                             dominance.note, FILE, seed_half(context.calibration, DELTA, languages=(a, b))))
    return Built(text, {FILE: dominance.table})
