"""`nli-stability <command> [overrides]`: the one front door to every command.

    nli-stability train experiment=smoke
    nli-stability probe runs=outputs/smoke
    nli-stability <command> --help

Each command is a Hydra app with its own config (`stability/conf/<command>.yaml`, or
`train.yaml`) and a `main(argv)`; this dispatcher only picks it. Command modules are imported
when chosen, so `nli-stability --help` answers without loading torch. `python -m
stability.cli` and `python -m stability` are the same front door, and each command's own
module (`python -m stability.train`, `python -m probing`, ...) takes the same overrides.
"""
from __future__ import annotations

import importlib
import sys
from typing import NamedTuple, Sequence

from stability.core.errors import USER_ERROR_STATUS, exit_on_broken_pipe, exit_on_interrupt

PROGRAM = "nli-stability"


class Command(NamedTuple):
    module: str   # the module whose main(argv) runs the command
    summary: str


COMMANDS: dict[str, Command] = {
    "train": Command("stability.train", "fine-tune an encoder: one run per (lang, setup, variant, seed) of a sweep"),
    "report": Command("stability.report.cli", "seed-stability report of a sweep's runs: tables, figures, report.md"),
    "probe": Command("probing.cli", "layer-wise linear probes of the runs' saved encoders"),
    "dataqa": Command("stability.dataqa.cli", "language-confusion, duplicate and leakage checks of data files"),
    "generate": Command("stability.generate", "write a template test suite as a diagnostic set"),
    "annotate": Command("annotators.cli", "detect diagnostic features in NLI pairs, their shares, their agreement"),
    "plan": Command("stability.plan", "what a training sweep will run and cost, before it runs"),
    "status": Command("stability.status", "what became of each run of a sweep: done, running, failed, interrupted, "
                                          "not started"),
    "view": Command("stability.view", "serve a report's page (report.html) on localhost and print its address"),
}


def usage() -> str:
    """The list of commands, each with its summary."""
    width = max(map(len, COMMANDS))
    lines = [f"usage: {PROGRAM} <command> [key=value ...]", "", "commands:"]
    lines += [f"  {name.ljust(width)}  {command.summary}" for name, command in COMMANDS.items()]
    lines += ["", f"Every command takes Hydra overrides (key=value, key=[a,b], a..b ranges, -m, --cfg job);",
              f"`{PROGRAM} <command> --help` says what it reads and writes, with examples."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or arguments[0] in ("-h", "--help"):
        with exit_on_broken_pipe():
            print(usage())
        return
    name, rest = arguments[0], arguments[1:]
    if name not in COMMANDS:
        print(f"error: unknown command '{name}' (fix: use one of: {', '.join(COMMANDS)})", file=sys.stderr)
        sys.exit(USER_ERROR_STATUS)
    sys.argv[0] = f"{PROGRAM} {name}"   # the program Hydra's own usage lines name
    with exit_on_interrupt():  # Ctrl-C while the command loads; once it runs, `run_command` says more
        importlib.import_module(COMMANDS[name].module).main(rest)


if __name__ == "__main__":
    main()
