"""Shared test helpers: run the training command line in a child process, read its runs, check errors."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from forked_cli import run_module

from stability import cli
from stability.core.config import compose_config
from stability.core.runrecord import iter_runs

QUICK = ["experiment=smoke", "data.max_train_samples=32", "trainer.max_epochs=2"]
# the run variant these overrides give against the smoke preset: its runs live in
# outputs/smoke/<lang>/<setup>/ep2_ntrain32/seed<N>
QUICK_VARIANT = "ep2_ntrain32"


def train_cli(args: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    """`python -m stability.train ARGS` with the test's cache, as a user would run it (in a child
    forked with the heavy imports done, `forked_cli`)."""
    return run_module("stability.train", args, cwd, timeout=timeout)


def front_door(args: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    """`nli-stability ARGS` (the console script's function, run as `python -m stability.cli`, in a child
    forked with the heavy imports done, `forked_cli`)."""
    env = {**os.environ, "HYDRA_FULL_ERROR": "0", "HF_HUB_OFFLINE": "1"}
    env.pop("NLI_STABILITY_TRACEBACK", None)
    env.pop("USER", None)       # as in CI: Hydra's help fills $NAME from the environment, so a bare $USER fails
    return run_module("stability.cli", args, cwd, env=env, timeout=timeout)


def finished_run(args: list[str], cwd: Path, relative: str):
    """Train `args` (which name the output folder) and return the finished run at `relative` under
    `cwd / "outputs"`, the RunDir a test then asks more of."""
    from stability.core.runrecord import RunDir

    result = train_cli(args, cwd)
    assert result.returncode == 0, result.stderr
    return RunDir(cwd / "outputs" / relative)


def interruptible() -> None:
    """Popen's preexec_fn for a child the test sends Ctrl-C (SIGINT): its default action even when
    pytest was started with SIGINT ignored (a background job of a non-interactive shell passes
    that on, and Python then raises no KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt_when(process: subprocess.Popen, ready, timeout_s: float = 300) -> tuple[str, str]:
    """SIGINT to `process` (as Ctrl-C sends it) once `ready()` holds; its stdout and stderr."""
    deadline = time.monotonic() + timeout_s
    while not ready() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    return process.communicate(timeout=120)


@contextmanager
def unwritable(folder: Path) -> Iterator[None]:
    """`folder` made unwritable for this process: without write permission for a user, immutable
    (`chattr +i`) for root, whom permissions do not stop; skipped where neither can be done."""
    if os.geteuid() != 0:
        mode = folder.stat().st_mode
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(mode)
        return
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)],
                                                         capture_output=True).returncode != 0:
        pytest.skip("root, and this file system cannot make a folder immutable (chattr +i)")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


def assert_one_line_error(result: subprocess.CompletedProcess, *fragments: str) -> None:
    """A user error: status 2 and one stderr line `error: ... (fix: ...)` holding every fragment."""
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and "fix:" in lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def one_error_line(text: str, *fragments: str) -> str:
    """The only line of `text`, a user error with a fix holding every fragment; returns it."""
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert lines[0].startswith("error: ") and "(fix: " in lines[0], lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def refused(capsys, *argv: str) -> str:
    """Run `nli-stability ARGV` in this process; it must exit 2 with one error line, returned."""
    with pytest.raises(SystemExit) as stop:
        cli.main(list(argv))
    assert stop.value.code == 2
    captured = capsys.readouterr()
    assert not captured.out.strip(), captured.out
    return one_error_line(captured.err)


def assert_report_refuses(runs_dir: Path, out: Path, line: str, capsys) -> None:
    """Gathering `runs_dir` raises `line`, and the report command says it in one line, exit 2,
    writing nothing to `out`."""
    import pytest
    from stability.core.errors import UserError
    from stability.report.cli import main as report_main
    from stability.report.collect import collect

    with pytest.raises(UserError) as refused:
        collect([runs_dir])
    assert str(refused.value) == line
    with pytest.raises(SystemExit) as stop:
        report_main([f"runs={runs_dir}", f"out={out}", "bootstrap=0", "figures=false"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines() == [f"error: {line}"]
    assert not out.exists()


def runs(output_dir: Path) -> dict[str, dict]:
    """metrics.json of every run under a folder (not the runs a forced rerun replaced), keyed by
    its path relative to the folder."""
    return {str(run.path.relative_to(output_dir)): json.loads((run.path / "metrics.json").read_text(encoding="utf-8"))
            for run in iter_runs(output_dir)}


def folder_files(folder: Path, leave_out: tuple[str, ...] = ()) -> dict[str, bytes]:
    """Every file under `folder` by relative path, but those with a path part in `leave_out` (a file
    name such as run.lock, or a folder such as .hydra): what "nothing already written changed" compares."""
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*"))
            if path.is_file() and not set(path.relative_to(folder).parts) & set(leave_out)}


def predictions(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]


def saved_model_probabilities(run) -> np.ndarray:
    """P(entailment) of the weights the RunDir `run` saved (`trainer.save_model=true`) on the built-in English
    diagnostic items of its predictions.jsonl, in that file's order, tokenized as a run tokenizes them."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from stability.data.formats import read_examples
    from stability.data.sources import BUILTIN_DIR

    model = AutoModelForSequenceClassification.from_pretrained(run.model_dir).eval()
    tokenizer = AutoTokenizer.from_pretrained(run.model_dir)
    diagnostic = {e.idx: e for e in read_examples(BUILTIN_DIR / "en" / "diagnostic.jsonl", "en")}
    items = predictions(run.path)
    batch = tokenizer([diagnostic[row["idx"]].premise for row in items],
                      [diagnostic[row["idx"]].hypothesis for row in items],
                      truncation="longest_first", max_length=256, padding=True, return_token_type_ids=True,
                      return_tensors="pt")
    with torch.no_grad():
        return torch.softmax(model(**batch).logits, dim=-1)[:, 0].numpy()


BUILTIN = Path(__file__).resolve().parents[1] / "stability" / "data" / "builtin"
BROKEN_LINE = '{"premise": "x",\n'


def builtin_release(root: Path, langs: list[str], broken: str | None = None) -> Path:
    """The built-in data of `langs` laid out as each language's release under `root` (for
    `data.root=root`); the train file of language `broken` ends in a malformed JSON line."""
    for lang in langs:
        files = compose_config([f"lang={lang}"]).lang.files
        for split in ("train", "validation", "diagnostic"):
            target = root / files[split]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(BUILTIN / lang / f"{split}.jsonl", target)
        if lang == broken:
            with (root / files["train"]).open("a", encoding="utf-8") as handle:
                handle.write(BROKEN_LINE)
    return root
