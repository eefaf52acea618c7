"""`python -m stability.generate lang=L [suite=S] [n=N] [seed=K] out=FILE`: write a test suite.

    python -m stability.generate lang=fr suite=all n=200 seed=0 out=suite_fr.jsonl

Writes the items of the language's template suite(s) as a jsonl in the diagnostic format
(idx, label, sentence1, sentence2, the coarse category fields) plus `template` and
`features`. suite: logic, structure, morphology or all (default). n: items per template
(default all combinations), sampled by seed (default 0). The same template ids give the
same idx in every language, so suites of several languages align item by item.
"""
from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from stability.core.errors import UserError, exit_on_user_error
from stability.templates import ALL, generate_suite, write_diagnostic_jsonl

_KEYS = ("lang", "suite", "n", "seed", "out")
_USAGE = "python -m stability.generate lang=L [suite=S] [n=N|all] [seed=K] out=FILE"


def parse_arguments(argv: list[str]) -> dict[str, str]:
    """key=value arguments; unknown or repeated keys and missing lang/out are user errors."""
    values: dict[str, str] = {}
    for argument in argv:
        key, sign, value = argument.partition("=")
        if not sign or key not in _KEYS or not value:
            raise UserError(f"cannot read the argument '{argument}'", fix=f"use {_USAGE}")
        if key in values:
            raise UserError(f"'{key}' is given twice", fix=f"use {_USAGE}")
        values[key] = value
    missing = [key for key in ("lang", "out") if key not in values]
    if missing:
        raise UserError(f"missing {' and '.join(missing)}", fix=f"use {_USAGE}")
    return values


@exit_on_user_error
def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if any(argument in ("-h", "--help") for argument in argv):
        print(__doc__)
        return
    args = parse_arguments(argv)
    examples = generate_suite(args["lang"], args.get("suite", ALL), args.get("n"), args.get("seed", 0))
    out = Path(args["out"])
    if out.is_dir():
        raise UserError("the output is a folder", path=out, fix="give out=FILE.jsonl")
    try:
        write_diagnostic_jsonl(examples, out)
    except OSError as err:
        raise UserError(f"cannot write the suite ({err.strerror})", path=out, fix="choose another out=") from None
    labels = Counter(example.label for example in examples)
    print(f"wrote {len(examples)} items of {len({e.template for e in examples})} templates "
          f"({labels[0]} entailment, {labels[1]} not_entailment) to {out}")


if __name__ == "__main__":
    main()
