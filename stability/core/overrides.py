"""Command-line overrides before Hydra sees them: `a..b` ranges and early, one-line errors.

`seed=0..5` becomes `seed=0,1,2,3,4,5` (inclusive) and any sweep turns on multirun, so
`python -m stability.train seed=0..5 lang=fr,de` needs no `-m`.
"""
from __future__ import annotations

import re
import shlex
from importlib import resources
from pathlib import Path

from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException

from stability.core.errors import UserError, first_line

_RANGE_ITEM = re.compile(r"^(?P<a>[^./\\\s][^/\\\s]*?)\.\.(?P<b>[^./\\\s][^/\\\s]*)$")
_INTEGER = re.compile(r"^-?\d+$")
MULTIRUN_FLAGS = ("-m", "--multirun")
# Hydra's own command-line flags; every other option of a command is a key=value override
HYDRA_FLAGS = frozenset({"-h", "--help", "--hydra-help", "--version", "-c", "--cfg", "--resolve", "-p", "--package",
                         "-i", "--info", "-r", "--run", "-m", "--multirun", "-sc", "--shell-completion",
                         "-cp", "--config-path", "-cn", "--config-name", "-cd", "--config-dir",
                         "--experimental-rerun"})
# Hydra's flags that print the config instead of running it: the jobs are composed and checked
# first all the same, so a wrong key is our one line there too, not Hydra's advice to add it
PRINT_FLAGS = ("-c", "--cfg", "--resolve", "-p", "--package")
CHECKED_FLAGS = frozenset(MULTIRUN_FLAGS + PRINT_FLAGS)
# Hydra's flags that take a value as the next argument (`--cfg job`, `-p trainer`)
_VALUE_FLAGS = frozenset({"-c", "--cfg", "-p", "--package", "-cp", "--config-path", "-cn", "--config-name",
                          "-cd", "--config-dir", "--experimental-rerun"})
_FILE_SCHEME = "file://"
# The most jobs one command line composes (`core.jobs.sweep_jobs` refuses more). Every job is
# composed and checked before the first starts (or the plan prints), at ~60 ms of CPU a job on
# one core here (measured: `nli-stability plan experiment=baseline seed=0..99`, 500 jobs, took
# 33 s of CPU against 4 s for one job; resolving each job's interpolations and copying its
# config dominate), so 2,000 jobs wait about 2 minutes, and `seed=0..100000` of one language
# 100 minutes. The largest preset is 192 jobs (translate_train): ten times that is still one
# study; more is better run as several sweeps, each kept and followed on its own (`status`).
MAX_JOBS = 2000


def expand_ranges(override: str) -> str:
    """Replace each `a..b` item of an override's value by the integers a, a+1, ..., b."""
    if "=" not in override or override.startswith("-"):
        return override
    key, value = override.split("=", 1)
    items = value.split(",")
    expanded: list[str] = []
    for item in items:
        match = _RANGE_ITEM.match(item.strip())
        if match is None:
            expanded.append(item)
            continue
        a, b = match.group("a"), match.group("b")
        if not (_INTEGER.match(a) and _INTEGER.match(b)) or int(a) > int(b):
            raise UserError(f"bad range '{override}'",
                            fix=f"write an inclusive integer range a..b with a <= b, e.g. {key}=0..5")
        if int(b) - int(a) >= MAX_JOBS and len(items) == 1:
            # Hydra's own range sweep: refused for its size all the same (`jobs.sweep_jobs`), but
            # without first parsing a hundred thousand listed values (seconds of CPU each time)
            return f"{key}=range({a},{int(b) + 1})"
        expanded.extend(str(n) for n in range(int(a), int(b) + 1))
    return f"{key}={','.join(expanded)}"


def _parse_fix(text: str, parser: OverridesParser) -> str:
    """The fix of an override Hydra cannot parse: where its value parses quoted (a character Hydra's
    unquoted values do not take: `é`, `Ж`, a quote), that value quoted, inside the shell's quotes,
    which must pass it on."""
    key, equals, value = text.partition("=")
    quote = next((mark for mark in ('"', "'") if mark not in value), None)
    if equals and quote:
        quoted = f"{key}={quote}{value}{quote}"
        try:
            parser.parse_override(quoted)
        except HydraException:
            pass
        else:
            return f"quote the value for Hydra, inside the shell's quotes: {shlex.quote(quoted)}"
    return "write key=value, key=a,b for a sweep, or key=a..b for a range"


def prepare_argv(argv: list[str], conf_dir: Path) -> list[str]:
    """Expand ranges, check the overrides parse and name existing configs, add -m for sweeps."""
    out: list[str] = []
    overrides: list[str] = []
    for arg in argv:
        if arg.startswith("-") or "=" not in arg:
            out.append(arg)
            continue
        expanded = expand_ranges(arg)
        out.append(expanded)
        overrides.append(expanded)
    parser = OverridesParser.create()
    parsed_overrides = []
    for text in overrides:
        try:
            parsed_overrides.append(parser.parse_override(text))
        except HydraException as err:
            message = first_line(err)
            raise UserError(f"cannot parse override '{text}' ({message})", fix=_parse_fix(text, parser)) from None
    config_dirs = [conf_dir, *user_config_dirs(parsed_overrides)]
    for parsed in parsed_overrides:
        _check_group_choices(parsed, config_dirs)
    swept = [parsed.get_key_element() for parsed in parsed_overrides if parsed.is_sweep_override()]
    printing = [arg for arg in out if arg.split("=")[0] in PRINT_FLAGS]
    if swept and printing:  # Hydra prints one job's config, and refuses a sweep with a traceback
        raise UserError(f"{printing[0]} prints one job's config, and this command line sweeps {', '.join(swept)}",
                        fix="give each swept key one value to print that job's config (e.g. seed=0), "
                            "or run nli-stability plan with the same overrides to list the sweep's jobs")
    if swept and not any(flag in out for flag in MULTIRUN_FLAGS):
        out.insert(0, "--multirun")
    return out


def split_flags(argv: list[str]) -> tuple[list[str], list[str]]:
    """(the flags' names, the overrides) of a command line: a flag's value (`job` of `--cfg job`,
    or of `--cfg=job`) is neither, since it is no override to compose."""
    flags: list[str] = []
    overrides: list[str] = []
    takes_value = False
    for arg in argv:
        if takes_value:
            takes_value = False
        elif arg.startswith("-"):
            name = arg.split("=", 1)[0]
            flags.append(name)
            takes_value = name in _VALUE_FLAGS and "=" not in arg
        else:
            overrides.append(arg)
    return flags, overrides


def user_config_dirs(parsed_overrides: list) -> list[Path]:
    """Folders a `hydra.searchpath=[file://DIR,...]` override adds, where users keep their own
    presets (DIR/experiment/mine.yaml) and machine settings (DIR/local/default.yaml)."""
    dirs = []
    for parsed in parsed_overrides:
        if parsed.key_or_group == "hydra.searchpath" and not parsed.is_delete():
            entries = parsed.value()
            for entry in entries if isinstance(entries, list) else [entries]:
                if str(entry).startswith(_FILE_SCHEME):
                    dirs.append(Path(str(entry)[len(_FILE_SCHEME):]).expanduser())
    return dirs


def _check_group_choices(parsed, config_dirs: list[Path]) -> None:
    """`lang=xx` or `hydra/launcher=xx` naming no config: say which ones exist."""
    group = parsed.key_or_group
    if parsed.package is not None or parsed.is_delete():
        return
    available = group_options(group, config_dirs)
    if not available:
        return  # a plain key such as trainer.max_epochs, not a config group
    values = list(parsed.sweep_string_iterator()) if parsed.is_sweep_override() else [parsed.value()]
    for value in values:
        if value is None or str(value) == "null":
            continue
        if str(value) not in available:
            places = [str(folder / group) for folder in config_dirs if (folder / group).is_dir()]
            if group.startswith("hydra/"):
                places.append("Hydra and its plugins")
            raise UserError(f"unknown {group} '{value}'",
                            fix=f"use one of: {', '.join(available)} (configs in {', '.join(places)})")


def group_options(group: str, config_dirs: list[Path]) -> list[str]:
    """The configs a group may name: the project's and the user's files, and for hydra/* also
    Hydra's own (e.g. hydra/job_logging=disabled) and its plugins' (hydra/launcher=joblib)."""
    options = {p.stem for folder in config_dirs for p in (folder / group).glob("*.yaml")}
    if group.startswith("hydra/"):
        from hydra.core.config_store import ConfigStore
        from hydra.core.plugins import Plugins

        Plugins.instance()  # discovering the plugins registers their configs
        packaged = resources.files("hydra.conf").joinpath(group)
        if packaged.is_dir():
            options |= {Path(entry.name).stem for entry in packaged.iterdir() if entry.name.endswith(".yaml")}
        try:
            options |= {Path(name).stem for name in ConfigStore.instance().list(group)}
        except OSError:  # ConfigStore.list raises it for a group nobody registered
            pass
    return sorted(options)
