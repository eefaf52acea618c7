"""`## Which method stabilises what`: per (lang, setup), every variant (a stabilisation method)
against the reference method (`reference=`): failed-run rate, σ and mean of MCC over seeds, σ's
ratio to the reference's, and which categories' σ differs from the reference's (`stability.report.stabilizers`)."""
from __future__ import annotations

import logging

import pandas as pd

from stability.core.markdown import num, table
from stability.core.schemas.report import REFERENCE
from stability.report import figures
from stability.report.calibration import (SIGMA_CAP, TOO_FEW, UNFITTED, Calibration, aso_text, method_name, percent,
                                         too_few)
from stability.report.collect import OVERALL
from stability.report.context import Context
from stability.report.section import Built, figure_links
from stability.report.sequential_pairs import withheld_text
from stability.report.stabilizers import (FILE, Pairs, all_failed, method_labels, reference_pairs,
                                          stabilizers_table, with_dominance)
from stability.statistics.calibration import FAILED_RATE, FALSE_POSITIVES, FLOOR
from stability.statistics.seeds import condition_name

_NAMED = 8   # categories named per method in "σ differs"; more are counted
NOTHING_TO_SIMULATE = "no interval (no spread among the non-failed runs to simulate)"

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
                              confidence=options.confidence, random_state=options.random_state,
                              calibration=context.calibration, decided=context.decided_pairs)
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
            f"Wilson interval, σ of the overall MCC over seeds with its {level} interval, its ratio to the "
            f"reference's σ (σ / σ ref) with its {level} interval, and the mean. Each interval is by the method "
            f"*How far to trust these numbers* chose for the row's seeds and failed runs, named in the column "
            f"header with the lowest measured coverage among the rows (per row where they differ); *{TOO_FEW}* "
            f"where no method reaches {FLOOR:.0%} measured coverage. "
            f"*σ differs*: the cells (overall, coarse, fine categories) whose σ differs from the reference's "
            f"(Brown–Forsythe, Holm over all {tested} compared cells, p < {alpha:g}), ↓ steadier, ↑ less steady. "
            f"{failed} Every cell, with Welch's test of the means, in `{FILE}`. {dominance.note}\n\n")
    if options.aso and context.calibration is not None:
        table_ = context.calibration.table
        text += aso_text(table_[(table_["measure"] == FALSE_POSITIVES) & (table_["reference"] != "")], True)
    calibration = context.calibration
    for (lang, setup), part in stats.groupby(["lang", "setup"], sort=False):
        overall = part[part["category"] == OVERALL]
        spread, ratio = (_Labels(overall, column, calibration is not None) for column in ("std", "std_ratio"))
        text += f"**{lang} · {setup}**\n\n" + table(
            ["method", "seeds", "failed", f"failed rate [{level} CI, Wilson{_failed_header(part, calibration)}]",
             f"σ overall [{level} CI{spread.header}]",
             f"σ / σ ref [{level} CI{ratio.header}]", "mean overall",
             f"σ differs (Holm p < {alpha:g})"], _rows(part, alpha, calibration, spread, ratio)) + "\n"
    text += _notes(pairs) + _decided_notes(stats, context)
    if drawn:
        text += figure_links(drawn)
    return Built(text, {FILE: stats}, drawn)


class _Labels:
    """How a table names the interval method of one column (`std` or `std_ratio`): in the header
    when every row that has an interval shares one method (with the lowest measured coverage), else
    in each cell; a row without a usable method says so in its cell."""

    def __init__(self, overall: pd.DataFrame, column: str, calibrated: bool) -> None:
        self.column = column
        named = overall[f"{column}_method"]
        rows = overall[named.notna() & ~named.isin([TOO_FEW, UNFITTED])]
        methods = rows[f"{column}_method"].unique()
        self.per_cell = calibrated and len(methods) > 1
        if not calibrated:
            self.header = ", percentile bootstrap, coverage not measured (calibration_sims=0)"
        elif len(methods) == 1:
            self.header = f", {method_name(methods[0])}: measured coverage ≥ {percent(rows[f'{column}_coverage'].min())}"
        elif not len(methods):   # what the rows say instead: too few seeds, nothing to simulate, or both
            reasons = [reason for method, reason in ((TOO_FEW, f"no method reaches {percent(FLOOR)} measured coverage"),
                                                     (UNFITTED, NOTHING_TO_SIMULATE)) if named.eq(method).any()]
            self.header = ", " + " or ".join(reasons) if reasons else ""
        else:
            self.header = ", method: measured coverage" if self.per_cell else ""
        if column == "std" and overall["std_high"].ge(SIGMA_CAP).any():
            self.header += f"; bounds cut at {SIGMA_CAP:g}, the largest σ of MCCs in [−1, 1]"

    def cell(self, row, value: str, bounds: str) -> str:
        method = getattr(row, f"{self.column}_method")
        coverage = getattr(row, f"{self.column}_coverage")
        if method == TOO_FEW:
            return f"{value}; {too_few(coverage)}"
        if method == UNFITTED:
            return f"{value}; {NOTHING_TO_SIMULATE}"
        suffix = f" {method_name(method)}: {percent(coverage)}" if self.per_cell and isinstance(method, str) else ""
        return f"{value} {bounds}{suffix}"


def _failed_header(part: pd.DataFrame, calibration: Calibration | None) -> str:
    """The failed rate's header after "Wilson": the lowest measured coverage of the rows whose interval is
    printed; the calibration simulates it only where runs failed (where none did, the interval [0, x]
    holds a rate of 0 by construction)."""
    if calibration is None:
        return ", coverage not measured (calibration_sims=0)"
    chosen = [calibration.choice(first.lang, condition_name(first.setup, first.method), "", "all", OVERALL,
                                 FAILED_RATE) for first in part.drop_duplicates("method").itertuples()]
    usable = [row["coverage"] for row in chosen if row is not None and row["usable"]]
    if usable:
        return f": measured coverage ≥ {percent(min(usable))} where runs failed"
    if all(row is None for row in chosen):
        return "; not simulated: no run failed"
    return f"; where runs failed no row reaches {percent(FLOOR)} measured coverage"


def _failed_rate(first, calibration: Calibration | None) -> str:
    """The failed rate with its Wilson interval, or *too few seeds* where Wilson's measured coverage
    at the condition's runs and rate is below 90 %."""
    if pd.isna(first.failed_rate):
        return "–"
    value = num(first.failed_rate, 2)
    chosen = (calibration.choice(first.lang, condition_name(first.setup, first.method), "", "all", OVERALL,
                                 FAILED_RATE) if calibration else None)
    if chosen is not None and not chosen["usable"]:
        return f"{value}; {too_few(chosen['coverage'])}"
    return f"{value} [{num(first.failed_low, 2)}, {num(first.failed_high, 2)}]"


def _rows(part: pd.DataFrame, alpha: float, calibration: Calibration | None, spread: _Labels,
          ratio_labels: _Labels) -> list[list]:
    rows = []
    labels = method_labels(list(part["method"].drop_duplicates()))
    for method, cells in part.groupby("method", sort=False):
        overall = cells[cells["category"] == OVERALL]
        first = (overall if not overall.empty else cells).iloc[0]
        is_reference = method == first.reference
        failed = "–" if pd.isna(first.failed) else f"{first.failed} of {first.n_runs}"
        rate = _failed_rate(first, calibration)
        sigma = (spread.cell(first, num(first.std_mcc), f"[{num(first.std_low)}, {num(first.std_high)}]")
                 if not overall.empty else "–")
        ratio = ("–" if overall.empty or is_reference or all_failed(first) or pd.isna(first.std_ratio)
                 else _ratio(first.std_ratio) if pd.isna(first.std_ratio_low) and first.std_ratio_method == "percentile"
                 else ratio_labels.cell(first, _ratio(first.std_ratio),
                                        f"[{_ratio(first.std_ratio_low)}, {_ratio(first.std_ratio_high)}]"))
        mean = num(first.mean_mcc) if not overall.empty else "–"
        rows.append([labels[method] + (" (reference)" if is_reference else ""),
                     int(first.n_seeds), failed, rate, sigma, ratio, mean,
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


def _decided_notes(stats: pd.DataFrame, context: Context) -> str:
    """Pairs whose Welch test of the means is left out of the CSV: an adaptive sweep decided them."""
    pairs = {(condition_name(setup, reference), condition_name(setup, method))
             for setup, method, reference in zip(stats["setup"], stats["method"], stats["reference"])}
    return "".join(withheld_text(a, b, f"Welch's p of the means (`p_mean`, empty in `{FILE}`)") + "\n\n"
                   for a, b in sorted(pairs) if context.decided_sequentially(a, b))


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
