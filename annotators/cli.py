"""`python -m annotators {annotate,stats,evaluate}`: annotate files, measure feature shares,
score the rules against gold diagnostic categories."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from annotators.api import annotate
from annotators.evaluate import agreement
from annotators.languages import LANGUAGES, check_lang
from annotators.stats import feature_share
from annotators.tables import to_markdown, to_text
from stability.core.atomic import jsonl_text
from stability.core.errors import UserError, exit_on_user_error
from stability.core.progress import setup_cli_logging
from stability.data.formats import read_examples


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--lang", required=True, help=f"language of the texts: {', '.join(LANGUAGES)}")
    common.add_argument("--no-cache", action="store_true",
                        help="annotate afresh, neither reading nor writing the annotation cache")
    parser = argparse.ArgumentParser(prog="python -m annotators", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    annotate_cmd = sub.add_parser(
        "annotate", parents=[common], help="write the features of every pair as jsonl",
        description="Read a dataset file in any released format and write one JSON line per "
                    "pair: the pair's fields plus `features` (of the pair), `premise_features`, "
                    "`hypothesis_features` and `unsupported` (features the language cannot detect).")
    annotate_cmd.add_argument("input", type=Path, help="dataset file (jsonl or tsv)")
    annotate_cmd.add_argument("--output", "-o", type=Path, default=None,
                              help="output jsonl file; default: standard output")

    stats_cmd = sub.add_parser(
        "stats", parents=[common], help="share of pairs with each feature",
        description="Write DIR/feature_share.csv (column `feature`, then one column per input, "
                    "named by the file stem; empty where unsupported) and DIR/feature_share.md.")
    stats_cmd.add_argument("inputs", type=Path, nargs="+", help="dataset files")
    stats_cmd.add_argument("--out", type=Path, default=Path("."), help="output directory (default: .)")

    evaluate_cmd = sub.add_parser(
        "evaluate", parents=[common], help="agreement with gold diagnostic categories",
        description="Write DIR/agreement.csv (feature, n_gold, recall, precision, f1, "
                    "flag_rate_untagged) and print it. Gold tags mark the phenomenon the "
                    "inference hinges on, so recall is the headline figure.")
    evaluate_cmd.add_argument("diagnostic", type=Path, help="diagnostic file with gold categories")
    evaluate_cmd.add_argument("--out", type=Path, default=Path("."), help="output directory (default: .)")
    return parser


def _column_names(paths: Sequence[Path]) -> list[str]:
    """File stems, prefixed by the parent folder where two inputs share a stem."""
    stems = [path.stem for path in paths]
    return [f"{path.parent.name}/{path.stem}" if stems.count(path.stem) > 1 else path.stem
            for path in paths]


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise UserError(f"cannot write ({err.strerror})", path=path,
                        fix="choose a writable output location") from None


def _annotate(args: argparse.Namespace) -> None:
    examples = read_examples(args.input, args.lang)
    sets = annotate(examples, args.lang, use_cache=not args.no_cache)
    lines = jsonl_text({**example.to_json(), **fs.to_json()} for example, fs in zip(examples, sets))
    if args.output is None or str(args.output) == "-":
        sys.stdout.write(lines)
    else:
        _write(args.output, lines)


def _stats(args: argparse.Namespace) -> None:
    datasets = {name: annotate(read_examples(path, args.lang), args.lang, use_cache=not args.no_cache)
                for name, path in zip(_column_names(args.inputs), args.inputs)}
    table = feature_share(datasets)
    _write(args.out / "feature_share.csv", table.to_csv(index=False))
    _write(args.out / "feature_share.md", to_markdown(table))
    print(to_text(table), end="")


def _evaluate(args: argparse.Namespace) -> None:
    examples = read_examples(args.diagnostic, args.lang)
    if not any(example.categories for example in examples):
        raise UserError("no item carries gold categories", path=args.diagnostic,
                        fix="pass a diagnostic file (with logic / lexical-semantics / ... fields)")
    table = agreement(examples, annotate(examples, args.lang, use_cache=not args.no_cache))
    _write(args.out / "agreement.csv", table.to_csv(index=False))
    print(to_text(table), end="")


_COMMANDS = {"annotate": _annotate, "stats": _stats, "evaluate": _evaluate}


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> None:
    setup_cli_logging()
    args = _parser().parse_args(argv)
    check_lang(args.lang)
    _COMMANDS[args.command](args)
