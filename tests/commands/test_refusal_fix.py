"""The refusal of a finished run that differs from the job names a way to keep both that works as typed:
another `out=`, appended to the same command, whether or not the command already set `out=` (where
another `paths.output_dir` changed nothing), as a sweep (the guard) and as a single run."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from helpers import QUICK_VARIANT, builtin_release, train_cli
from stability.core.runrecord import iter_runs

FRENCH = ["experiment=smoke", "lang=fr", "data.source=files", "data.max_train_samples=32", "trainer.max_epochs=2",
          "seed=0"]
RUN = f"fr/rte/{QUICK_VARIANT}_source-files/seed0"


def _releases(cwd: Path) -> None:
    """Two data roots, v1 and v2, whose French training files differ."""
    for version in ("v1", "v2"):
        builtin_release(cwd / version, ["fr"])
    train_v2 = next((cwd / "v2").rglob("train_fr.jsonl"))
    train_v2.write_text("".join(train_v2.read_text(encoding="utf-8").splitlines(True)[8:]), encoding="utf-8")


def _keep_both(args: list[str], cwd: Path) -> tuple[Path, Path]:
    """Train `args` on v2 where a run on v1 finished: refused; append the printed `out=` and train
    again. The two output folders, the first run's and the second's."""
    again = [*args, f"data.root={cwd / 'v2'}"]
    refused = train_cli(again, cwd)
    assert refused.returncode == 2, refused.stderr
    fix = re.search(r" or (out=\S+) \(any folder but (\S+)\) keeps both\)$", refused.stderr.strip())
    assert fix, refused.stderr
    kept = train_cli([*again, fix.group(1)], cwd)
    assert kept.returncode == 0, kept.stderr
    return Path(fix.group(2)), Path(fix.group(1).removeprefix("out="))


@pytest.mark.slow
@pytest.mark.parametrize("with_out", [False, True], ids=["paths.output_dir", "out="])
def test_the_printed_out_keeps_both_runs(tmp_path, with_out):
    """As a sweep, then as a single run against the same finished run on v1 (the sweep's and the
    single run's are one run folder; the folder the sweep kept is removed in between, so that the
    single run meets what it would have met alone)."""
    where = f"out={tmp_path / 'mine'}" if with_out else f"paths.output_dir={tmp_path / 'outputs'}"
    _releases(tmp_path)
    first = train_cli([*FRENCH, where, f"data.root={tmp_path / 'v1'}"], tmp_path)
    assert first.returncode == 0, first.stderr
    for mode in ("sweep", "single run"):
        args = [*FRENCH, where, *(["hydra.mode=RUN"] if mode == "single run" else [])]
        old, new = _keep_both(args, tmp_path)
        assert old == (tmp_path / "mine" if with_out else tmp_path / "outputs" / "smoke"), mode
        assert new == Path(f"{old}-2"), mode
        roots = {run.read_record().inputs["train"]["source"] for folder in (old, new) for run in iter_runs(folder)}
        assert roots == {str(next((tmp_path / version).rglob("train_fr.jsonl"))) for version in ("v1", "v2")}, mode
        assert (old / RUN / "metrics.json").is_file() and (new / RUN / "metrics.json").is_file(), mode
        shutil.rmtree(new)
