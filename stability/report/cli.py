"""`nli-stability report runs=PATH [key=value ...]` (also `python -m stability.report`): read the
runs, compute the seed statistics, write tables, figures and report.md into `out`.

One Hydra app (`stability/conf/report.yaml`, `--help`). The inputs are read and every option
checked against them before Hydra starts its job, so a user error leaves no report folder
behind; the job then writes each section of `sections.SECTIONS` in page order.
"""
from __future__ import annotations

import sys
from typing import Sequence

from omegaconf import DictConfig, OmegaConf

from stability.core.command import run_command
from stability.core.config import REPORT_CONFIG_NAME
from stability.core.errors import UserError, exit_on_user_error
from stability.core.jobs import without_hydra
from stability.core.markdown import counted
from stability.core.overrides import MULTIRUN_FLAGS
from stability.core.schemas.report import ReportSchema
from stability.data.run_items import run_diagnostic_records
from stability.report.context import Context, prepare
from stability.report.page import PAGE_FILE
from stability.report.page.build import write_page
from stability.report.sections import SECTIONS


def annotate_pairs(pairs: list[tuple[str, str]], lang: str) -> list:
    """The rule-based annotator's features of (premise, hypothesis) pairs, for the sections on
    training dynamics (`Context.annotate`). Imported on use: an optional extra, and one that builds
    on `stability`, which only a command may import."""
    from annotators.api import annotate

    return annotate(pairs, lang)


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of `nli-stability report` and `python -m stability.report`."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    refuse_bare_paths(arguments)
    prepared: list[Context] = []

    def check(configs: list[DictConfig]) -> None:
        refuse_sweep(configs)
        prepared.append(prepare(options_of(configs[0]), annotate_pairs, run_diagnostic_records))

    def task(cfg: DictConfig) -> None:
        # prepared by `check`, unless Hydra runs the job without it (e.g. with --config-dir)
        write_report(prepared.pop() if prepared else prepare(options_of(cfg), annotate_pairs, run_diagnostic_records))

    run_command(REPORT_CONFIG_NAME, task, arguments, check=check)


def options_of(cfg: DictConfig) -> ReportSchema:
    """The typed options of a composed report config (its schema's checks run here)."""
    options = OmegaConf.to_object(without_hydra(cfg))
    assert isinstance(options, ReportSchema)
    return options


def refuse_bare_paths(arguments: list[str]) -> None:
    """`python -m stability.report outputs/smoke` was the old command line: say how to write it now."""
    if any(arg.startswith("-") and arg not in MULTIRUN_FLAGS for arg in arguments):
        return  # Hydra's own flags (--cfg job, --info ...) take bare values
    bare = [arg for arg in arguments if "=" not in arg and not arg.startswith("-")]
    if bare:
        runs = bare[0] if len(bare) == 1 else f"[{','.join(bare)}]"
        raise UserError(f"'{bare[0]}' is not an option (options are key=value)", fix=f"name the runs: runs={runs}")


def refuse_sweep(configs: list[DictConfig]) -> None:
    """A sweep would make one report per job (into one folder, or scattered); reading several
    paths into one report is a list, `runs=[a,b]`."""
    if len(configs) < 2:
        return
    values: dict[str, list[str]] = {}
    for cfg in configs:
        for override in cfg.hydra.overrides.task:
            key, _, value = str(override).partition("=")
            values.setdefault(key, [])
            if value not in values[key]:
                values[key].append(value)
    swept = {key: found for key, found in values.items() if len(found) > 1}
    lists = " ".join(f"{key}=[{','.join(found)}]" for key, found in swept.items())
    raise UserError(f"the report does not sweep: {', '.join(swept)} would make {len(configs)} separate reports",
                    fix=f"to read several paths into one report write a list in brackets: {lists}")


def write_report(context: Context) -> None:
    """Every section in page order: its tables as CSVs, its markdown into report.md, and with
    `html` (the default) the same sections as report.html."""
    done = []
    for section in SECTIONS:
        built = section(context)
        if built is None:
            continue
        for name, table in built.tables.items():
            table.to_csv(context.out / name, index=False)
        done.append((section, built))
    (context.out / "report.md").write_text("\n".join(built.markdown for _, built in done if built.markdown),
                                           encoding="utf-8")
    pages = " and report.md"
    if context.options.html:
        write_page(context, done)
        pages = f", report.md and {PAGE_FILE}"
    n_tables = sum(len(built.tables) for _, built in done)
    n_figures = sum(len(built.figures) for _, built in done)
    print(f"read {counted(context.collected.n_runs, 'run')} and {counted(context.collected.n_csv, 'CSV file')}; "
          f"wrote {counted(n_tables, 'table')}, {counted(n_figures, 'figure')}{pages} to {context.out}")
