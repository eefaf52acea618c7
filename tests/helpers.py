"""Shared test helpers: run the training command line in a subprocess, read its runs, check errors."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

QUICK = ["experiment=smoke", "data.max_train_samples=32", "trainer.max_epochs=2"]
# the run variant these overrides give against the smoke preset: its runs live in
# outputs/smoke/<lang>/<setup>/ep2_ntrain32/seed<N>
QUICK_VARIANT = "ep2_ntrain32"


def train_cli(args: list[str], cwd: Path, timeout: int = 600, **popen) -> subprocess.CompletedProcess:
    """`python -m stability.train ARGS` with the test's cache, as a user would run it."""
    return subprocess.run([sys.executable, "-m", "stability.train", *args], cwd=cwd,
                          env=dict(os.environ), capture_output=True, text=True, timeout=timeout, **popen)


def assert_one_line_error(result: subprocess.CompletedProcess, *fragments: str) -> None:
    """A user error: status 2 and one stderr line `error: ... (fix: ...)` holding every fragment."""
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and "fix:" in lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def runs(output_dir: Path) -> dict[str, dict]:
    """metrics.json of every run under a folder, keyed by its path relative to the folder."""
    return {str(p.parent.relative_to(output_dir)): json.loads(p.read_text(encoding="utf-8"))
            for p in sorted(output_dir.rglob("metrics.json"))}


def predictions(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]
