"""Run identity: (experiment, lang, setup, variant, seed) names one run directory.

A sweep may vary any config key, not only the language, the setup and the seed. The
*variant* names what else a run changed: the result-changing config values that differ
from its experiment's defaults, e.g. `lr3e-05`, `bs16_ep3`, `model-tiny`, `init1_order0`.
It is empty for a run of the experiment as configured, so such runs keep the layout
`<experiment>/<lang>/<setup>/seed<seed>/`; other runs live in
`<experiment>/<lang>/<setup>/<variant>/seed<seed>/`, and seed statistics are computed per
(lang, setup, variant).

How the variant is built, so that the same computation always lands in the same place:
- group choices (`model=tiny`) that differ from the experiment's give `<group>-<choice>`;
- leaf values that differ from the defaults of the experiment with those group choices give
  `<alias><value>` (aliases below; other keys use their last dotted part without `_`); a
  model given by path is named by its last two path parts (`model-checkpoints-mbert-ft`);
- the engine (`trainer.fuse_seeds`, `trainer.fuse_align_lengths`) is compared with solo
  training, not with the experiment's defaults: a fused seed is another computation than its
  solo run, so `fused<K>` names it however K was chosen (command line, a trainer preset, an
  experiment preset of one's own);
- `seed_init` / `seed_order` that differ from `seed` give `init<N>` / `order<N>`; when they
  equal `seed` (their default) nothing is added, so runs made before variants existed keep
  their directories and are not rerun;
- keys nothing reads under the config (`runrecord.unread_keys`: `trainer.warmup_ratio` with a
  constant schedule, ...) never appear, and neither do the stabilisation methods at their off
  value (they equal the defaults);
- keys that change no result (`NOT_VARIANT_KEYS`: the fingerprint's bookkeeping keys, data
  locations, resume, evaluation batch size, extra evaluation sets) and keys already in the
  path (language, setup with the datasets it names, seed, experiment, diagnostic set) never
  appear. An extra evaluation set changes what a run records, not what it learns: the run
  keeps its directory and, its fingerprint changed, is run again to record the set.
Items are joined by `_` in a fixed order; values keep only `[A-Za-z0-9.+-]`, so the name is
safe as a folder on every file system and as a Hydra override value.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
from pathlib import Path
from typing import Any, Iterator, Mapping

from omegaconf import DictConfig, ListConfig, OmegaConf

from stability.core.confdir import CONF_DIR
from stability.core.runrecord import NON_SEMANTIC_KEYS, fingerprint, unread_keys
from stability.core.schemas.nli import NliSet
from stability.core.schemas.trainer import Trainer

# config groups whose choice can tell two variants apart (lang, logger, paths, hydra do not)
VARIANT_GROUPS = ("model", "data", "trainer", "annotator")
# short names of the keys stability studies sweep most, in the order they appear in a name
ALIASES = {
    "model.name": "model",
    "trainer.learning_rate": "lr",
    "trainer.batch_size": "bs",
    "trainer.max_epochs": "ep",
    "trainer.patience": "patience",
    "trainer.weight_decay": "wd",
    "trainer.max_grad_norm": "clip",
    "trainer.group_by_length": "grouped",
    "trainer.mixed_precision": "precision",
    # the stabilisation methods (docs/stabilisation-methods.md)
    "trainer.optimizer": "opt",
    "trainer.schedule": "sched",
    "trainer.warmup_ratio": "warmup",
    "trainer.lr_patience": "lrpatience",
    "trainer.lr_decay_factor": "lrdecay",
    "trainer.min_lr": "minlr",
    "trainer.eval_every": "every",
    "trainer.reinit_layers": "reinit",
    "trainer.layer_lr_decay": "llrd",
    "trainer.mixout": "mixout",
    "trainer.pretrained_decay": "l2sp",
    # the engine (`finetune.fused_run`): a fused seed is another computation than its solo run
    "trainer.fuse_seeds": "fused",
    "trainer.fuse_align_lengths": "aligned",
    "trainer.freeze_embeddings": "frozenemb",
    "model.dropout": "dropout",
    "data.max_length": "maxlen",
    "data.max_train_samples": "ntrain",
    "data.max_eval_samples": "neval",
    "data.source": "source",
    "data.mnli.seed": "mnliseed",
    "data.mix.seed": "mixseed",
    "data.validation_set.name": "val",
}
SEED_ALIASES = {"seed_init": "init", "seed_order": "order"}
# the engine's keys at solo training, what every run's engine is named against
SOLO_ENGINE = {f"trainer.{field.name}": field.default for field in dataclasses.fields(Trainer)
               if field.name in ("fuse_seeds", "fuse_align_lengths")}
_NLI_SET_KEYS = tuple(f.name for f in dataclasses.fields(NliSet))
# in the path already (or derived from what is): never part of the variant
IDENTITY_KEYS = ("experiment_name", "lang", "seed", "seed_init", "seed_order", "setup", "variant", "out",
                 "data.mnli.n_samples", "data.mnli.feature", "data.mnli.presence",
                 "data.diagnostic", "data.suite",
                 # the setup says that the run is scored in other languages (`rte@en`); which ones
                 # changes what it records, not what it learns (`core.runmatch`: recorded again)
                 "data.eval_langs",
                 # named in the setup (`<train_set.name>`, `rte+<mix.name><N>`): the name stands
                 # for the dataset, so two datasets mixed under one name would share a folder
                 "data.train_set", "data.mix.n_samples", *(f"data.mix.{key}" for key in _NLI_SET_KEYS),
                 # the validation set's name stands for it in the variant (`val-<name>`)
                 *(f"data.validation_set.{key}" for key in _NLI_SET_KEYS if key != "name"))
# change no result: where files are read or written, resuming, evaluation batch size, the
# extra evaluation sets (scored after training, they change no trained weight)
NOT_VARIANT_KEYS = (*NON_SEMANTIC_KEYS, "data.root", "data.mnli.file", "data.mnli.download",
                    "data.mnli.released_train_size", "data.extra_eval", "trainer.resume", "trainer.eval_batch_size",
                    "trainer.eval_tokens_per_batch",
                    "annotator.cache_dir", "annotator.batch_size", "annotator.n_process")
ITEM_SEPARATOR = "_"
_UNSAFE = re.compile(r"[^A-Za-z0-9.+-]+")
_MAX_LENGTH = 100  # a readable folder name
_SEED_ITEM = re.compile(rf"^(?:{'|'.join(SEED_ALIASES.values())})-?\d+$")


def run_subdir(lang: object, setup: object, variant: object, seed: object) -> str:
    """`<lang>/<setup>/seed<seed>`, or `<lang>/<setup>/<variant>/seed<seed>` for a variant."""
    variant_part = f"{variant}/" if variant not in (None, "") else ""
    return f"{lang}/{setup}/{variant_part}seed{seed}"


def condition_run_subdir(condition: str, seed: object) -> str:
    """`run_subdir` of seed `seed` of the condition named `lang/setup[/variant]` (a run's folder
    without its seed, as an adaptive sweep's record names it)."""
    lang, setup, *variant = condition.split("/", 2)
    return run_subdir(lang, setup, variant[0] if variant else "", seed)


def variant_family(variant: str) -> str:
    """The variant without its `init<N>` / `order<N>` items: the runs of one seed_init × seed_order
    grid share a family."""
    return ITEM_SEPARATOR.join(item for item in variant.split(ITEM_SEPARATOR) if item and not _SEED_ITEM.match(item))


def variant_of(cfg: DictConfig) -> str:
    """The `${run_variant:}` of a composed training config: read Hydra's group choices and search
    path from the config itself, or from the running Hydra job (whose task config has no
    `hydra` node)."""
    hydra_node = _hydra_node(cfg)
    if hydra_node is None:
        raise RuntimeError("the run variant needs the Hydra config: compose with return_hydra_config=True")
    choices = _choices(hydra_node)
    searchpath = tuple(str(entry) for entry in hydra_node.searchpath)
    base = _experiment_overrides(choices, searchpath)
    default_choices = _composed_defaults(str(hydra_node.job.config_name), base)[1]
    changed_groups = [(group, choices[group]) for group in VARIANT_GROUPS
                      if group in choices and choices[group] != default_choices.get(group)]
    defaults = _composed_defaults(str(hydra_node.job.config_name),
                                  base + tuple(f"{group}={choice}" for group, choice in changed_groups))[0]
    unread = unread_keys(cfg)
    values = {key: value for key, value in _leaves(cfg).items()
              if not any(key == dotted or key.startswith(f"{dotted}.") for dotted in unread)}
    return variant_name(changed_groups + variant_items(values, {**defaults, **SOLO_ENGINE})
                        + seed_items(cfg.seed, cfg.seed_init, cfg.seed_order))


def group_choices(cfg: DictConfig) -> dict[str, str]:
    """The config-group options a training config was composed from (`{"trainer": "mosbach",
    "model": "mbert", ...}`), as W&B records them so a dashboard groups runs by method;
    empty where no Hydra config is at hand."""
    hydra_node = _hydra_node(cfg)
    if hydra_node is None:
        return {}
    return {group: choice for group, choice in _choices(hydra_node).items() if group in VARIANT_GROUPS}


def _hydra_node(cfg: DictConfig) -> DictConfig | None:
    """The Hydra node of a config composed with it, or the running Hydra job's (whose task config
    has none)."""
    return cfg.get("hydra") if "hydra" in cfg else _running_hydra_config()


def _choices(hydra_node: DictConfig) -> dict[str, str]:
    return {group: str(choice) for group, choice in hydra_node.runtime.choices.items() if choice is not None}


def variant_items(values: Mapping[str, Any], defaults: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(alias, value) for every leaf whose value differs from the defaults, aliased keys first."""
    changed = [key for key in values if key in defaults and values[key] != defaults[key]]
    changed += sorted(key for key in values if key not in defaults)
    rank = {key: i for i, key in enumerate(ALIASES)}
    ordered = sorted(changed, key=lambda key: (rank.get(key, len(rank)), key))
    return [(ALIASES.get(key) or key.rsplit(".", 1)[-1].replace("_", ""),
             _model_name(values[key]) if key == "model.name" else values[key]) for key in ordered]


def _model_name(name: object) -> str:
    """An HF id as it is (`org/model`); a local folder by its last two parts, not its whole path."""
    return "/".join(str(name).rstrip("/").split("/")[-2:])


def seed_items(seed: object, seed_init: object, seed_order: object) -> list[tuple[str, Any]]:
    """`init<N>` / `order<N>` for the seeds set apart from `seed`."""
    return [(SEED_ALIASES[name], value) for name, value in (("seed_init", seed_init), ("seed_order", seed_order))
            if str(value) != str(seed)]


def variant_name(items: list[tuple[str, Any]]) -> str:
    """Items as `<alias><value>` (or `<alias>-<value>` for a value that starts with a letter),
    joined by `_`; very long names end in a hash of the whole so they stay unique."""
    parts = []
    for alias, value in items:
        text = _UNSAFE.sub("-", _value_text(value)).strip("-") or "none"
        parts.append(f"{alias}{'' if re.match(r'^[-0-9.]', text) else '-'}{text}")
    name = ITEM_SEPARATOR.join(parts)
    if len(name) > _MAX_LENGTH:
        name = f"{name[:_MAX_LENGTH - 9]}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"
    return name


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if value is None:
        return "none"
    if isinstance(value, (list, dict)):
        return fingerprint(value)[:8]
    return str(value)


def _leaves(cfg: DictConfig) -> dict[str, Any]:
    """Resolved leaf values by dotted key, without identity, bookkeeping and Hydra keys."""
    skipped = ("hydra", *IDENTITY_KEYS, *NOT_VARIANT_KEYS)
    return dict(_flatten(cfg, "", skipped))


def _flatten(node: Any, prefix: str, skipped: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
    for key in node:
        dotted = f"{prefix}{key}"
        if dotted in skipped:
            continue
        value = node[key]
        if isinstance(value, DictConfig):
            yield from _flatten(value, f"{dotted}.", skipped)
        else:
            yield dotted, OmegaConf.to_container(value, resolve=True) if isinstance(value, ListConfig) else value


def _running_hydra_config() -> DictConfig | None:
    from hydra.core.hydra_config import HydraConfig

    return HydraConfig.get() if HydraConfig.initialized() else None


def _experiment_overrides(choices: Mapping[str, str], searchpath: tuple[str, ...]) -> tuple[str, ...]:
    """The overrides that compose a job's experiment as configured: the preset and the search path."""
    overrides = (f"experiment={choices['experiment']}",) if choices.get("experiment") else ()
    if searchpath:
        overrides += (f"hydra.searchpath=[{','.join(searchpath)}]",)
    return overrides


# the configs composed from exactly these overrides, by (config name, overrides): one composition per
# experiment and group choices in a process, not one per job
_COMPOSED: dict[tuple[str, tuple[str, ...]], DictConfig] = {}


def remember_composition(config_name: str, overrides: tuple[str, ...], cfg: DictConfig) -> None:
    """Keep `cfg`, composed with its `hydra` node from the project's configs and exactly `overrides`,
    and left unchanged: a command whose base config is its experiment's defaults (the common
    `experiment=X ...`) then composes them once, not twice."""
    _COMPOSED.setdefault((config_name, overrides), cfg)


@functools.lru_cache(maxsize=64)
def _composed_defaults(config_name: str, overrides: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, str]]:
    """Leaves and group choices of a config composed from these overrides only (cached: one
    composition per experiment and group choices, not one per job; none where the command kept it)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    cfg = _COMPOSED.get((config_name, overrides))
    if cfg is None and GlobalHydra.instance().is_initialized():      # inside a Hydra job or a compose context
        cfg = compose(config_name, overrides=list(overrides), return_hydra_config=True)
    elif cfg is None:
        with initialize_config_dir(config_dir=str(Path(CONF_DIR)), version_base="1.3"):
            cfg = compose(config_name, overrides=list(overrides), return_hydra_config=True)
    return _leaves(cfg), _choices(cfg.hydra)
