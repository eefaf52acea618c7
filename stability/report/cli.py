"""`python -m stability.report PATH... [--out DIR]`: read runs, compute statistics, write the report."""
from __future__ import annotations

import argparse
import logging
from pathlib import Path

from stability.core.errors import exit_on_user_error
from stability.core.progress import setup_cli_logging
from stability.core.schemas.report import ReportSchema
from stability.report.context import Context, prepare
from stability.report.sections import SECTIONS

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
    options = ReportSchema(
        runs=[str(path) for path in args.paths], out=str(args.out or default_out(args.paths[0])),
        compare=args.compare, delta_mcc=args.delta_mcc, delta_std=args.delta_std, bootstrap=args.bootstrap,
        confidence=args.confidence, random_state=args.random_state, flip_top=args.flip_top,
        figures=not args.no_figures, failed_margin=args.failed_margin, constant_share=args.constant_share,
        exclude_failed=args.exclude_failed, consistency_pair=args.consistency_pair,
        dataqa=[str(path) for path in args.dataqa] if args.dataqa else None)
    write_report(prepare(options))


def write_report(context: Context) -> None:
    """Every section in page order: its tables as CSVs, its markdown into report.md."""
    parts, n_tables, n_figures = [], 0, 0
    for section in SECTIONS:
        built = section(context)
        if built is None:
            continue
        for name, table in built.tables.items():
            table.to_csv(context.out / name, index=False)
        n_tables += len(built.tables)
        n_figures += len(built.figures)
        if built.markdown:
            parts.append(built.markdown)
    (context.out / "report.md").write_text("\n".join(parts), encoding="utf-8")
    print(f"read {context.collected.n_runs} runs and {context.collected.n_csv} CSV files; wrote {n_tables} "
          f"tables, {n_figures} figures and report.md to {context.out}")
