"""Progress bars show on a terminal and stay out of pipes and log files."""
from __future__ import annotations

import pytest

import os
import pty
import subprocess
import sys

from helpers import QUICK, QUICK_VARIANT, train_cli


def _run(args: list[str], cwd, stderr) -> tuple[subprocess.Popen, int | None]:
    return subprocess.Popen([sys.executable, "-m", "stability.train", *args], cwd=cwd, env=dict(os.environ),
                            stdout=subprocess.PIPE, stderr=stderr)


@pytest.mark.slow
def test_terminal_shows_a_bar_per_epoch_pipe_only_log_lines(tmp_path):
    args = [*QUICK, "seed=0", "hydra.mode=RUN", f"paths.output_dir={tmp_path / 'outputs'}"]
    controller, terminal = pty.openpty()
    process = _run(args, tmp_path, terminal)
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:   # the terminal closed: the process is gone
            break
        if not chunk:
            break
        shown += chunk
    process.communicate(timeout=300)
    os.close(controller)
    assert process.returncode == 0
    screen = shown.decode("utf-8", "replace")
    for epoch in (1, 2):
        assert f"[en rte {QUICK_VARIANT} seed 0] epoch {epoch}:" in screen   # one bar per epoch, with rate and ETA
    assert "batch/s" in screen and "<" in screen

    piped = train_cli([*args, "force=true"], tmp_path, timeout=300)
    assert piped.returncode == 0
    assert "batch/s" not in piped.stderr + piped.stdout and "%|" not in piped.stderr
    assert f"[en rte {QUICK_VARIANT} seed 0] epoch 2: loss" in piped.stdout   # the log lines
    log = (tmp_path / f"outputs/smoke/en/rte/{QUICK_VARIANT}/seed0/train.log").read_text(encoding="utf-8")
    assert "batch/s" not in log and "epoch 2: loss" in log
