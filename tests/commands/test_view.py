"""`nli-stability view`: the page fetched over HTTP from the address the command prints, found in
the runs folder a report was written for; a folder without a page, a port out of range or taken
is one line and status 2."""
from __future__ import annotations

import os
import re
import select
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from stability.view import main, page_folder

PAGE = "<!DOCTYPE html><title>report</title><p>the page, byte for byte</p>\n"


def _report(root: Path) -> Path:
    """A report's folder, as `nli-stability report runs=<root>` leaves it: <root>/report/report.html."""
    (root / "report").mkdir(parents=True)
    (root / "report" / "report.html").write_text(PAGE, encoding="utf-8")
    return root / "report"


def test_the_page_is_served_at_the_address_the_command_prints(tmp_path):
    report = _report(tmp_path / "runs")
    server = subprocess.Popen([sys.executable, "-m", "stability.view", f"runs={tmp_path / 'runs'}", "port=0"],
                              cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**os.environ, "HYDRA_FULL_ERROR": "0"})
    try:
        assert select.select([server.stdout], [], [], 120)[0], "no address printed"
        line = server.stdout.readline()
        address = re.search(r"http://127\.0\.0\.1:(\d+)/report\.html", line)
        assert address and f"serving {report / 'report.html'} at " in line and "ssh -L" in line, line
        with urllib.request.urlopen(address.group(0), timeout=30) as response:
            assert response.status == 200 and response.read() == PAGE.encode()
            assert response.headers["Content-Type"].startswith("text/html")
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert page_folder(report) == report          # the report's own folder serves as well


def _refused(capsys, *argv: str) -> str:
    """The one stderr line of a view command that exits with status 2 (run in this process: no server)."""
    with pytest.raises(SystemExit) as stop:
        main(list(argv))
    lines = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(lines) == 1, lines
    return lines[0]


def test_a_folder_without_a_page_a_bad_port_or_a_taken_one_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = _refused(capsys, f"runs={tmp_path}")
    assert f"runs={tmp_path}: no report.html in" in line and f"fix: write it with nli-stability report runs={tmp_path}" in line
    assert "no such folder" in _refused(capsys, "runs=nowhere")
    _report(tmp_path / "runs")
    assert "port=70000 is out of range (fix: pass port=<a number in [0, 65535]>)" in _refused(capsys, "runs=runs", "port=70000")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        line = _refused(capsys, "runs=runs", f"port={taken.getsockname()[1]}")
    assert "the port is in use" in line and "port=0 for any free port" in line
