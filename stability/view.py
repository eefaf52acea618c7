"""`nli-stability view runs=DIR`: serve a report's page (report.html) on localhost and print its
address, for a report on a machine whose files a browser cannot open directly (a cluster's login
node, reached through a forwarded port). Python's own HTTP server: the page is one static file."""
from __future__ import annotations

import errno
import http.server
import sys
from functools import partial
from pathlib import Path
from typing import Sequence

from omegaconf import DictConfig

from stability.core.command import run_command
from stability.core.config import report_output_dir
from stability.core.errors import UserError
from stability.report.page import PAGE_FILE


def main(argv: Sequence[str] | None = None) -> None:
    """The page is found before Hydra starts the job, so a folder without one is one line."""
    found: list[Path] = []

    def check(configs: list[DictConfig]) -> None:
        found.append(page_folder(Path(configs[0].runs)))

    def task(cfg: DictConfig) -> None:
        serve(found[0], cfg.host, int(cfg.port))

    run_command("view", task, argv, check=check,
                interrupted=lambda configs, multirun: "the page is no longer served (its file stays)")


def page_folder(runs: Path) -> Path:
    """`runs` when it holds the page, else the folder `nli-stability report runs=<runs>` writes by default."""
    if not runs.is_dir():
        raise UserError(f"runs={runs}: no such folder",
                        fix="pass a report's folder or the runs folder it was written for, e.g. runs=outputs/smoke")
    default = Path(report_output_dir(str(runs)))
    for folder in (runs, default):
        if (folder / PAGE_FILE).is_file():
            return folder
    raise UserError(f"runs={runs}: no {PAGE_FILE} in {runs} or {default}",
                    fix=f"write it with nli-stability report runs={runs}, or pass the folder of the report's out=")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    """The files of one folder, without a log line per request."""

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    """A browser that closes a connection mid-file (a reload) is no error to print."""

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def serve(folder: Path, host: str, port: int) -> None:
    """Serve `folder` until Ctrl-C; the first line printed is the page's address."""
    try:
        server = _Server((host, port), partial(_Quiet, directory=str(folder)))
    except OSError as err:
        taken = err.errno == errno.EADDRINUSE
        raise UserError(f"cannot serve on {host}:{port} ({'the port is in use' if taken else err.strerror})",
                        fix="pass another port=N, or port=0 for any free port" if taken
                        else "pass host=127.0.0.1 (this machine) or an address of this machine") from None
    with server:
        bound = server.server_address[1]
        print(f"serving {folder / PAGE_FILE} at http://{host}:{bound}/{PAGE_FILE} (Ctrl-C stops; from another "
              f"machine forward the port first: ssh -L {bound}:localhost:{bound} <this host>)", flush=True)
        server.serve_forever()


if __name__ == "__main__":
    main()
