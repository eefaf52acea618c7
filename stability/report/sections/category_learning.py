"""`## When each category is learned`: per (lang, setup, variant), the validation at which the overall and
each coarse category's diagnostic MCC is first reliably above 0, how that moment varies over seeds, and
the MCC at the end of training (`stability.report.category_learning`); needs runs trained with
`trainer.dynamics=true`."""
from __future__ import annotations

import pandas as pd

from stability.core.markdown import num, table
from stability.report.category_learning import FILE, ONSET_FILE, learning_tables
from stability.report.category_learning_figure import learning_curves
from stability.report.clusters import drawn_units
from stability.report.collect import OVERALL
from stability.report.context import Context
from stability.report.dynamics import gap_notes
from stability.report.section import Built, figure_links, pm
from stability.statistics.seeds import GROUP_KEY, condition_name


def build(context: Context) -> Built | None:
    """category_learning.csv, category_learning_onset.csv and category_learning_<setup>.png; None
    when no run recorded its training dynamics."""
    if not context.dynamics:
        return None
    options = context.options
    curves, onsets = learning_tables(context.dynamics, options.bootstrap, options.confidence, options.random_state,
                                     context.clusters)
    if curves.empty:
        return None
    drawn = learning_curves(curves, context.out) if options.figures else []
    level = f"{options.confidence:.0%}"
    if options.bootstrap:
        intervals = (f"*First reliable*: the first validation whose {level} multi-bootstrap interval of the seed-mean "
                     f"MCC (seeds and {drawn_units(options.cluster)} resampled, {options.bootstrap} samples) lies above 0, "
                     "with its epoch. "
                     "*Onset over seeds*: the same per seed (its items resampled), mean ± σ and range over the "
                     "seeds that got there. ")
    else:
        intervals = "`bootstrap=0`: no intervals, so no onsets (set `bootstrap=` to a number of samples). "
    text = ("## When each category is learned\n\nThe diagnostic MCC the runs reached at each validation during "
            "training (`trainer.dynamics=true`), mean ± σ over the seeds that reached it (early stopping ends some "
            f"sooner). {intervals}*Final*: each seed's MCC at its last validation, mean ± σ (its last weights; the "
            "run's own scores are those of its best validation). The 33 fine categories, and every validation, are "
            f"in `{FILE}` (curves) and `{ONSET_FILE}` (onsets).\n\n")
    text += "".join(f"Gap: {note}.\n\n" for note in gap_notes(context.dynamics))
    for (lang, setup, variant), part in onsets.groupby(GROUP_KEY, sort=True):
        shown = part[part["level"].isin(["all", "coarse"])]
        text += f"**{lang} · {condition_name(setup, variant)}** ({int(part['n_seeds'].iloc[0])} seeds)\n\n" + table(
            ["category", "first reliable validation (epoch)", "onset over seeds: mean ± σ (range; seeds)",
             "final MCC (mean ± σ)"], [_row(row, bool(options.bootstrap)) for row in shown.itertuples(index=False)]) + "\n"
    if drawn:
        text += figure_links(drawn)
    return Built(text, {FILE: curves, ONSET_FILE: onsets}, drawn)


def _row(row, intervals: bool) -> list[str]:
    name = "all items" if row.category == OVERALL else row.category
    final = pm(float(row.final_mean_mcc), float(row.final_std_mcc))
    if not intervals:
        return [name, "–", "–", final]
    first = "never" if pd.isna(row.first_reliable_validation) else \
        f"{row.first_reliable_validation} ({_epoch(row.first_reliable_epoch)})"
    return [name, first, _onset(row), final]


def _onset(row) -> str:
    """`2.3 ± 0.6 (2–3; 3 of 3 seeds)`, or `never (0 of 3 seeds)`."""
    seeds = f"{row.n_seeds_reached} of {row.n_seeds} seeds"
    if not row.n_seeds_reached:
        return f"never ({seeds})"
    if row.onset_min == row.onset_max:
        return f"{row.onset_min} in each ({seeds})"
    return f"{num(float(row.onset_mean), 1)} ± {num(float(row.onset_std), 1)} ({row.onset_min}–{row.onset_max}; {seeds})"


def _epoch(value: object) -> str:
    return "epoch ?" if pd.isna(value) else f"epoch {value}"
