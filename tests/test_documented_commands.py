"""Every `nli-stability <command> ...` line the project shows a user (README, docs/, the config
files' comments) composes: its overrides name real keys and groups, and their values pass the
schemas. Nothing runs; a command that the code no longer takes is found here, not by a user."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from stability.adaptive.command import is_adaptive, parse
from stability.cli import COMMANDS, PROGRAM
from stability.core.config import CONF_DIR
from stability.core.jobs import job_configs
from stability.plan import split_arguments

REPO = Path(__file__).resolve().parent.parent
SOURCES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted(CONF_DIR.rglob("*.yaml"))]
# a documented line that names something the reader fills in, or is not a command line
PLACEHOLDER = re.compile(r"<[a-z _-]+>|\.\.\.|\bX\b|\bDIR\b|\bFILE\b|\bN\b")
HELP_FLAGS = {"--help", "-h", "--info", "--cfg", "--hydra-help"}
# a line that needs the user's own files: their config folder, their sweeps
NEEDS_USER_FILES = re.compile(r"hydra\.searchpath=|runs=\[?/")


def _lines(path: Path) -> list[tuple[str, str]]:
    """(where, command) for each command line: continuation lines joined, comment markers and
    anything before the program name (environment variables, `$ `) dropped."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".yaml":
        text = "\n".join(re.sub(r"^\s*#\s?", "", line) for line in text.splitlines() if line.lstrip().startswith("#"))
    text = re.sub(r"\\\n\s*(#\s*)?", " ", text)
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for match in re.finditer(rf"(?:^|[\s`(]){PROGRAM} ([a-z]+)(?: [^`\n]*)?", line):
            command = match.group(0).lstrip(" `(").rstrip()
            found.append((f"{path.relative_to(REPO)}:{number}", command))
    return found


def _documented() -> list[tuple[str, str]]:
    """(where, command) for each distinct command line; `where` names every place that shows it."""
    places: dict[tuple[str, ...], tuple[str, list[str]]] = {}
    for path in SOURCES:
        for where, line in _lines(path):
            try:
                words = shlex.split(line, comments=True)
            except ValueError:      # a fragment inside prose, e.g. an unclosed quote
                continue
            if len(words) < 3 or words[1] not in COMMANDS or HELP_FLAGS & set(words) or PLACEHOLDER.search(line) \
                    or NEEDS_USER_FILES.search(line):
                continue
            places.setdefault(tuple(words), (line, []))[1].append(where)
    return [(",".join(wheres), line) for line, wheres in places.values()]


DOCUMENTED = _documented()


def test_the_documentation_shows_every_command():
    assert {shlex.split(line, comments=True)[1] for _, line in DOCUMENTED} == set(COMMANDS)


@pytest.mark.slow      # ~95 distinct lines, sweeps of up to 192 jobs expanded: ~1.5 minutes
@pytest.mark.parametrize("where, line", DOCUMENTED, ids=[where for where, _ in DOCUMENTED])
def test_a_documented_command_composes(where, line, tmp_path, monkeypatch):
    words = shlex.split(line, comments=True)
    command, arguments = words[1], words[2:]
    monkeypatch.chdir(tmp_path)
    for folder in re.findall(r"runs=\[?([^\s\]]+)\]?", line):      # the sweeps a command reads exist
        for name in folder.split(","):
            (tmp_path / name).mkdir(parents=True, exist_ok=True)
    if command == "plan":   # the plan's own keys, then the training overrides it expands
        own, training = split_arguments(arguments)
        assert job_configs(own, config_name="plan") and job_configs(training), f"{where}: {line}"
    elif command == "train" and is_adaptive(arguments):   # its own settings, then the conditions it trains
        assert parse(arguments).conditions, f"{where}: {line}"
    else:
        assert job_configs(arguments, config_name=command), f"{where}: {line}"
