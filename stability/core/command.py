"""Every command is one Hydra app: `nli-stability <command> [key=value ...]`.

So every command takes its options the same way (Hydra overrides, `a..b` ranges, sweeps),
and gets `--help` from its config, `--cfg job`, `--info` and multirun from Hydra. Before Hydra
starts, every job's config is composed and checked against its schema (`core.jobs`), so a
wrong key, type or range is one line and exit status 2 before any work, also for a sweep
(Hydra itself would print a multi-line message, or fail halfway through the sweep).

In a multirun one failing job does not end the sweep: the job records its one-line error in
its folder (`core.jobrecord`), the other jobs go on, and the command ends with a summary
naming each failed job and its error, and exit status 1.

A command may `hold` each job's folder while the job runs (training holds its run:
`core.runlock`). A job whose folder another live process holds writes nothing, says
`[held] <folder>: held by host:pid; left alone` and returns None: a held job is not a failure
(its holder runs it, and `status` shows it), so a sweep whose other jobs all succeed exits 0;
its end counts the runs other processes still hold. Under DDP only the main rank records the job.
A command whose jobs `claimed` their folders (training: a run another process holds, or one it
skips, is not its to write) writes each job's `.hydra/`, log and record only once its task
claims the folder (`core.joboutput`), so a held or skipped job writes nothing at all.

No command writes into a folder it does not own: every job's folder (where Hydra puts its
`.hydra/` and log, and the command its files) is checked before Hydra starts. One inside a run
folder that is not the job's own run (`report out=<a run>/tables`) is refused, and so is one
that cannot be written (a read-only folder, a path through a file), each in one line.

A launcher that cannot start here (its class's `preflight()`: `hydra/launcher=slurm` without
SLURM) is one line before Hydra writes anything. Ctrl-C while the jobs are checked or run is one
line saying what is kept and how to go on (`interrupted`), and exit status 130.
"""
from __future__ import annotations

import importlib
import logging
import os
import sys
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Callable, Sequence

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from stability.core.config import CONF_DIR
from stability.core.errors import STARTS_OVER, UserError, exit_interrupted, exit_on_user_error, first_line
from stability.core.interrupts import allowed, deferred
from stability.core.joboutput import JobOutputs
from stability.core.jobrecord import FAILED, RUNNING, job_dir, read_job_record
from stability.core.jobs import job_configs
from stability.core.overrides import CHECKED_FLAGS, HYDRA_FLAGS, MULTIRUN_FLAGS, PRINT_FLAGS, prepare_argv
from stability.core.runlock import RunHeld, read_owner
from stability.core.runrecord import outermost_run

Task = Callable[[DictConfig], object]
Check = Callable[[list[DictConfig]], None]
# a job's folder -> a context that holds it while the job runs; raises RunHeld when another process does
Hold = Callable[[Path], AbstractContextManager[object]]
# what Ctrl-C leaves and how to go on, from the jobs' configs and whether they are a sweep
Interrupted = Callable[[list[DictConfig], bool], str]
# exit status of a sweep in which some jobs failed (a user error before any job is 2)
JOBS_FAILED_STATUS = 1

log = logging.getLogger(__name__)


@exit_on_user_error
def run_command(config_name: str, task: Task, argv: Sequence[str] | None = None, *,
                check: Check | None = None, extra_overrides: Sequence[str] = (), hold: Hold | None = None,
                claimed: bool = False,
                interrupted: Interrupted = lambda configs, multirun: STARTS_OVER,
                ready: Callable[[], None] | None = None) -> None:
    """Compose and check every job of `argv`, run `check` on them (e.g. no two runs share a
    directory), check that every job's folder is one it may write, and the launcher's
    preflight, then hand the command line to Hydra, which calls `task(cfg)` once per job.

    `task` runs inside Hydra's job: a UserError there is one line and status 2 as well, for a
    single run; in a sweep it fails that job only (see the module docstring). `hold`, if given,
    holds each job's folder while the job runs, before the job writes anything there; each
    job's folder is then a run, its own. `claimed`: the task calls `claim_job_folder()` before it
    writes into its folder, and the command's config has Hydra write no `.hydra/` and its log
    file held back (`core.joboutput`). `interrupted` says what Ctrl-C leaves behind. `ready`, if
    given, is called once every check and the preflight have passed, before Hydra starts.
    """
    arguments = prepare_argv(list(sys.argv[1:] if argv is None else argv), CONF_DIR)
    unknown = [arg for arg in arguments if arg.startswith("-") and arg.split("=")[0] not in HYDRA_FLAGS]
    if unknown:  # e.g. an argparse-style --lang fr: Hydra would print its whole usage
        raise UserError(f"unknown option '{unknown[0]}'",
                        fix="options are key=value overrides, e.g. lang=fr files=[a.jsonl]; --help lists the keys")
    flags = [arg.split("=")[0] for arg in arguments if arg.startswith("-")]
    configs: list[DictConfig] = []
    multirun = any(arg in MULTIRUN_FLAGS for arg in arguments)
    try:  # Ctrl-C while the jobs are checked (a report reads its runs there) or while they run
        if all(flag in CHECKED_FLAGS for flag in flags):  # not --help, --info, --config-name, ...
            configs = job_configs(arguments, config_name)
            if any(flag in PRINT_FLAGS for flag in flags):
                configs = []  # --cfg job: Hydra only prints, so no check and no jobs to sum up
        multirun = multirun or any(cfg.hydra.mode == RunMode.MULTIRUN for cfg in configs[:1])
        # before `check`, which may already write (the report's folder)
        _refuse_folders_not_ours(configs, multirun, config_name, runs_are_ours=hold is not None)
        if configs and check is not None:
            check(configs)
        if multirun and configs:  # only a sweep goes through the launcher
            _preflight(configs[0])
        if ready is not None:
            ready()
        sys.argv = [sys.argv[0], *arguments, *extra_overrides]
        with deferred():  # Hydra composes each job's config here (see core.interrupts)
            hydra.main(version_base="1.3", config_path=str(CONF_DIR),
                       config_name=config_name)(_job(task, hold, claimed))()
    except KeyboardInterrupt:
        exit_interrupted(interrupted(configs, multirun))
    if multirun:
        _end_of_sweep(configs)


def _refuse_folders_not_ours(configs: list[DictConfig], multirun: bool, config_name: str,
                             runs_are_ours: bool) -> None:
    """Every folder a job would write (its own, and a sweep's folder, where Hydra writes
    multirun.yaml) lies outside every run folder but the job's own run (`runs_are_ours`: it
    trains there), and can be written. A command without `out` writes nothing (`status`, `plan`)."""
    checked: set[Path] = set()
    for number, cfg in enumerate(configs):
        if "out" not in cfg:
            continue
        own = job_dir(cfg, number) if multirun else Path(str(cfg.hydra.run.dir))
        folders = [Path(str(cfg.hydra.sweep.dir)), own] if multirun else [own]
        for folder in folders:
            if folder in checked:
                continue
            checked.add(folder)
            run = outermost_run(folder)
            if runs_are_ours and folder == own:
                read_owner(own)  # a malformed lock is one line now, not a failed job
            if run is not None and not (runs_are_ours and run == own == folder):
                where = f"out={cfg.out}" + ("" if folder == Path(str(cfg.out)) else f" (its job folder {folder})")
                relation = "is the run folder" if folder == run else "is inside the run folder"
                raise UserError(f"{where} {relation} {run}, which {config_name} must not write into",
                                fix=f"pass out= a folder outside every run, e.g. out={run.parent / config_name}")
            _refuse_unwritable(folder)


def _refuse_unwritable(folder: Path) -> None:
    """`folder`, or the folder it would be made in, is a folder this process can write into
    (`os.access`: also true for a root that ignores permissions, false on an immutable or
    read-only folder); Hydra would end in a mkdir or open traceback."""
    existing = next(path for path in (folder, *folder.parents) if os.path.lexists(path))
    if not existing.is_dir():
        raise UserError(f"cannot make the folder {folder}: {existing} is a file",
                        fix="pass out= a folder path that goes through folders only")
    if not os.access(existing, os.W_OK | os.X_OK):
        problem = (f"cannot write into {folder}" if existing == folder else
                   f"cannot make the folder {folder}: {existing} is not writable")
        raise UserError(problem, fix="make the folder writable, or pass out= a folder you can write into")


def _preflight(cfg: DictConfig) -> None:
    """The sweep's launcher refuses now if it cannot start here: Hydra would first write the
    sweep's multirun.yaml, then fail in a traceback. A launcher class says so in a static
    `preflight()` (a UserError); one Hydra cannot import is left to Hydra's own message."""
    target = str(OmegaConf.select(cfg, "hydra.launcher._target_", default=""))
    module, _, name = target.rpartition(".")
    try:
        launcher = getattr(importlib.import_module(module), name, None) if module else None
    except ImportError:
        return
    preflight = getattr(launcher, "preflight", None)
    if callable(preflight):
        preflight()


def _end_of_sweep(configs: list[DictConfig]) -> None:
    """The end of a sweep: how many runs other processes still hold (a job of this sweep left
    them alone), then each failed job's folder and one-line error, and exit status 1."""
    directories = [job_dir(cfg, number) for number, cfg in enumerate(configs)]
    records = {directory: record for directory in directories if (record := read_job_record(directory))}
    held = sum(record.state == RUNNING for record in records.values())
    if held:
        print(f"{held} of {len(directories)} runs are still running in other processes that hold them; "
              f"nli-stability status runs={configs[0].hydra.sweep.dir} follows them", file=sys.stderr)
    failed = [(directory, record.error) for directory, record in records.items() if record.state == FAILED]
    if failed:
        lines = [f"{len(failed)} of {len(directories)} jobs failed:",
                 *(f"  {directory}: {error}" for directory, error in failed)]
        print("\n".join(lines), file=sys.stderr)
        sys.exit(JOBS_FAILED_STATUS)


def _job(task: Task, hold: Hold | None, claimed: bool) -> Callable[[DictConfig], object]:
    """`task` with user errors turned into one line (Hydra would print a UserError reaching it
    as a traceback, status 1); its folder held around it (`hold`); its outputs written once it
    claims its folder (`claimed`) or at once; in a multirun, with its job record written."""

    def job(cfg: DictConfig) -> object:
        # a model that cannot be fetched is our one-line error; the Hub client's own warnings
        # about each failed request would come first and make it several lines
        logging.getLogger("huggingface_hub").setLevel(logging.ERROR)
        hydra_cfg = HydraConfig.get()
        directory = Path(hydra_cfg.runtime.output_dir)
        multirun = hydra_cfg.mode == RunMode.MULTIRUN
        outputs = JobOutputs(directory, cfg, deferred=claimed, recorded=multirun)

        def held() -> object:
            try:
                with allowed(), nullcontext() if hold is None else hold(directory):
                    if not claimed:
                        outputs.claim()
                    with outputs.current():
                        return task(cfg)
            except RunHeld as owner:
                log.info("[held] %s: %s; left alone", directory, owner)
                return None

        return _recorded(held, outputs) if multirun else exit_on_user_error(held)()

    job.__module__ = task.__module__  # Hydra names the job and finds the calling file from here
    return job


def _recorded(job: Callable[[], object], outputs: JobOutputs) -> object:
    """One job of a sweep: any error ends this job only, as one line in its record and log."""
    try:
        result = job()
    except UserError as err:
        error = f"error: {err}"
        log.error(error)
    except Exception as err:  # a bug: its traceback goes to the job's log, the sweep goes on
        error = f"{type(err).__name__}: {first_line(err)}"
        log.exception("job failed: %s", error)
    else:
        outputs.finish()
        return result
    outputs.finish(error)
    return None
