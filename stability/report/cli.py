"""`python -m stability.report PATH... [--out DIR]`: read runs, compute statistics, write the report."""
from __future__ import annotations

import argparse
import logging
from pathlib import Path

import pandas as pd

from stability.core.errors import UserError, exit_on_user_error
from stability.core.progress import setup_cli_logging
from stability.report import figures
from stability.report.agreement import agreement_by_category, flip_items, item_agreement
from stability.report.bootstrap import bootstrap_ci, bootstrap_deltas
from stability.report.collect import DEGENERATE, collect
from stability.report.compare import check_setups, delta_shares, setup_deltas
from stability.report.crosslingual import check_arguments, cross_lingual
from stability.report.failed import FailedRule, failed_keys, failed_runs, without_failed
from stability.report.markdown import Comparison, Report, render
from stability.report.probing import probing_section
from stability.report.sizes import size_curve
from stability.report.stats import language_corr, summary
from stability.report.suites import suite_accuracy, suite_section
from stability.statistics.figures import seed_heatmaps
from stability.statistics.seeds import category_stats

log = logging.getLogger(__name__)

DESCRIPTION = """\
Seed-stability report for runs of stability.train (DESIGN.md sections 4-6).

PATHs are output folders, searched recursively for run directories (folders holding
metrics.json; runs without it, e.g. killed ones, are ignored), and/or tidy CSV files with
columns lang, setup, seed, category, mcc (optional: level = fine|coarse|all, rows without
it count as fine; n_items; n_added). Any mix is read into one table.

Always written to --out: results.csv (the tidy table; the level-"all" row of a run has
category "overall"), summary.csv, category_stats.csv, language_corr.csv, report.md and
heat maps. When the input allows: size_curve.csv/.png (setups differing in added MNLI
examples), item_agreement.csv, agreement_by_category.csv, flip_items.csv and
bootstrap_ci.csv (need predictions.jsonl, i.e. run directories), template_accuracy.csv (runs
scored on generated test suites, data.diagnostic=generated), and with --compare
deltas.csv, delta_shares.csv, bootstrap_deltas.csv and a delta heat map.

Runs of >= 2 languages of one setup add consistency.csv (agreement and Cohen's κ of two
languages' predictions on the same items, matched by idx; rows with lang_a == lang_b are
the seed baseline), consistency_summary.csv, consistency_by_category.csv, a κ heat map
and per-category bars; with --dataqa, consistency on items flagged by the data QA vs the
others (consistency_flagged.csv). failed_runs.csv lists every run directory's verdict; a
run is failed when its validation accuracy is not above the validation majority share
(+ --failed-margin) or its diagnostic predictions are constant (--constant-share), and
seed statistics are given again over the non-failed runs (*_nonfailed.csv).

Statistics: σ is the sample standard deviation over seeds (ddof = 1). RS corr. is the
mean Pearson r between two seeds' category-MCC vectors over all seed pairs (pairs with a
constant vector are skipped and counted). Item agreement is the share of seed pairs that
predict the same label. Bootstrap intervals resample seeds and items together.
"""


def build_parser() -> argparse.ArgumentParser:
    """The command line; every option's help says what it changes."""
    parser = argparse.ArgumentParser(prog="python -m stability.report", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                        help="run-output folder or tidy results CSV (several allowed, any mix)")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="output folder (default: PATH/report for a folder, "
                             "report/ beside the file for a CSV; PATH = the first one)")
    parser.add_argument("--compare", nargs=2, metavar=("SETUP_A", "SETUP_B"),
                        help="deltas B − A of mean MCC and σ per (language, category)")
    parser.add_argument("--delta-mcc", type=float, default=0.1, metavar="T",
                        help="count cells with ΔMCC > T (strict; default 0.1)")
    parser.add_argument("--delta-std", type=float, default=-0.05, metavar="T",
                        help="count cells with Δσ < T (strict; default -0.05)")
    parser.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                        help="multi-bootstrap samples for confidence intervals (default 1000; 0 = off)")
    parser.add_argument("--confidence", type=float, default=0.95, metavar="LEVEL",
                        help="confidence level of the bootstrap intervals (default 0.95)")
    parser.add_argument("--random-state", type=int, default=0, metavar="SEED",
                        help="seed of the bootstrap's random draws (default 0)")
    parser.add_argument("--flip-top", type=int, default=20, metavar="K",
                        help="items per (lang, setup) in flip_items.csv (default 20)")
    parser.add_argument("--no-figures", action="store_true", help="write tables and report.md only")
    failed = parser.add_argument_group("failed runs and cross-lingual consistency")
    failed.add_argument("--failed-margin", type=float, default=0.0, metavar="M",
                        help="failed: validation accuracy <= validation majority share + M (default 0.0)")
    failed.add_argument("--constant-share", type=float, default=1.0, metavar="S",
                        help="failed: one label in >= S of the diagnostic predictions (default 1.0 = all)")
    failed.add_argument("--exclude-failed", action="store_true",
                        help="compute every table and figure without the failed runs (they stay listed)")
    failed.add_argument("--consistency-pair", nargs=2, metavar=("LANG_A", "LANG_B"),
                        help="language pair of the per-category consistency bars (default: lowest κ)")
    failed.add_argument("--dataqa", nargs="+", type=Path, metavar="DIR",
                        help="output folders of `python -m stability.dataqa` (flagged.jsonl) to join "
                             "with consistency")
    return parser


def default_out(first: Path) -> Path:
    """`report/` inside the first folder, or beside the first CSV."""
    return first / "report" if first.is_dir() else first.parent / "report"


class _Writer:
    """Writes tables into the output folder and remembers what it wrote."""

    def __init__(self, out: Path) -> None:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise UserError(f"cannot create the output folder ({err.strerror})", path=out,
                            fix="choose another --out") from None
        self.out = out
        self.written: list[Path] = []

    def csv(self, table: pd.DataFrame, name: str) -> None:
        table.to_csv(self.out / name, index=False)
        self.written.append(self.out / name)


def _comparison(args: argparse.Namespace, predictions: pd.DataFrame, stats: pd.DataFrame,
                writer: _Writer) -> Comparison:
    """deltas.csv, delta_shares.csv and, with predictions, bootstrap_deltas.csv."""
    setup_a, setup_b = args.compare
    deltas = setup_deltas(stats, setup_a, setup_b)
    shares = delta_shares(deltas, args.delta_mcc, args.delta_std)
    writer.csv(deltas, "deltas.csv")
    writer.csv(shares, "delta_shares.csv")
    boot = None
    if args.bootstrap and not predictions.empty:
        boot = bootstrap_deltas(predictions, setup_a, setup_b, args.bootstrap,
                                args.confidence, args.random_state)
        writer.csv(boot, "bootstrap_deltas.csv")
    figure = None if args.no_figures else figures.delta_heatmaps(deltas, setup_a, setup_b, writer.out)
    return Comparison(setup_a, setup_b, args.delta_mcc, args.delta_std, deltas, shares, boot, figure)


def _per_item(args: argparse.Namespace, predictions: pd.DataFrame, writer: _Writer,
              failed: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Agreement and bootstrap tables, which need the runs' predictions.jsonl."""
    if predictions.empty:
        log.info("note: no predictions.jsonl in the inputs: per-item agreement and bootstrap intervals skipped")
        return {}
    items = item_agreement(predictions)
    by_category = agreement_by_category(items)
    writer.csv(items, "item_agreement.csv")
    writer.csv(by_category, "agreement_by_category.csv")
    writer.csv(flip_items(items, args.flip_top), "flip_items.csv")
    parts = {"items": items, "agreement": by_category}
    if failed["failed"].any():
        parts["items_nonfailed"] = item_agreement(without_failed(predictions, failed))
        writer.csv(parts["items_nonfailed"], "item_agreement_nonfailed.csv")
    if args.bootstrap:
        parts["bootstrap"] = bootstrap_ci(predictions, args.bootstrap, args.confidence, args.random_state)
        writer.csv(parts["bootstrap"], "bootstrap_ci.csv")
    return parts


def _nonfailed_stats(failed: pd.DataFrame, results: pd.DataFrame, writer: _Writer) -> pd.DataFrame | None:
    """failed_runs.csv and the seed statistics again without the failed runs (when runs were judged)."""
    if failed.empty:
        return None
    writer.csv(failed, "failed_runs.csv")
    kept = without_failed(results, failed)
    writer.csv(category_stats(kept), "category_stats_nonfailed.csv")
    nonfailed = summary(kept)
    writer.csv(nonfailed, "summary_nonfailed.csv")
    return nonfailed


@exit_on_user_error
def main(argv: list[str] | None = None) -> None:
    """Entry point of `python -m stability.report`."""
    setup_cli_logging()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.bootstrap < 0 or not 0 < args.confidence < 1 or args.flip_top < 1:
        parser.error("need --bootstrap >= 0, 0 < --confidence < 1 and --flip-top >= 1")
    if not 0.5 <= args.constant_share <= 1:
        parser.error("need 0.5 <= --constant-share <= 1")
    collected = collect(args.paths)
    failed = failed_runs(collected.runs, collected.predictions, FailedRule(args.failed_margin, args.constant_share))
    with_flags = collected.results_with_flags()     # results.csv keeps every run, even with --exclude-failed
    kept, predictions = with_flags, collected.predictions
    if args.exclude_failed:
        kept, predictions = without_failed(with_flags, failed), without_failed(predictions, failed)
    results = kept.drop(columns=DEGENERATE)         # the same rows, without the flags
    if args.compare:
        check_setups(results, *args.compare)
    flagged_by_lang = check_arguments(args, predictions)
    writer = _Writer(args.out or default_out(args.paths[0]))
    draw = not args.no_figures

    summary_table, stats = summary(results), category_stats(results)
    languages = language_corr(stats)
    curve = size_curve(summary_table, results)
    for table, name in ((with_flags, "results.csv"), (summary_table, "summary.csv"),
                        (stats, "category_stats.csv"), (languages, "language_corr.csv")):
        writer.csv(table, name)
    if not curve.empty:
        writer.csv(curve, "size_curve.csv")
    suites = suite_accuracy(predictions)
    if not suites.empty:
        writer.csv(suites, "template_accuracy.csv")
    nonfailed = _nonfailed_stats(failed, results, writer)
    fine_flags = kept[kept["level"] == "fine"]
    crossed = cross_lingual(predictions, failed, args, flagged_by_lang, writer.out, writer.csv, draw)
    report = Report(
        sources=f"{collected.n_runs} run directories and {collected.n_csv} tidy CSV files "
                f"from {', '.join(str(path) for path in args.paths)}",
        summary=summary_table, category_stats=stats, language_corr=languages, confidence=args.confidence,
        size_curve=curve,
        seed_figures=seed_heatmaps(stats, writer.out, fine_flags, failed_keys(failed)) if draw else [],
        language_figures=figures.language_heatmaps(stats, writer.out, fine_flags) if draw else [],
        size_figure=figures.size_curve_plot(curve, writer.out) if draw and not curve.empty else None,
        comparison=_comparison(args, predictions, stats, writer) if args.compare else None,
        failed=failed, summary_nonfailed=nonfailed, excluded_failed=args.exclude_failed, cross_lingual=crossed,
        **_per_item(args, predictions, writer, failed),
        sections=[section for section in (suite_section(suites, stats) if not suites.empty else "",
                                          probing_section(args.paths)) if section],
    )
    (writer.out / "report.md").write_text(render(report), encoding="utf-8")
    print(f"read {collected.n_runs} runs and {collected.n_csv} CSV files; wrote {len(writer.written)} "
          f"tables, {len(report.figures)} figures and report.md to {writer.out}")
