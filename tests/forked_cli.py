"""`python -m MODULE ARGS` as a child forked from a server process that has already imported the heavy
libraries (`PRELOADED`): the same command line, working folder, environment, output and exit status as
a new interpreter gives, without its 2-5 CPU-seconds of imports.

Why: the slow tests run the training command about a hundred times and the other commands about as
often, and on the CI's 2 cores the imports were most of each call's cost. The server (one per pytest
worker, started on first use) imports only modules that read no per-test setting at import
(huggingface_hub reads HF_HUB_OFFLINE, 1 in every test; a test's own cache folder is read by
`datasets`, which each child imports itself), and starts no thread pool, so a fork of it is as clean
as a new interpreter. Tests that signal or kill their command use `subprocess` as before. Run as a
script, this file is the server: one JSON request per line on stdin; per request it writes the
child's pid, then its exit status.
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
import traceback
from pathlib import Path

# the heavy libraries the commands import (torch and transformers' model code for training and probing;
# pandas, scipy, statsmodels, scikit-learn, matplotlib without a backend chosen, Hydra for the others)
PRELOADED = ("torch", "transformers.modeling_utils", "accelerate", "pandas", "scipy.stats", "statsmodels.formula.api",
             "statsmodels.stats.multitest", "sklearn.model_selection", "matplotlib", "hydra.compose")


def _child(module: str, args: list[str], cwd: str, env: dict[str, str], out: str, err: str) -> None:
    """In the forked child: become `python -m module args` in `cwd` with `env`, output to files."""
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    for fd, path in ((1, out), (2, err)):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.argv = [module, *args]
    sys.path[0] = cwd                      # as `python -m` puts the working folder first
    code = 0
    try:
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


def serve() -> None:
    """The server: import `PRELOADED`, then fork a child per request and report its pid and status."""
    for module in PRELOADED:
        importlib.import_module(module)
    for line in sys.stdin:
        pid = os.fork()
        if pid == 0:
            _child(**json.loads(line))
        print(json.dumps({"pid": pid}), flush=True)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"status": os.waitstatus_to_exitcode(status)}), flush=True)


class _Server:
    """This worker's server, started on first use, ended with the worker (its stdin closes)."""

    process: subprocess.Popen | None = None
    pending = b""

    @classmethod
    def started(cls) -> subprocess.Popen:
        if cls.process is None or cls.process.poll() is not None:
            cls.process = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            cls.pending = b""
        return cls.process

    @classmethod
    def reply(cls, timeout: float | None) -> dict | None:
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


def run_module(module: str, args: list[str], cwd: Path, env: dict[str, str] | None = None,
               timeout: float = 600) -> subprocess.CompletedProcess:
    """`python -m module args` in `cwd` (environment `env`, default this one's): its exit status,
    stdout and stderr, as `subprocess.run(..., capture_output=True, text=True)` returns them."""
    command = [sys.executable, "-m", module, *args]
    server = _Server.started()
    with tempfile.TemporaryDirectory() as folder:
        out, err = os.path.join(folder, "out"), os.path.join(folder, "err")
        request = {"module": module, "args": list(args), "cwd": str(cwd),
                   "env": dict(os.environ if env is None else env), "out": out, "err": err}
        server.stdin.write((json.dumps(request) + "\n").encode())
        server.stdin.flush()
        pid = _Server.reply(None)["pid"]
        ended = _Server.reply(timeout)
        if ended is None:
            os.kill(pid, signal.SIGKILL)
            _Server.reply(None)
            raise subprocess.TimeoutExpired(command, timeout)
        output = [Path(path).read_text(encoding="utf-8", errors="replace") for path in (out, err)]
        return subprocess.CompletedProcess(command, ended["status"], *output)


if __name__ == "__main__":
    serve()
