"""No command writes into a folder it does not own: a run another process holds, or one a rerun
skips, is left byte for byte as it was (Hydra's .hydra/ and the job's log included); a report
(or any command's out=) inside a run folder, an unwritable folder and a run.lock that is a
folder are each one line with a fix that works as typed, and change nothing already written."""
from __future__ import annotations

import json
import logging
import os
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from forked_cli import run_module
from helpers import QUICK, QUICK_VARIANT, one_error_line, refused, unwritable

from stability import cli
from stability.core.errors import UserError
from stability.core.joboutput import JobLog
from stability.core.runlock import hold_run, read_owner
from stability.core.runrecord import RunDir, outermost_run

RUN = f"outputs/smoke/en/rte/{QUICK_VARIANT}/seed0"  # the run QUICK trains with seed=0, under the test's folder
TRAIN = [*QUICK, "seed=0"]
Snapshot = dict[str, "tuple[bytes, int] | None"]


def _command(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """`nli-stability ARGS` as a user runs it (`python -m stability`), with the test's cache."""
    return run_module("stability", args, cwd)


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """One finished smoke run, trained once for the module: the folder holding its outputs/."""
    folder = tmp_path_factory.mktemp("trained")
    env = {**os.environ, "NLI_STABILITY_CACHE": str(folder / "cache"), "HF_DATASETS_OFFLINE": "1",
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_CACHE": str(folder / "hf-datasets")}
    result = run_module("stability", ["train", *TRAIN], folder, env=env)
    assert result.returncode == 0, result.stderr
    assert RunDir(folder / RUN).is_finished()
    return folder


@pytest.fixture
def here(trained, tmp_path, monkeypatch) -> Path:
    """The test's folder, the working directory, holding a copy of the trained outputs/ (with
    the files' modification times)."""
    shutil.copytree(trained / "outputs", tmp_path / "outputs")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def snapshot(folder: Path) -> Snapshot:
    """Every file under `folder`, its bytes and modification time (ns); a folder as None."""
    return {str(path.relative_to(folder)): (path.read_bytes(), path.stat().st_mtime_ns) if path.is_file() else None
            for path in sorted(folder.rglob("*"))}


def suggested_out(line: str) -> str:
    """The `out=...` a refusal's fix suggests."""
    return re.search(r"e\.g\. (out=\S+?)\)?$", line).group(1)


def _lock(run: Path, host: str, pid: int) -> None:
    """Another host's live lock: its heartbeat is now."""
    RunDir(run).lock_path.write_text(json.dumps({"host": host, "pid": pid, "started": "2026-01-01T00:00:00+00:00",
                                                 "slurm_job": None, "launch": None}))


# -- a skipped or held run is not written to ----------------------------------------------------------


@pytest.mark.slow
def test_a_rerun_that_skips_the_run_writes_nothing_into_it(here):
    before = snapshot(here / RUN)
    result = _command(["train", *TRAIN], here)
    assert result.returncode == 0, result.stderr
    assert f"[skip] {here / RUN}: finished with the same config and inputs" in result.stdout + result.stderr
    assert snapshot(here / RUN) == before  # .hydra/, train.log and job.json included


@pytest.mark.slow
def test_a_held_run_is_left_as_it_was_even_with_force_and_trains_once_free(here):
    _lock(here / RUN, "elsewhere", 123)
    before = snapshot(here / RUN)
    result = _command(["train", *TRAIN, "force=true"], here)
    assert result.returncode == 0, result.stderr
    assert f"[held] {here / RUN}: held by elsewhere:123; left alone" in result.stdout + result.stderr
    assert snapshot(here / RUN) == before
    # the holder is done: the same command redoes the run, and now its job writes its files
    RunDir(here / RUN).lock_path.unlink()
    result = _command(["train", *TRAIN, "force=true"], here)
    assert result.returncode == 0, result.stderr
    after = snapshot(here / RUN)
    assert "- force=True" in (here / RUN / ".hydra" / "overrides.yaml").read_text()
    assert after[".hydra/config.yaml"] != before[".hydra/config.yaml"]
    assert after["train.log"][0].count(b"epoch 2:") == 1 and b"[redo]" in after["train.log"][0]  # the redo's own
    (replaced,) = RunDir(here / RUN).replaced_runs()   # the finished run, with its job's .hydra/ and log
    for name in (".hydra/config.yaml", "train.log"):
        assert (replaced / name).read_bytes() == before[name][0]


# -- out= inside a run folder --------------------------------------------------------------------------


@pytest.mark.parametrize("out", [f"out={RUN}/tables", f"out={RUN}", None])
def test_a_report_inside_a_run_is_refused_and_its_fix_works(here, capsys, out):
    runs = "runs=outputs/smoke" if out else f"runs={RUN}"  # without out=: beside the runs, <run>/report
    before = snapshot(here / "outputs")
    line = refused(capsys, "report", runs, *([out] if out else []), "bootstrap=0", "figures=false")
    assert f"the run folder {RUN}, which report must not write into" in line
    assert snapshot(here / "outputs") == before
    fix = suggested_out(line)
    assert fix == f"out=outputs/smoke/en/rte/{QUICK_VARIANT}/report"
    cli.main(["report", runs, fix, "bootstrap=0", "figures=false"])
    assert (here / fix.removeprefix("out=") / "report.md").is_file()
    assert outermost_run(fix.removeprefix("out=")) is None
    assert {name: value for name, value in snapshot(here / "outputs").items() if name in before} == before


@pytest.mark.parametrize("command", [
    ["generate", "lang=en", f"out={RUN}/suites"],
    ["dataqa", "lang=en", f"out={RUN}/qa"],
    ["probe", "runs=outputs/smoke", f"out={RUN}"],
    ["annotate", "lang=en", f"files=[{RUN}/predictions.jsonl]", f"out={RUN}/features"],
    ["train", "experiment=smoke", f"out={RUN}"],  # its runs would nest inside the run
])
def test_no_command_writes_inside_a_run_folder(here, capsys, command):
    before = snapshot(here / "outputs")
    line = refused(capsys, *command)
    assert f"the run folder {RUN}, which {command[0]} must not write into" in line
    assert f"e.g. out=outputs/smoke/en/rte/{QUICK_VARIANT}/{command[0]})" in line
    assert snapshot(here / "outputs") == before


def test_status_and_plan_write_nothing_so_any_folder_will_do(here, capsys, monkeypatch):
    """They have no out= and Hydra writes no .hydra/ for them: run from inside a run folder."""
    before = snapshot(here / "outputs")
    monkeypatch.chdir(here / RUN)
    cli.main(["status", "runs=../../../.."])
    cli.main(["plan", "experiment=smoke"])
    assert "done 1 ·" in capsys.readouterr().out
    assert snapshot(here / "outputs") == before


# -- a malformed run.lock ------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_run_lock_that_is_a_folder_is_one_line_and_its_fix_works(here, capsys):
    lock = RunDir(here / RUN).lock_path
    lock.mkdir()
    before = snapshot(here / "outputs")
    for command in (["train", *TRAIN], ["status", "runs=outputs/smoke"]):
        line = refused(capsys, *command)
        assert f"{RUN}/run.lock: the run lock is a folder, not a lock file" in line
        assert snapshot(here / "outputs") == before
    fix = line.rsplit(": ", 1)[1].removesuffix(")")
    assert fix == f"rm -r {RUN}/run.lock"
    subprocess.run(shlex.split(fix), cwd=here, check=True)
    before = snapshot(here / RUN)
    result = _command(["train", *TRAIN], here)
    assert result.returncode == 0 and "[skip]" in result.stdout + result.stderr, result.stderr
    assert snapshot(here / RUN) == before
    cli.main(["status", "runs=outputs/smoke"])
    assert "done 1 ·" in capsys.readouterr().out


def test_an_unreadable_lock_names_itself(tmp_path):
    lock = RunDir(tmp_path).lock_path
    lock.mkdir()
    with pytest.raises(UserError, match=r"run\.lock: the run lock is a folder, not a lock file \(fix: .*rm -r "):
        read_owner(tmp_path)


# -- unwritable folders --------------------------------------------------------------------------------


def test_an_out_through_a_file_is_one_line_and_a_folder_works(here, capsys):
    (here / "notes").write_text("mine\n")
    before = snapshot(here)
    line = refused(capsys, "report", "runs=outputs/smoke", "out=notes/report", "bootstrap=0", "figures=false")
    assert "cannot make the folder notes/report: notes is a file" in line
    assert snapshot(here) == before
    cli.main(["report", "runs=outputs/smoke", "out=reports/report", "bootstrap=0", "figures=false"])
    assert (here / "reports" / "report" / "report.md").is_file()


def test_a_read_only_out_folder_is_one_line_and_writable_it_works(here, capsys):
    (here / "shelf").mkdir()
    before = snapshot(here)
    with unwritable(here / "shelf"):
        for out in ("shelf", "shelf/report"):
            line = refused(capsys, "report", "runs=outputs/smoke", f"out={out}", "bootstrap=0", "figures=false")
            assert ("cannot write into shelf" if out == "shelf" else
                    "cannot make the folder shelf/report: shelf is not writable") in line
            assert "make the folder writable" in line
        assert snapshot(here) == before
    cli.main(["report", "runs=outputs/smoke", "out=shelf/report", "bootstrap=0", "figures=false"])
    assert (here / "shelf" / "report" / "report.md").is_file()


@pytest.mark.slow
def test_force_on_a_read_only_run_folder_is_one_line_and_writable_it_redoes(here):
    before = snapshot(here / RUN)
    with unwritable(here / RUN):
        result = _command(["train", *TRAIN, "force=true"], here)
        assert result.returncode == 2
        one_error_line(result.stderr, f"cannot write into {RUN} (fix: make the folder writable")
        assert snapshot(here / RUN) == before
    result = _command(["train", *TRAIN, "force=true"], here)
    assert result.returncode == 0, result.stderr
    assert len(RunDir(here / RUN).replaced_runs()) == 1


def test_the_lock_of_a_read_only_run_folder_is_one_user_error(tmp_path):
    """The lock's own seam (a folder made read-only after the command's check): no filelock traceback."""
    run = tmp_path / "seed0"
    run.mkdir()
    with unwritable(run), pytest.raises(UserError, match=r"run\.lock: cannot take the run lock \(.+\) \(fix: make "):
        with hold_run(run):
            pytest.fail("held an unwritable run")
    assert list(run.iterdir()) == []


# -- the job's log --------------------------------------------------------------------------------------


def test_the_job_log_is_written_only_once_claimed(tmp_path):
    path = tmp_path / "train.log"
    logger = logging.getLogger("test_folder_ownership.job")
    for claim in (False, True):
        handler = JobLog(str(path))
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
        logger.warning("before the claim")
        handler.flush()  # what logging.shutdown does at exit
        assert not path.exists()
        if claim:
            handler.claim()
            logger.warning("after the claim")
            assert path.read_text() == "before the claim\nafter the claim\n"
        logger.removeHandler(handler)
        handler.close()
        assert path.exists() == claim
    stamp = path.stat().st_mtime_ns
    time.sleep(0.01)
    unclaimed = JobLog(str(path))
    unclaimed.handle(logging.makeLogRecord({"msg": "skipped"}))
    unclaimed.close()
    assert path.read_text() == "before the claim\nafter the claim\n" and path.stat().st_mtime_ns == stamp


# -- the job's record --------------------------------------------------------------------------------------


@pytest.mark.parametrize("left, rewritten", [(None, True), ("running", True), ("done", False)])
def test_a_job_that_writes_only_another_folder_leaves_its_own_record_as_it_was(tmp_path, left, rewritten):
    """A fused group's first job whose own run is finished trains the other members (`own_run=False`): its
    own folder's record, done by the command that trained it, stays byte for byte; one a killed job left
    running (or none) says done once this job ends."""
    from omegaconf import OmegaConf

    from stability.core.jobrecord import DONE, JobRecord, read_job_record, write_job_record
    from stability.core.joboutput import JobOutputs

    own, other = tmp_path / "seed0", tmp_path / "seed1"
    own.mkdir()
    if left is not None:
        record = JobRecord.started_here()
        write_job_record(own, record if left == "running" else record.finished())
    before = {path.name: path.read_bytes() for path in own.iterdir()}
    outputs = JobOutputs(own, OmegaConf.create({}), deferred=False, recorded=True)
    outputs.claim(other, own_run=False)
    outputs.finish()
    after = {path.name: path.read_bytes() for path in own.iterdir()}
    assert (after != before) == rewritten and read_job_record(own).state == DONE
    outputs = JobOutputs(own, OmegaConf.create({}), deferred=False, recorded=True)
    outputs.claim(other, own_run=False)
    outputs.finish("the group failed")                   # a failure is recorded all the same
    assert read_job_record(own).error == "the group failed"


def test_a_full_disk_says_to_free_space_not_to_make_the_folder_writable(tmp_path, monkeypatch):
    """A job's record written onto a full disk (ENOSPC): one line whose fix is space; a read-only one's is
    permission."""
    import errno

    from omegaconf import OmegaConf

    from stability.core import joboutput

    target = tmp_path / "job.json"
    for number, fix in ((errno.ENOSPC, "free space on that disk (or raise your quota), or pass out= a folder on "
                                       "another disk"),
                        (errno.EACCES, "make the folder writable, or pass out= a folder you can write into")):
        def refused(folder, record, number=number):
            raise OSError(number, os.strerror(number), str(target))

        monkeypatch.setattr(joboutput, "write_job_record", refused)
        outputs = joboutput.JobOutputs(tmp_path, OmegaConf.create({}), deferred=False, recorded=True)
        with pytest.raises(UserError) as raised:
            outputs.claim()
        assert str(raised.value) == f"{target}: cannot write here ({os.strerror(number)}) (fix: {fix})"
