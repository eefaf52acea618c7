"""`python -m stability.plan [overrides] [--samples-per-second X]`: what a sweep will run and cost.

    python -m stability.plan experiment=mnli_size --samples-per-second 17
    python -m stability.plan experiment=baseline seed=0..1 --json

The runs and GPU-hours are computed by `stability.sweep.plan` (see its docstring for the formula).
"""
from __future__ import annotations

import argparse
import json
import math
from typing import NoReturn

from stability.core.errors import UserError, exit_on_user_error
from stability.sweep.plan import THROUGHPUT_HINT, format_plan, plan_json, planned_runs


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are one-line user errors (status 2) like the rest of the project."""

    def error(self, message: str) -> NoReturn:
        raise UserError(message, fix="see python -m stability.plan --help")


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"'{text}' is not a finite positive number")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m stability.plan", description=__doc__,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                        help="the overrides of python -m stability.train, e.g. experiment=baseline seed=0..1")
    parser.add_argument("--samples-per-second", type=_positive, metavar="X", help=THROUGHPUT_HINT)
    parser.add_argument("--expected-epochs", type=_positive, metavar="E",
                        help="epochs per run instead of the upper bound trainer.max_epochs")
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    parser.add_argument("-m", "--multirun", action="store_true", help="accepted, as in stability.train; sweeps need no -m")
    return parser


@exit_on_user_error
def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_intermixed_args(argv)
    runs = planned_runs(args.overrides + (["--multirun"] if args.multirun else []), args.expected_epochs)
    if args.json:
        print(json.dumps(plan_json(runs, args.samples_per_second), indent=2))
    else:
        print(format_plan(runs, args.samples_per_second, args.expected_epochs))


if __name__ == "__main__":
    main()
