"""What the runs recorded: `probe runs=DIR` reads its language, data settings and model from
the runs' own config.yaml, so probing a sweep needs no other option.

A key given on the command line wins over the runs' value (`hydra.overrides.task` says which
keys the user gave), and `lang=` also selects the runs of that language. Runs that disagree on
a key nobody chose are refused with one line naming the key and the values, since the probe
reads one data setting for all its encoders and one table must not mix languages or models.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, OmegaConf

from stability.core.errors import UserError
from stability.core.runrecord import RunDir, RunRecord, iter_runs

# The keys taken from the runs, in the order they are checked.
RECORDED_KEYS = ("lang", "model", "data.source", "data.root", "data.max_train_samples",
                 "data.max_eval_samples", "data.max_length")
# A language is told apart by its code, a model by its name.
_IDENTITY = {"lang": "code", "model": "name"}
_ABSENT = object()


@dataclass(frozen=True)
class RecordedRuns:
    """The probe config with the runs' settings in place, and the runs it probes."""

    cfg: DictConfig
    runs: list[tuple[RunDir, RunRecord]]


def given_keys(task_overrides: Sequence[str]) -> set[str]:
    """The config keys (and groups) of the user's overrides: `lang=fr` gives `lang`."""
    return {override.key_or_group for override in OverridesParser.create().parse_overrides(list(task_overrides))}


def _is_given(key: str, given: set[str]) -> bool:
    """`key` or a key inside it (`lang.files.train=...` counts as choosing `lang`)."""
    return any(name == key or name.startswith(key + ".") for name in given)


def _shown(key: str, value: object) -> str:
    identity = _IDENTITY.get(key)
    if identity is not None and isinstance(value, DictConfig):
        value = value.get(identity)
    return "null" if value is None else str(value)


def _finished_runs(root: Path) -> list[tuple[RunDir, RunRecord]]:
    if not root.is_dir():
        raise UserError("runs folder not found", path=root, fix="pass runs=<the out folder of nli-stability train>")
    runs = [(run, run.read_record()) for run in iter_runs(root)]
    if not runs:
        raise UserError("no finished runs under this folder", path=root,
                        fix="pass runs=<the out folder of an nli-stability train sweep>")
    return runs


def _fix(key: str, values: list[str]) -> str:
    if key == "lang":
        return f"pass {' or '.join(f'lang={value}' for value in values)} to probe one language's runs"
    if key == "model":
        return "point runs= at a folder whose runs fine-tuned one model"
    return f"pass {key}=<value> (e.g. {key}={values[0]}) to probe all of them with one setting"


def recorded_runs(cfg: DictConfig, task_overrides: Sequence[str]) -> RecordedRuns:
    """`cfg` (a composed probe config with `runs` set) with every RECORDED_KEYS value the user
    did not give taken from the selected runs' config.yaml."""
    root = Path(str(cfg.runs)).expanduser()
    runs = _finished_runs(root)
    given = given_keys(task_overrides)
    if _is_given("lang", given):
        langs = sorted({record.lang for _, record in runs})
        runs = [(run, record) for run, record in runs if record.lang == cfg.lang.code]
        if not runs:
            raise UserError(f"no runs of lang={cfg.lang.code} under this folder (it holds {', '.join(langs)})",
                            path=root, fix=f"pass lang={langs[0]}")
    configs = [run.read_config() for run, _ in runs]
    settled = copy.deepcopy(cfg)
    for key in RECORDED_KEYS:
        if _is_given(key, given):
            continue
        values = [value for config in configs
                  if (value := OmegaConf.select(config, key, default=_ABSENT)) is not _ABSENT]
        if not values:
            continue  # runs older than the key: the probe's own value
        shown = sorted({_shown(key, value) for value in values})
        if len(shown) > 1:
            raise UserError(f"the runs disagree on {key} ({', '.join(shown)})", path=root, fix=_fix(key, shown))
        OmegaConf.update(settled, key, values[0], merge=False)
    return RecordedRuns(settled, runs)
