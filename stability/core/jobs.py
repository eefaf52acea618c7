"""The job configs a command line would run, expanded exactly as Hydra does.

Mirrors `hydra.multirun` with the basic sweeper: the sweep's arguments are the composed
config's `hydra.sweeper.params` followed by the command-line task overrides (a key given on
the command line replaces the preset's list), the jobs are their cartesian product in the
basic sweeper's order (`sweep_jobs`, built on Hydra's public override API; a test checks it
against the basic sweeper itself), and each job is composed like the launcher composes it
(the command-line `hydra.*` overrides, then the job's own overrides).

Composing is Hydra's slow part (~0.3 s a config here: the defaults tree and its YAML files),
so jobs are composed once per distinct set of group choices (`lang=fr`, `model=tiny`) and
each job's value overrides are then applied to a copy, by the same Hydra function its config
loader applies them with after composing. A 96-run preset expands in seconds, not a minute.
"""
from __future__ import annotations

import copy
import dataclasses
import difflib
import itertools
import math
import pickle
import re
import shlex
import typing
from pathlib import Path
from typing import Sequence

from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra.errors import HydraException
from hydra.types import RunMode
from omegaconf import MISSING, Container, DictConfig, ListConfig, OmegaConf, open_dict
from omegaconf.errors import ConfigKeyError, InterpolationToMissingValueError, OmegaConfBaseException, ValidationError

from stability.core.config import CONF_DIR, CONFIG_NAME
from stability.core.configfiles import config_file, failing_config, key_line
from stability.core.errors import UserError, first_line
from stability.core.identity import remember_composition
from stability.core.interrupts import deferred, raise_if_interrupted
from stability.core.overrides import (CHECKED_FLAGS, MAX_JOBS, MULTIRUN_FLAGS, PRINT_FLAGS, group_options,
                                      prepare_argv, split_flags, user_config_dirs)
from stability.core.progress import progress
from stability.core.schemas.checks import EXAMPLE

# The `_target_` of hydra/sweeper=basic and of the training command's (hydra/sweeper=checked, the
# basic one over checked jobs): the only sweepers whose expansion the plan knows.
BASIC_SWEEPERS = ("hydra._internal.core_plugins.basic_sweeper.BasicSweeper",
                  "hydra_plugins.nli_stability.sweepers.CheckedSweeper")
# Hydra's help texts, which only --help reads (Hydra composes them again for it).
HELP_NODES = ("help", "hydra_help")
# Composing this many jobs or more shows a progress bar (on a terminal): seconds, up to minutes
# at MAX_JOBS.
PROGRESS_FROM = 100


def sweep_jobs(arguments: list[Override]) -> list[list[str]]:
    """The basic sweeper's jobs: one value per key (a later override of a key replaces an
    earlier one in its place), the cartesian product in key order; more than MAX_JOBS refused."""
    by_key: dict[str, list[str]] = {}
    for override in arguments:
        key = override.get_key_element()
        if not override.is_sweep_override():
            by_key[key] = [f"{key}={override.get_value_element_as_str()}"]
        elif override.is_discrete_sweep():
            by_key[key] = [f"{key}={value}" for value in override.sweep_string_iterator()]
        else:
            raise UserError(f"the basic sweeper cannot sweep '{override.input_line}'",
                            fix="list the values (key=a,b,c) or use an integer range key=a..b")
    refuse_too_many(by_key)
    return [list(job) for job in itertools.product(*by_key.values())]


def refuse_too_many(by_key: dict[str, list[str]]) -> None:
    """A sweep of more than MAX_JOBS jobs as one UserError whose fix splits its most swept key,
    so that each part fits: `seed=0..100000` of five languages into `seed=0..399`, `seed=400..799`, ..."""
    count = math.prod(len(values) for values in by_key.values())
    if count <= MAX_JOBS:
        return
    key, values = max(by_key.items(), key=lambda item: len(item[1]))
    per_command = MAX_JOBS // (count // len(values))
    numbers = [value.split("=", 1)[1] for value in values]
    consecutive = all(re.fullmatch(r"-?\d+", n) for n in numbers) and \
        [int(n) for n in numbers] == list(range(int(numbers[0]), int(numbers[0]) + len(numbers)))
    if per_command and consecutive:
        first = int(numbers[0])
        split = (f"{key}={first}..{first + per_command - 1}, "
                 f"then {key}={first + per_command}..{first + 2 * per_command - 1}, ...")
    elif per_command:
        split = f"at most {per_command} values of {key} in each"
    else:
        split = "fewer values of each swept key in each"
    raise UserError(f"the sweep has {count:,} jobs, more than the {MAX_JOBS:,} one command composes and checks "
                    f"before it starts", fix=f"run it as several sweeps: {split}")


def job_overrides(master: DictConfig, task: list[Override], multirun: bool) -> list[list[str]]:
    """Each job's overrides, in Hydra's launch order."""
    if not multirun:
        return [[override.input_line for override in task]]
    sweeper = master.hydra.sweeper
    if sweeper.get("_target_") not in BASIC_SWEEPERS:
        raise UserError(f"the plan knows only Hydra's basic sweeper, not {sweeper.get('_target_')}",
                        fix="plan with the default hydra/sweeper")
    params = [f"{key}={value}" for key, value in (sweeper.params or {}).items()]
    arguments = OverridesParser.create().parse_overrides(params) + task
    return sweep_jobs(arguments)


def _is_group(override: Override, config_dirs: list[Path]) -> bool:
    """Whether `override` chooses a config group's option (`lang=fr`, `model=tiny`) rather than a value."""
    return override.package is not None or bool(group_options(override.key_or_group, config_dirs))


def _compose_jobs(config_name: str, hydra_lines: list[str], jobs: list[list[str]],
                  config_dirs: list[Path], bases: dict[tuple[str, ...], DictConfig]) -> list[DictConfig]:
    """Each job's config with its `hydra` node: one composition per distinct set of group
    overrides (`bases`, by their lines, may hold some already), then the job's value overrides
    applied as Hydra's config loader applies them, to a copy of its base. The copy is unpickled
    from the base pickled once (OmegaConf's own pickling: the same nodes, flags and types): 6.8 ms
    instead of a deepcopy's 16.6 for a 192-job preset's config, its check 1.15x less time
    (benchmarks/job_checks.py)."""
    parser = OverridesParser.create()
    pickled = {groups: pickle.dumps(base, pickle.HIGHEST_PROTOCOL) for groups, base in bases.items()}
    configs = []
    for job in progress(jobs, desc="composing jobs", unit="job", enabled=len(jobs) >= PROGRESS_FROM):
        raise_if_interrupted()
        parsed = parser.parse_overrides(job)
        is_group = [_is_group(override, config_dirs) for override in parsed]
        groups = tuple(o.input_line for o, group in zip(parsed, is_group) if group)
        if groups not in pickled:
            base = compose(config_name, overrides=hydra_lines + list(groups), return_hydra_config=True)
            pickled[groups] = pickle.dumps(base, pickle.HIGHEST_PROTOCOL)
        cfg = pickle.loads(pickled[groups])
        ConfigLoaderImpl._apply_overrides_to_config([o for o, group in zip(parsed, is_group) if not group], cfg)
        with open_dict(cfg.hydra):
            cfg.hydra.overrides.task = list(job)
        configs.append(cfg)
    return configs


def job_configs(argv: list[str], config_name: str = CONFIG_NAME, conf_dir: Path = CONF_DIR) -> list[DictConfig]:
    """The config of every job a command line with these arguments would launch, resolved and
    checked against its schema (`OmegaConf.to_object`), with its `hydra` node (a training run's
    directory is `hydra.sweep.dir`/`hydra.sweep.subdir`). Anything wrong is one UserError.
    `argv` may hold -m and the flags that print the config (`--cfg job`); with those only the
    keys are checked, since a config being looked at may still lack a value (`runs=???`)."""
    flags, arguments = split_flags(prepare_argv(argv, conf_dir))
    unknown = [flag for flag in flags if flag not in CHECKED_FLAGS]
    if unknown:
        raise UserError(f"unknown option '{unknown[0]}'", fix="pass overrides key=value (see --help)")
    try:
        overrides = OverridesParser.create().parse_overrides(arguments)
    except HydraException as err:  # prepare_argv checks only the key=value arguments
        raise UserError(first_line(err), fix="write overrides as key=value") from None
    hydra_lines = [o.input_line for o in overrides if o.is_hydra_override()]
    task = [o for o in overrides if not o.is_hydra_override()]
    try:  # Ctrl-C acts between two jobs' configs, never inside one (core.interrupts)
        with deferred(), initialize_config_dir(config_dir=str(conf_dir), version_base="1.3", job_name=config_name):
            config_dirs = [conf_dir, *user_config_dirs(overrides)]
            # the config of the fixed overrides: composed from their group choices, which is
            # also the base of the jobs that choose just those (a composition saved), then
            # their values applied, as in each job
            fixed = [o for o in task if not o.is_sweep_override()]
            groups = tuple(o.input_line for o in fixed if _is_group(o, config_dirs))
            base = compose(config_name, overrides=hydra_lines + list(groups), return_hydra_config=True)
            if conf_dir == CONF_DIR and not hydra_lines:      # the run variant's defaults, where they are these
                remember_composition(config_name, groups, base)
            master = copy.deepcopy(base)
            ConfigLoaderImpl._apply_overrides_to_config([o for o in fixed if not _is_group(o, config_dirs)], master)
            multirun = any(flag in MULTIRUN_FLAGS for flag in flags) or master.hydra.mode == RunMode.MULTIRUN
            configs = _compose_jobs(config_name, hydra_lines, job_overrides(master, task, multirun), config_dirs,
                                    bases={groups: base})
            if multirun:
                refuse_ignored_sweeps(master, configs, [o for o in task if o.is_sweep_override()
                                                        and _is_group(o, config_dirs)], task)
            for cfg in configs:
                raise_if_interrupted()
                refuse_undeclared_keys(cfg, config_name)
                if not any(flag in PRINT_FLAGS for flag in flags):
                    resolve_job(cfg)  # interpolation errors surface here, as user errors
                    OmegaConf.to_object(without_hydra(cfg))  # the schemas' types and ranges
            return configs
    except (HydraException, OmegaConfBaseException) as err:
        if (raised := _resolver_error(err)) is not None:  # raised by a resolver: already one line
            raise raised from None
        raise composition_error(err, config_name, [conf_dir, *user_config_dirs(overrides)]) from None


def _resolver_error(err: BaseException) -> UserError | None:
    """The UserError a resolver raised behind OmegaConf's error: its context, or its context's where
    OmegaConf wrapped it once more (a key read, as `resolve_job` reads top-level keys)."""
    context = err.__context__
    while isinstance(context, OmegaConfBaseException):
        context = context.__context__
    return context if isinstance(context, UserError) else None


def refuse_ignored_sweeps(master: DictConfig, configs: list[DictConfig], swept_groups: list[Override],
                          task: list[Override]) -> None:
    """A sweep over presets (`experiment=baseline,rte_mnli`) whose presets sweep keys of their own
    (`hydra.sweeper.params`), as one UserError: Hydra's sweeper takes the sweep from the command's
    config, composed without the swept presets, so each job would run at one value of its preset's
    swept keys (English, seed 0) without a word. A key the command line gives is no preset's to sweep."""
    if not swept_groups:
        return
    given = {override.get_key_element() for override in task}
    sweep = dict(master.hydra.sweeper.params or {})
    ignored: dict[str, dict[str, str]] = {}   # the job's swept preset lines -> the keys it sweeps, ignored
    for cfg in configs:
        chosen = " ".join(line for line in cfg.hydra.overrides.task
                          if line.split("=", 1)[0] in {o.get_key_element() for o in swept_groups})
        ignored.setdefault(chosen, {key: str(value) for key, value in (cfg.hydra.sweeper.params or {}).items()
                                    if key not in given and str(sweep.get(key)) != str(value)})
    chosen, keys = next(((chosen, keys) for chosen, keys in ignored.items() if keys), ("", {}))
    if not keys:
        return
    every_key = {key: value for each in reversed(ignored.values()) for key, value in each.items()}
    one_by_one = ", then ".join(f"{o.key_or_group}={value}" for o in swept_groups for value in o.sweep_string_iterator())
    raise UserError(f"{' '.join(o.input_line for o in swept_groups)}: a sweep over presets runs the command's own "
                    f"sweep, not each preset's, and {chosen} sweeps "
                    f"{' and '.join(f'{key} over {value}' for key, value in keys.items())}",
                    fix=f"run one command per preset ({one_by_one}), or give the keys the presets sweep on the "
                        f"command line: {' '.join(f'{key}={every_key[key]}' for key in sorted(every_key))}")


def resolve_job(cfg: DictConfig) -> None:
    """`OmegaConf.resolve` of a job's config, in place, but for Hydra's help texts (HELP_NODES), and
    its own keys before Hydra's node: resolving takes about 10 ms a job instead of 30, and checking a
    192-job preset's jobs 1.37x less time (benchmarks/job_checks.py). The help texts are long strings
    that OmegaConf parses for each job (a third of the time); and the run folder (`hydra.sweep.subdir`)
    interpolates `variant` and `setup`, whose resolvers, resolved first, then run once a job instead
    of once per path to them."""
    hydra = cfg._get_node("hydra")
    parts = [(cfg, [key for key in cfg if key != "hydra"])]
    if isinstance(hydra, DictConfig):
        parts.append((hydra, [key for key in hydra if key not in HELP_NODES]))
    for parent, keys in parts:
        for key in keys:
            if OmegaConf.is_missing(parent, key):
                continue
            if OmegaConf.is_interpolation(parent, key):
                try:
                    parent[key] = parent[key]
                except InterpolationToMissingValueError:     # as OmegaConf.resolve leaves it
                    parent[key] = MISSING
            elif isinstance(node := parent._get_node(key), Container):
                OmegaConf.resolve(node)


def without_hydra(cfg: DictConfig) -> DictConfig:
    """A copy of a composed config without Hydra's own node, as a job's task function sees it.
    The copy leaves Hydra's node out (deepcopy's memo gives an empty stand-in for it, then
    dropped) rather than copying it and dropping the copy: the node is about half the config,
    and a sweep copies each job's config several times (the checks, the guard)."""
    hydra = cfg._get_node("hydra")
    copied = copy.deepcopy(cfg, {} if hydra is None else {id(hydra): DictConfig({})})
    with open_dict(copied):
        copied.pop("hydra", None)
    return copied


def refuse_undeclared_keys(cfg: DictConfig, config_name: str) -> None:
    """A key no schema declares, as one UserError. Struct mode refuses `key=value` of an unknown
    key, but `+key=value` and `++key=value` add it, and `OmegaConf.to_object` keeps it as a
    mere attribute: a typo would run silently with the preset's value and name the variant."""
    undeclared = _undeclared(cfg, leave_out=("hydra",))  # Hydra's own node: no schema declares it
    if undeclared is not None:
        raise unknown_key(*undeclared, config_name)


def _undeclared(node: Container, path: str = "", leave_out: tuple[str, ...] = ()) -> tuple[str, type] | None:
    """The first key under `node` (but its keys `leave_out`) that is no field of its node's
    dataclass, and that dataclass; nodes typed Dict or Any (label maps, `columns`, `lang.files`,
    `annotator`) take any key."""
    if node._is_none() or node._is_missing() or node._is_interpolation():
        return None
    schema = OmegaConf.get_type(node)
    fields = {field.name for field in dataclasses.fields(schema)} if dataclasses.is_dataclass(schema) else None
    for key in node.keys() if isinstance(node, DictConfig) else range(len(node)):
        if key in leave_out:
            continue
        full_key = f"{path}[{key}]" if isinstance(node, ListConfig) else f"{path}.{key}".lstrip(".")
        if fields is not None and key not in fields:
            return full_key, typing.cast(type, schema)
        child = node._get_node(key)
        if isinstance(child, Container) and (found := _undeclared(child, full_key)) is not None:
            return found
    return None


def declared_keys(schema: type, prefix: str = "") -> list[str]:
    """The dotted keys a dataclass schema declares, its dataclass-typed fields' keys included."""
    hints = typing.get_type_hints(schema)
    keys = []
    for field in dataclasses.fields(schema):
        key = f"{prefix}.{field.name}".lstrip(".")
        keys.append(key)
        if dataclasses.is_dataclass(hints[field.name]):
            keys.extend(declared_keys(hints[field.name], key))
    return keys


def unknown_key(full_key: str, schema: type, config_name: str) -> UserError:
    """`full_key` is not declared by `schema`, the node it was set in: one line, suggesting the
    closest key that node declares (Hydra would advise appending it with `+`). Keys are compared
    below that node, so their shared prefix (`trainer.`) does not make every key look close."""
    parent, _, key = full_key.rpartition(".")
    keys = declared_keys(schema)
    closest = difflib.get_close_matches(key, keys, n=1)
    nearest = difflib.get_close_matches(key, keys, n=3, cutoff=0.3)
    guess = (f"did you mean {parent}{'.' if parent else ''}{closest[0]}?" if closest else
             "check its spelling" + (f" (the nearest keys: {', '.join(f'{parent}.{k}'.lstrip('.') for k in nearest)})"
                                     if nearest else "") + ";")
    return UserError(f"unknown key '{full_key}'",
                     fix=f"{guess} --help lists the keys, --cfg job prints the {config_name} config")


def composition_error(err: Exception, config_name: str, config_dirs: Sequence[Path] = ()) -> UserError:
    """Hydra's and OmegaConf's multi-line messages as one line: the override or key, the problem,
    and Hydra's own hint where it gives one (`To append to your config use +key=value`); a key of
    a config file (a preset of one's own) named by the file, found in `config_dirs`, and its line."""
    in_file = _file_key_error(err, config_name, config_dirs)
    if in_file is not None:
        return in_file
    invalid = err if isinstance(err, ValidationError) else err.__cause__
    if isinstance(invalid, ValidationError) and (wrong_type := type_error(invalid)) is not None:
        return wrong_type
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    message = lines[0] if lines else type(err).__name__
    cause = err.__cause__
    if message.startswith("Error merging override ") and isinstance(cause, OmegaConfBaseException):
        message = f"'{message.removeprefix('Error merging override ')}': {first_line(getattr(cause, 'msg', None) or cause)}"
    missing = re.search(r"missing mandatory value: ([\w.]+)", message)
    if missing:
        return UserError(f"{missing.group(1)} is required",
                         fix=f"pass {missing.group(1)}=... (--help says what it takes)")
    twice = re.match(r"Multiple values for ([\w/]+)\.|([\w/]+) appears more than once in the final defaults", message)
    if twice:  # `+experiment=smoke`: the defaults list has the group already (maybe as null)
        group = twice.group(1) or twice.group(2)
        return UserError(f"{group} is chosen twice", fix=f"choose it once, without +: {group}=<option>")
    unknown = re.match(r"Could not override '(.+)'\.", message)
    if unknown:
        key, schema = unknown.group(1), getattr(cause, "object_type", None)
        if dataclasses.is_dataclass(schema):  # Hydra's hint, append it with +key=value, is refused too
            return unknown_key(str(getattr(cause, "full_key", None) or key), typing.cast(type, schema), config_name)
        # a free-form map's new key (a label map's, the columns'): there Hydra's hint, the whole override
        # with a +, is right; quoted for the shell, since a map's value holds braces, commas and spaces
        append = lines[1].partition(" use ")[2] if len(lines) > 1 and lines[1].startswith("To append") else ""
        new_key = str(getattr(cause, "full_key", None) or key)
        return UserError(f"'{new_key}' is a new key of its map",
                         fix=f"add it with {shlex.quote(append) if append else f'+{new_key}=...'}")
    hints = [line for line in lines[1:] if not line.startswith(("full_key", "object_type", "reference_type", "See "))]
    return UserError(f"cannot compose the config: {message}",
                     fix=hints[0] if hints else f"check the key and its value (--help lists them, --cfg job "
                                                f"prints the {config_name} config)")


def _file_key_error(err: Exception, config_name: str, config_dirs: Sequence[Path]) -> UserError | None:
    """`In 'trainer/swa': ConfigKeyError ...` (a key no schema declares, a value of the wrong type,
    written in a config file) as the file, the key's line and the nearest keys; None for other errors."""
    config_path = failing_config(str(err))
    inner = err.__cause__ or err.__context__
    full_key = getattr(inner, "full_key", None)
    if config_path is None or not isinstance(inner, OmegaConfBaseException) or not full_key:
        return None
    schema = getattr(inner, "object_type", None)
    if isinstance(inner, ConfigKeyError) and dataclasses.is_dataclass(schema):
        error = unknown_key(str(full_key), typing.cast(type, schema), config_name)
    elif isinstance(inner, ValidationError) and (wrong_type := type_error(inner)) is not None:
        error = wrong_type
    else:
        error = UserError(f"{full_key}: {first_line(getattr(inner, 'msg', None) or inner)}",
                          fix="correct the key or its value (--help lists the keys)")
    path = config_file(config_path, config_dirs)
    return UserError(error.problem, path=path or f"config {config_path}",
                     line=key_line(path, str(full_key)) if path else None, fix=error.fix)


# What a schema field of each type takes, as an error message and a fix say it.
_TYPE_WORDS = {int: ("an integer", "integer"), float: ("a number", "number"),
               bool: ("true or false", "true|false"), str: ("text", "text")}


def type_error(err: ValidationError) -> UserError | None:
    """A value a schema field cannot take (`trainer.batch_size=abc`, `seed=null`), named by its
    key and the type the field wants; None for other validation errors."""
    if not dataclasses.is_dataclass(err.object_type) or err.full_key is None:
        return None
    hint = typing.get_type_hints(err.object_type).get(str(err.key))
    optional = typing.get_origin(hint) is typing.Union and type(None) in typing.get_args(hint)
    wanted = next((t for t in typing.get_args(hint) if t is not type(None)), None) if optional else hint
    key, or_null = err.full_key, " or null" if optional else ""
    if typing.get_origin(wanted) is list and not isinstance(err.value, (list, ListConfig)):
        field = next(f for f in dataclasses.fields(err.object_type) if f.name == str(err.key))
        example = field.metadata.get(EXAMPLE, f"[{err.value}]")
        return UserError(f"{key} takes a list, not {err.value!r}", fix=f"pass it in brackets: {key}={example}")
    if wanted not in _TYPE_WORDS:
        return None
    words, placeholder = _TYPE_WORDS[wanted]
    problem = f"{key} cannot be null" if err.value is None else f"{key}={err.value!r} is not {words}"
    return UserError(problem, fix=f"pass {key}=<{placeholder}>{or_null}")
