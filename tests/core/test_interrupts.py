"""Ctrl-C inside `deferred` waits for a checkpoint, the block's end or `allowed`; elsewhere it acts at once.

Each test sends itself a real SIGINT (`signal.raise_signal`) with Python's own handler in place."""
import signal
import subprocess
import sys

import pytest

from helpers import QUICK, interrupt_when, interruptible
from stability.core.interrupts import allowed, deferred, raise_if_interrupted


@pytest.fixture(autouse=True)
def python_handler():
    """Python's own SIGINT handler, as a command started from a terminal has it (pytest may run
    with SIGINT ignored); the test's previous one afterwards."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_inside_deferred_acts_when_the_block_ends():
    reached = []
    with pytest.raises(KeyboardInterrupt):
        with deferred():
            signal.raise_signal(signal.SIGINT)
            reached.append("after the signal")
    assert reached == ["after the signal"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_checkpoint_acts_on_a_recorded_ctrl_c_and_only_once():
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with deferred():
            raise_if_interrupted()  # nothing recorded yet
            steps.append(1)
            signal.raise_signal(signal.SIGINT)
            steps.append(2)
            raise_if_interrupted()
            steps.append(3)
    assert steps == [1, 2]


def test_ctrl_c_inside_allowed_acts_at_once_and_one_recorded_before_acts_on_entry():
    with deferred():
        with pytest.raises(KeyboardInterrupt):
            with allowed():
                signal.raise_signal(signal.SIGINT)
                pytest.fail("Ctrl-C inside allowed did not act at once")
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler  # deferring again
    with pytest.raises(KeyboardInterrupt), deferred():
        signal.raise_signal(signal.SIGINT)
        with allowed():
            pytest.fail("a recorded Ctrl-C did not act on entering allowed")


def test_a_block_without_ctrl_c_leaves_nothing_behind():
    with deferred():
        with allowed():
            pass
    with deferred():  # no stale interrupt from an earlier block
        pass
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)  # Python's handler is back


def test_where_ctrl_c_is_ignored_deferred_changes_nothing():
    """A background job of a non-interactive shell ignores SIGINT: so do these blocks."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with deferred(), allowed():
        signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


@pytest.mark.slow
def test_ctrl_c_while_hydra_composes_the_next_job_waits_for_the_composition(tmp_path):
    """The sweep is interrupted at a known point: while Hydra composes job #1's config (made slow
    here). The composition finishes, then the interrupt is one line and status 130, and the
    finished run is kept. An interrupt that cut OmegaConf mid-way was a composition error, status 1."""
    started, composed, out = tmp_path / "started", tmp_path / "composed", tmp_path / "outputs"
    code = f"""
import sys, time
from pathlib import Path
from hydra._internal.config_loader_impl import ConfigLoaderImpl
load = ConfigLoaderImpl.load_sweep_config

def slowly(self, *arguments, **keywords):
    if any(Path({str(out)!r}).rglob("metrics.json")):  # the launcher composes job #1
        Path({str(started)!r}).touch()
        time.sleep(3)
        Path({str(composed)!r}).touch()
    return load(self, *arguments, **keywords)

ConfigLoaderImpl.load_sweep_config = slowly
from stability.cli import main
main(sys.argv[1:])
"""
    process = subprocess.Popen([sys.executable, "-c", code, "train", *QUICK, "seed=0..2", f"paths.output_dir={out}"],
                               cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=interruptible)
    _, stderr = interrupt_when(process, started.exists)
    assert process.returncode == 130, stderr
    assert stderr.strip() == ("interrupted: finished runs are kept; the same command again goes on "
                              f"(nli-stability status runs={out / 'smoke'})")
    assert composed.exists()
    assert [path.parent.name for path in out.rglob("metrics.json")] == ["seed0"]
