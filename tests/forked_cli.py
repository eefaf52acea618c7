"""`python -m MODULE ARGS` (or `python SCRIPT ARGS`) as a child forked from a server process that has already
imported the heavy libraries (`PRELOADED`): the same command line, working folder, environment, output and
exit status as a new interpreter gives, without its 2-5 CPU-seconds of imports.

Why: the slow tests run the training command about a hundred times and the other commands about as
often, and on the CI's 2 cores the imports were most of each call's cost. The server (one per pytest
worker, started on first use) imports the libraries and the project's command modules, which read no
per-test setting at import but `datasets.config` (the test's own cache folder; huggingface_hub reads
HF_HUB_OFFLINE, 1 in every test): each child reads that module again under its own environment, as
its import would. The server starts no thread pool, so a fork of it is as clean as a new interpreter.
Tests that signal or wait on a command running in the background start it as a `ForkedProcess`.
Run as a script, this file is the server: one JSON request per line on stdin; per request it writes
the child's pid at once, and a line with the child's exit status once it ends (children run side by
side: a test may run a command beside another).
"""
from __future__ import annotations

import atexit
import importlib
import json
import os
import runpy
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

# the heavy libraries the commands import (torch and transformers' model code for training and probing;
# pandas, scipy, statsmodels, scikit-learn, matplotlib's pyplot without a backend chosen, Hydra, datasets),
# then the modules of the commands (not those run as `-m`, which runpy would find imported already), with
# those they import only once a job runs: about 1 CPU-second a call
PRELOADED = ("torch", "transformers.modeling_utils", "accelerate", "pandas", "scipy.stats", "statsmodels.formula.api",
             "statsmodels.stats.multitest", "sklearn.model_selection", "matplotlib.pyplot", "seaborn", "hydra.compose",
             "datasets", "stability.core.command", "stability.adaptive.command", "stability.sweep.guard",
             "stability.finetune.run", "stability.finetune.fused_run", "stability.report.cli", "stability.sweep.status")
# read from the environment at import: again in each child, under the child's environment
REREAD = ("datasets.config",)


def _child(module: str, args: list[str], cwd: str, env: dict[str, str], out: str, err: str,
           new_session: bool = False, script: bool = False) -> None:
    """In the forked child: become `python -m module args` (with `script`, `python module args`, `module`
    being the script's path) in `cwd` with `env`, output to files (in a session of its own with
    `new_session`, as Popen's start_new_session)."""
    if new_session:
        os.setsid()
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    for fd, path in ((1, out), (2, err)):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.argv = [module, *args]
    # as `python -m` puts the working folder first, and `python SCRIPT` the script's folder
    sys.path[0] = os.path.dirname(os.path.abspath(module)) if script else cwd
    for name in REREAD:
        importlib.reload(sys.modules[name])
    if env.get("OMP_NUM_THREADS", "").isdigit():   # torch read it at the server's import: its own, as a new one's
        sys.modules["torch"].set_num_threads(int(env["OMP_NUM_THREADS"]))
    code = 0
    try:
        if script:
            runpy.run_path(module, run_name="__main__")
        else:
            runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exit_:
        if isinstance(exit_.code, int) or exit_.code is None:
            code = exit_.code or 0
        else:                              # sys.exit("message"): printed, status 1
            print(exit_.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 (uncaught: its traceback and status 1, as python does)
        traceback.print_exc()
        code = 1
    try:   # what the interpreter does at its end, which os._exit skips: join the threads that are not
        # daemons (and the callbacks of concurrent.futures and joblib's worker pools, which shut the
        # pools down), then run the atexit functions
        threading._shutdown()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _report(message: dict) -> None:
    print(json.dumps(message), flush=True)


def _reap() -> None:
    """Report every child that has ended: its pid, exit status and CPU seconds (user + system)."""
    while True:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _report({"pid": pid, "status": os.waitstatus_to_exitcode(status), "cpu_s": usage.ru_utime + usage.ru_stime})


def serve() -> None:
    """The server: import `PRELOADED`, then fork a child per request (children run side by side) and
    report its pid at once, its exit status when it ends (SIGCHLD wakes the loop)."""
    for module in PRELOADED:
        importlib.import_module(module)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_write)
    pending = b""
    while True:
        ready = select.select([0, wake_read], [], [])[0]
        if wake_read in ready:
            os.read(wake_read, 4096)
            _reap()
        if 0 not in ready:
            continue
        chunk = os.read(0, 65536)
        if not chunk:       # the worker ended
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            pid = os.fork()
            if pid == 0:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                os.close(wake_read)
                os.close(wake_write)
                _child(**json.loads(line))
            _report({"pid": pid})


class _Server:
    """This worker's server, started on first use, ended with the worker (its stdin closes)."""

    process: subprocess.Popen | None = None
    pending = b""
    ended: dict[int, dict] = {}     # by pid: the status messages of children no one has waited for yet

    @classmethod
    def started(cls) -> subprocess.Popen:
        if cls.process is None or cls.process.poll() is not None:
            cls.process = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            cls.pending = b""
            cls.ended = {}
        return cls.process

    @classmethod
    def _message(cls, timeout: float | None) -> dict | None:
        """The server's next line, or None once `timeout` seconds pass without it."""
        fd = cls.process.stdout.fileno()
        while b"\n" not in cls.pending:
            if not select.select([fd], [], [], timeout)[0]:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                raise RuntimeError("the fork server of tests/forked_cli.py ended")
            cls.pending += chunk
        line, cls.pending = cls.pending.split(b"\n", 1)
        return json.loads(line)

    @classmethod
    def start(cls, request: dict) -> int:
        """Send `request`; the pid of its child (other children's ends read meanwhile are kept)."""
        server = cls.started()
        server.stdin.write((json.dumps(request) + "\n").encode())
        server.stdin.flush()
        while True:
            message = cls._message(None)
            if "status" not in message:
                return message["pid"]
            cls.ended[message["pid"]] = message

    @classmethod
    def end_of(cls, pid: int, timeout: float | None) -> dict | None:
        """Child `pid`'s status message once it ended, or None after `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while pid not in cls.ended:
            message = cls._message(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if message is None:
                return None
            cls.ended[message["pid"]] = message
        return cls.ended[pid]


class ForkedProcess:
    """`python -m module args` (with `script`, `python module args`: `module` is then a script's path)
    started in the background from the server, with the part of Popen's interface the tests use (pid,
    poll, wait, send_signal, communicate, returncode): for tests that signal or wait on their command.
    Its output goes to files, read by `communicate`; `cpu_seconds` is its CPU time once it ended (what
    RUSAGE_CHILDREN would add, it not being this process's child)."""

    def __init__(self, module: str, args: list[str], cwd: Path, env: dict[str, str] | None = None,
                 start_new_session: bool = False, script: bool = False):
        self.args = [sys.executable, *([] if script else ["-m"]), module, *args]
        self._folder = tempfile.TemporaryDirectory()
        self._out, self._err = (os.path.join(self._folder.name, name) for name in ("out", "err"))
        self.returncode: int | None = None
        self.cpu_seconds: float | None = None
        self.pid = _Server.start({"module": module, "args": list(args), "cwd": str(cwd),
                                  "env": dict(os.environ if env is None else env), "out": self._out,
                                  "err": self._err, "new_session": start_new_session, "script": script})

    def _ended(self, timeout: float | None) -> int | None:
        if self.returncode is None:
            message = _Server.end_of(self.pid, timeout)
            if message is not None:
                self.returncode, self.cpu_seconds = message["status"], message["cpu_s"]
                del _Server.ended[self.pid]
        return self.returncode

    def poll(self) -> int | None:
        return self._ended(0)

    def wait(self, timeout: float | None = None) -> int:
        if self._ended(timeout) is None:
            raise subprocess.TimeoutExpired(self.args, timeout)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """Its stdout and stderr once it ended, as Popen(..., text=True).communicate() gives them."""
        self.wait(timeout)
        return tuple(Path(path).read_text(encoding="utf-8", errors="replace") for path in (self._out, self._err))

    def completed(self, timeout: float | None = None) -> subprocess.CompletedProcess:
        """Its exit status and output once it ended, as `subprocess.run(..., capture_output=True, text=True)`
        returns them."""
        stdout, stderr = self.communicate(timeout)
        return subprocess.CompletedProcess(self.args, self.returncode, stdout, stderr)


def run_script(script: Path, args: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """`python script args` in `cwd`, as `run_module` runs a module: the benchmark scripts."""
    return run_module(str(script), args, cwd, timeout=timeout, script=True)


def run_module(module: str, args: list[str], cwd: Path, env: dict[str, str] | None = None,
               timeout: float = 600, script: bool = False) -> subprocess.CompletedProcess:
    """`python -m module args` (with `script`, `python module args`) in `cwd` (environment `env`, default
    this one's): its exit status, stdout and stderr, as `subprocess.run(..., capture_output=True,
    text=True)` returns them."""
    process = ForkedProcess(module, args, cwd, env, script=script)
    try:
        return process.completed(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise


if __name__ == "__main__":
    serve()
