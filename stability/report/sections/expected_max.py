"""`## Expected best validation accuracy`: what the best of n runs is worth, n = 1..N (Dodge et al.
2019), and the diagnostic overall MCC of the run that the best validation accuracy selects."""
from __future__ import annotations

from stability.core.markdown import num, table
from stability.report import figures
from stability.report.context import Context
from stability.report.section import Built, figure_links, with_variant
from stability.report.seed_design import run_outcomes
from stability.statistics.expected_max import expected_max_table
from stability.statistics.seeds import GROUP_KEY

MIN_RUNS = 2


def build(context: Context) -> Built | None:
    """expected_max.csv and expected_max.png; None unless a group has two runs with a validation accuracy."""
    outcomes = run_outcomes(context.results, context.collected.runs).dropna(subset=["val_accuracy", "overall_mcc"])
    sizes = outcomes.groupby(GROUP_KEY)["seed"].transform("size")
    outcomes = outcomes[sizes >= MIN_RUNS]
    if outcomes.empty:
        return None
    curves = expected_max_table(outcomes, GROUP_KEY, "val_accuracy", "overall_mcc") \
        .rename(columns={"expected_selected_score": "expected_selected_overall_mcc"})
    drawn = [figures.expected_max_plot(curves, context.out)] if context.options.figures else []
    variants = context.has_variants
    rows = []
    for (lang, setup, variant), curve in curves.groupby(GROUP_KEY, sort=True):
        first, last = curve.iloc[0], curve.iloc[-1]
        rows.append(with_variant([lang, setup], variant, variants)
                    + [int(last.n_runs), num(first.expected_max_valid), num(last.expected_max_valid),
                       num(first.expected_selected_overall_mcc), num(last.expected_selected_overall_mcc)])
    text = ("## Expected best validation accuracy\n\n\"The best of N seeds\" depends on N. Treating a group's "
            "runs as the distribution of a run's outcome, the expected maximum validation accuracy over n runs "
            "drawn from it is Σ_i v_(i) · ((i/N)^n − ((i−1)/N)^n) over the sorted accuracies (n = 1: the mean, "
            "n = N: close to the best run); the same weights give the expected diagnostic overall MCC of the "
            "run that the best validation accuracy selects. Every n in `expected_max.csv`.\n\n"
            + table(with_variant(["lang", "setup"], "variant", variants)
                    + ["runs N", "E[max val acc], n = 1", "n = N", "E[overall MCC of selected], n = 1", "n = N"],
                    rows)
            + ("\n" + figure_links(drawn) if drawn else ""))
    return Built(text, {"expected_max.csv": curves}, drawn)
