"""The run directory contract (docs/design.md, "Run directory"), owned by this module alone.

Every writer (training) and reader (report, resume check, sweep table, W&B, probing,
consistency) goes through `RunDir` and `RunRecord`; no other module knows the file names
or the fields of metrics.json. metrics.json is written last and atomically, so its
presence means the run is complete. It carries a `schema` version: files written before
versions existed (main up to commit 807686d) read as schema 1, whose fields they share.
Schema 2 adds the run's `variant` (see `stability.core.identity`); a schema-1 record has the
empty variant, which is what every run had then. Schema 3 adds `extra_eval`, the scores on
the extra evaluation sets (`data.extra_eval`) by set name; older records have none. Schema 4
adds `inputs`, the content of every input the run read (`role -> {"source", "sha256"}`: data
files, datasets, the model; see `stability.data.inputs`), and the run's `started` / `ended`
times; a record without inputs is one whose inputs were not recorded (treated as matching,
counted as such by the report). Schema 5 adds `precision`, what the run trained in (`float32`,
`bf16`, `fp16`: `trainer.mixed_precision=auto` resolves per device, so one config can run in
either); an older record ran its config's `trainer.mixed_precision` (`RunDir.precision`). Schema 6
adds the `engine` that trained the run, `solo` or `fused<K>` (`trainer.fuse_seeds=K`), and a fused
run's `fused_with`, the seeds of its group; an older record ran solo, the only engine then
(`RunDir.engine`). Schema 7 adds `eval_langs`, the run's scores on other languages' diagnostic
sets (`data.eval_langs`) by language code, each with the fields of its own language's scores, and
their per-item predictions in `eval_langs/<code>.jsonl`; an older record was scored in its own
language only (`RunRecord.scored_in` gives the record as the run scored in one language). Any
other version is a user error rather than a silent misreading (code that reads schema 1 only
would pool variants).

A run trained with `trainer.dynamics=true` also keeps its training dynamics in `dynamics/`
(`Dynamics`): `items.parquet`, every training, validation and diagnostic item once (split, idx,
label, premise, hypothesis, and a diagnostic item's fine categories), and per validation k (the
k-th line of train_log.jsonl) `validation-<k>.parquet`, one row per item in the same order:
P(entailment) as float16 and the predicted label. Training items carry what the training forward
passes since the previous validation gave them (none: NaN and -1); the others what that
validation's evaluation gave. Files are read by their number k, so a missing one is a gap
(`Dynamics.missing`), never filled by the next.

A run being trained with `trainer.resume=true` keeps `checkpoint/last.pt` (its format is
`finetune.loop`'s; what it says of its job, `core.runmatch`'s). What an unfinished attempt left
and the next does not continue is cleared before it starts (`RunDir.clear_leftovers`), so a
redo's staging folder holds only what that redo wrote when it takes the run's place.
"""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Union

import numpy as np
import pandas as pd
import yaml
from omegaconf import DictConfig, OmegaConf

from stability.core.atomic import atomic_path, atomic_write_jsonl, atomic_write_text, jsonl_text
from stability.core.errors import UserError, first_line
from stability.core.taxonomy import FINE_CATEGORIES

SCHEMA_VERSION = 7
# a training config: composed (a DictConfig, interpolations resolved when read) or read back as plain
# resolved values (`RunDir.read_config_values`); the fingerprint is the same for both
Config = Union[DictConfig, Mapping[str, Any]]
_KNOWN_SCHEMAS = (1, 2, 3, 4, 5, 6, 7)
_METRICS_FILE = "metrics.json"
_PREDICTIONS_FILE = "predictions.jsonl"
# the predictions on other languages' diagnostic sets (`data.eval_langs`): `eval_langs/<code>.jsonl`
_EVAL_LANGS_DIR = "eval_langs"
_TRAIN_LOG_FILE = "train_log.jsonl"
_CONFIG_FILE = "config.yaml"
_CHECKPOINT = Path("checkpoint") / "last.pt"
_MODEL_DIR = "model"
_DYNAMICS_DIR = "dynamics"
_DYNAMICS_ITEMS = "items.parquet"
_DYNAMICS_VALIDATION = "validation-{:04d}.parquet"
_DYNAMICS_VALIDATION_NUMBER = re.compile(r"validation-(\d+)\.parquet")
DYNAMICS_SPLITS = ("train", "validation", "diagnostic")
_ITEM_COLUMNS = ("split", "idx", "label", "premise", "hypothesis", "categories")
# held while a process trains the run (`stability.core.runlock`): one writer per run
_LOCK_FILE = "run.lock"
# a rerun of a finished run trains here; the finished run moves under `replaced/<time>/` only
# once the rerun has finished, so an interrupted rerun loses nothing
_STAGING_DIR = ".staging"
_REPLACED_DIR = "replaced"
# folders inside a run directory that hold runs which are not the run itself
RESERVED_DIRS = (_STAGING_DIR, _REPLACED_DIR)
# what only a training run puts in its folder (a run's first file is its lock, then config.yaml
# and train_log.jsonl): the folder is that run's (`RunDir.is_run`); metrics.json alone is a
# name other tools use too
_OWN_NAMES = (_TRAIN_LOG_FILE, _LOCK_FILE, _STAGING_DIR)
# what makes up a run (moved together when a rerun replaces it); metrics.json marks it finished
_RUN_FILES = (_METRICS_FILE, _PREDICTIONS_FILE, _EVAL_LANGS_DIR, _TRAIN_LOG_FILE, _CONFIG_FILE, _MODEL_DIR,
              _DYNAMICS_DIR)
# the training job's own files beside them (Hydra's `.hydra/` and the job's log `train.log`, written
# where the attempt trains: `core.joboutput`): they describe the run they came with, so they move with it
_JOB_FILES = (".hydra", "train.log")
# Dotted keys that do not change what a run computes, left out of its fingerprint. Saving
# the weights or the training dynamics adds files but changes no result, so a finished run is
# rerun for them only when they are asked for and absent (`core.runmatch`); the dataqa_* facts are read by
# data QA alone; `variant` and `out` are derived from the other keys (the run's identity and
# output folder), so runs finished before they existed keep their fingerprint.
NON_SEMANTIC_KEYS = ("force", "paths", "logger", "trainer.save_model", "trainer.dynamics",
                     "lang.dataqa_allowed_words", "lang.dataqa_lid_accepted", "variant", "out")
# Keys read only when another key says so, left out of the fingerprint otherwise: runs finished
# before these keys existed keep their fingerprint, and a setting nothing reads changes nothing.
# data.suite is read only for data.diagnostic=generated; an NLI dataset only once it has a path
# (train_set, validation_set), a count (mix) or an entry (extra_eval, eval_langs). Extra evaluation sets and
# languages change no trained weight, but they change what a run records: a run finished without them is run again.
_READ_ONLY_WHEN: tuple[tuple[tuple[str, ...], Callable[[Config], bool]], ...] = (
    (("data.diagnostic", "data.suite"), lambda cfg: _select(cfg, "data.diagnostic") is not None),
    (("data.train_set",), lambda cfg: _select(cfg, "data.train_set.path") is not None),
    (("data.mix",), lambda cfg: str(_select(cfg, "data.mix.n_samples", default=0)) != "0"),
    (("data.extra_eval",), lambda cfg: bool(_select(cfg, "data.extra_eval", default=None))),
    (("data.eval_langs",), lambda cfg: bool(_select(cfg, "data.eval_langs", default=None))),
    (("data.validation_set",), lambda cfg: _select(cfg, "data.validation_set.path") is not None),
    # the warm-up of a linear schedule; the plateau rule's factor and floor once it is on
    (("trainer.warmup_ratio",), lambda cfg: _select(cfg, "trainer.schedule", default="constant") != "constant"),
    (("trainer.lr_decay_factor", "trainer.min_lr"),
     lambda cfg: _select(cfg, "trainer.lr_patience", default=None) is not None),
)
# Keys added after runs existed, at the value that trains as before they existed (the
# stabilisation methods, all off; evaluation batched by examples): left out of the fingerprint
# at that value, so a run at the defaults keeps the fingerprint of one finished before the keys
# were added.
OFF_VALUES: dict[str, Any] = {
    "trainer.optimizer": "adamw", "trainer.schedule": "constant", "trainer.lr_patience": None,
    "trainer.eval_every": "epoch", "trainer.reinit_layers": 0, "trainer.layer_lr_decay": 1.0,
    "trainer.mixout": 0.0, "trainer.pretrained_decay": 0.0, "trainer.eval_tokens_per_batch": None,
    "trainer.fuse_seeds": 1, "trainer.fuse_align_lengths": False, "trainer.freeze_embeddings": False,
}
# The same for the keys added to every NLI dataset node (`schemas.nli.NliSet`): a train_set, mix
# or extra_eval entry at these values reads what it read before they existed.
NLI_SET_OFF_VALUES: dict[str, Any] = {"delimiter": None, "where": {}}
# Keys that change no result but were hashed before that was noticed: hashed at their first
# value whatever the job sets, so every run keeps the fingerprint a run with that value always
# had. `trainer.resume` continues a killed run to the result of an uninterrupted one (tested), so
# `trainer.resume=true` on a finished sweep skips its runs. A run finished with another of the
# values before recorded that value's fingerprint, which `config_fingerprints` still accepts.
HASHED_AT: dict[str, tuple[Any, ...]] = {"trainer.resume": (False, True)}
_RERUN = "delete the run directory and run it again"
# for files of a finished run that can be made again: the run itself is kept, under replaced/
_REDO = "run its training command again with force=true, which keeps this run under replaced/"
# a record's `precision` for accelerate's mixed_precision (`trainer.mixed_precision` once resolved)
PRECISIONS = {"no": "float32", "fp16": "fp16", "bf16": "bf16"}
# a record's `engine`: each seed alone, or K seeds fused into one model (`engine_name`)
SOLO = "solo"
# a run's scores on one diagnostic set, its own language's or an `eval_langs` language's, each with its
# value when absent (a record field of the run's own language; an entry of `eval_langs` per other language)
LANGUAGE_SCORES: dict[str, Any] = {"n_items": None, "overall_mcc": None, "mean_category_mcc": None,
                                   "category_mcc": {}, "category_n": {}, "coarse_mcc": {}, "coarse_n": {},
                                   "degenerate": []}
# the input role of an `eval_langs` language's diagnostic file (`eval:fr`)
EVAL_LANG_ROLE = "eval:"


def engine_name(fuse_seeds: int) -> str:
    """The `engine` of a run trained with `trainer.fuse_seeds=fuse_seeds`: `solo` or `fused<K>`."""
    return SOLO if fuse_seeds == 1 else f"fused{fuse_seeds}"


def _items_schema():
    import pyarrow as pa

    return pa.schema([("split", pa.dictionary(pa.int8(), pa.string())), ("idx", pa.string()), ("label", pa.int8()),
                      ("premise", pa.string()), ("hypothesis", pa.string()),
                      ("categories", pa.list_(pa.string()))])


@dataclass(frozen=True)
class Prediction:
    """One line of predictions.jsonl: a diagnostic item, its gold label and the run's answer.

    Items of generated test suites also carry their `template` id and the `features` the
    template varied (e.g. {"subject.GENDER": "FEM"}).
    """

    idx: str
    label: int
    pred: int
    prob_entailment: float
    categories: tuple[str, ...] = ()
    template: str | None = None
    features: dict[str, str] | None = None

    def to_json(self) -> dict[str, Any]:
        row = {"idx": self.idx, "label": self.label, "pred": self.pred,
               "prob_entailment": self.prob_entailment, "categories": list(self.categories)}
        if self.template is not None:
            row["template"] = self.template
        if self.features is not None:
            row["features"] = self.features
        return row

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> Prediction:
        features = row.get("features")
        return cls(idx=str(row["idx"]), label=int(row["label"]), pred=int(row["pred"]),
                   prob_entailment=float(row.get("prob_entailment", float("nan"))),
                   categories=tuple(row.get("categories") or ()), template=row.get("template"),
                   features={str(k): str(v) for k, v in features.items()} if features else None)


@dataclass(frozen=True)
class Dynamics:
    """A run's training dynamics (`trainer.dynamics=true`), as matrices over (validation, item).

    `items` has one row per item: `split` (train, validation, diagnostic), `idx`, `label`,
    `premise`, `hypothesis`, `categories` (a diagnostic item's fine categories; empty otherwise).
    Row v of `prob_entailment` and `pred` is the v-th validation
    (train_log.jsonl line v+1); a training item the training passes did not reach since the
    previous validation has NaN and -1 there, and so has every item of a validation whose file is
    missing (`missing`), so no later validation takes its place.
    """

    items: pd.DataFrame
    prob_entailment: np.ndarray     # (validations, items), float32 read from float16
    pred: np.ndarray                # (validations, items), int8
    # validations (1-based) the train log has but whose file is absent: their rows are NaN and -1
    missing: tuple[int, ...] = ()

    @property
    def recorded(self) -> np.ndarray:
        """Per validation (row), whether its predictions were read: False for a `missing` one."""
        return ~np.isin(np.arange(1, len(self.pred) + 1), self.missing)

    def columns(self, split: str) -> np.ndarray:
        """Positions of `split`'s items in `items` (and the matrices' columns)."""
        return np.flatnonzero(self.items["split"].to_numpy() == split)

    @property
    def p_gold(self) -> np.ndarray:
        """P(gold label) per (validation, item): the two-way task's P(entailment) or its complement."""
        entailment = self.items["label"].to_numpy() == 0
        return np.where(entailment, self.prob_entailment, 1.0 - self.prob_entailment)


@dataclass(frozen=True)
class RunRecord:
    """metrics.json: what a finished run reports. Only lang, setup and seed are required, so
    records written by hand or by older code (fewer fields) still read."""

    lang: str
    setup: str
    seed: int
    experiment: str | None = None
    # what the run changed beyond lang, setup and seed ("" = the experiment as configured)
    variant: str = ""
    seed_init: int | None = None
    seed_order: int | None = None
    model: str | None = None
    n_train: int | None = None
    n_added: int | None = None
    n_validation: int | None = None
    n_items: int | None = None
    val_accuracy: float | None = None
    # share of the validation set's most frequent label: a run not above it learned nothing
    val_majority: float | None = None
    overall_mcc: float | None = None
    mean_category_mcc: float | None = None
    category_mcc: dict[str, float] = field(default_factory=dict)
    category_n: dict[str, int] = field(default_factory=dict)
    coarse_mcc: dict[str, float] = field(default_factory=dict)
    coarse_n: dict[str, int] = field(default_factory=dict)
    degenerate: list[str] = field(default_factory=list)
    # per extra evaluation set: {"accuracy", "mcc", "n_items", "degenerate"} (MCC 0.0 when undefined)
    extra_eval: dict[str, dict[str, Any]] = field(default_factory=dict)
    # per other language scored (`data.eval_langs`, schema 7): the fields of `LANGUAGE_SCORES` on its diagnostic set
    eval_langs: dict[str, dict[str, Any]] = field(default_factory=dict)
    epochs_trained: int | None = None
    best_epoch: int | None = None
    timings: dict[str, float] = field(default_factory=dict)
    tokenization_cached: bool | None = None
    num_processes: int | None = None
    device: str | None = None
    pid: int | None = None
    config_fingerprint: str | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    # role ("train", "validation", "diagnostic", "mnli", "mix", "train_set", "validation_set", "extra:<name>", "model")
    # -> {"source": where it was read, "sha256": its content}; empty: not recorded (before schema 4)
    inputs: dict[str, dict[str, str]] = field(default_factory=dict)
    started: str | None = None   # ISO 8601, UTC
    ended: str | None = None
    # what the run trained in: float32, bf16 or fp16 (None: before schema 5, see RunDir.precision)
    precision: str | None = None
    # what trained it: solo, or fused<K> with the seeds of its group in fused_with (None: before schema 6, solo)
    engine: str | None = None
    fused_with: list[int] = field(default_factory=list)
    # folder (relative to the run directory) holding the best epoch's weights, if saved
    saved_model: str | None = None
    schema: int = SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def languages(self) -> tuple[str, ...]:
        """The languages whose diagnostic sets the run was scored on: its own first."""
        return (self.lang, *self.eval_langs)

    def scored_in(self, code: str) -> RunRecord:
        """The record as the run scored in language `code`: its own record for its own language; for
        an `eval_langs` language, that language's scores in place of its own, its diagnostic input
        that language's, and no extra evaluation sets (they belong to the run's own row). The run's
        training (validation accuracy, inputs, engine, ...) is the same in every language."""
        if code == self.lang:
            return self
        scores = self.eval_langs[code]
        inputs = {role: entry for role, entry in self.inputs.items()
                  if role != "diagnostic" and not role.startswith(EVAL_LANG_ROLE)}
        if f"{EVAL_LANG_ROLE}{code}" in self.inputs:
            inputs["diagnostic"] = self.inputs[f"{EVAL_LANG_ROLE}{code}"]
        return dataclasses.replace(self, lang=code, extra_eval={}, eval_langs={}, inputs=inputs,
                                   **{key: scores.get(key, empty) for key, empty in LANGUAGE_SCORES.items()})

    @classmethod
    def from_json(cls, data: Any, path: Path, require: Iterable[str] = ()) -> RunRecord:
        """Check the schema and the `require`d fields; unknown keys of a known schema are ignored."""
        if not isinstance(data, dict):
            raise UserError(f"malformed {_METRICS_FILE} (not a JSON object)", path=path, fix=_RERUN)
        schema = data.get("schema", 1)
        if schema not in _KNOWN_SCHEMAS:
            raise UserError(f"unknown {_METRICS_FILE} schema {schema!r} (this version reads "
                            f"{', '.join(map(str, _KNOWN_SCHEMAS))})", path=path,
                            fix="read it with the nli-stability version that wrote it, or rerun the run")
        missing = [key for key in ("lang", "setup", "seed", *require) if data.get(key) in (None, {}, [])]
        if missing:
            raise UserError(f"{_METRICS_FILE} lacks {', '.join(missing)}", path=path, fix=_RERUN)
        names = {f.name for f in dataclasses.fields(cls)} - {"schema"}
        try:
            record = cls(**{key: value for key, value in data.items() if key in names}, schema=schema)
            return dataclasses.replace(record, seed=int(record.seed), lang=str(record.lang),
                                       setup=str(record.setup), variant=str(record.variant or ""))
        except (TypeError, ValueError) as err:
            raise UserError(f"malformed {_METRICS_FILE} ({err})", path=path, fix=_RERUN) from None


class RunDir:
    """One run directory: its files, written and read only here."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    @property
    def checkpoint_path(self) -> Path:
        """Where `trainer.resume=true` keeps the state after the last finished epoch."""
        return self.path / _CHECKPOINT

    @property
    def model_dir(self) -> Path:
        """Where `trainer.save_model=true` keeps the best epoch's weights and tokenizer (HF format)."""
        return self.path / _MODEL_DIR

    def has_model(self) -> bool:
        return (self.model_dir / "config.json").is_file()

    @property
    def lock_path(self) -> Path:
        """The lock a training process holds on the run (`stability.core.runlock`)."""
        return self.path / _LOCK_FILE

    @property
    def staging(self) -> RunDir:
        """Where a rerun of this finished run trains until it finishes."""
        return RunDir(self.path / _STAGING_DIR)

    def replaced_runs(self) -> list[Path]:
        """Folders of earlier runs this one replaced (`force=true`), oldest first."""
        folder = self.path / _REPLACED_DIR
        return sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []

    def take_over_from(self, staged: RunDir, stamp: str) -> Path | None:
        """Make the finished run in `staged` this run: the run files now here (and its job's
        `.hydra/` and log) move, never deleted, to `replaced/<stamp>/`, then the staged files move
        in, metrics.json last so the
        folder never looks finished with a mix of both. Returns where the old run went."""
        kept = None
        if self.is_finished():
            kept = self.path / _REPLACED_DIR / stamp
            kept.mkdir(parents=True, exist_ok=False)
            for name in _RUN_FILES + _JOB_FILES:
                if (self.path / name).exists():
                    (self.path / name).replace(kept / name)
        for name in sorted(_RUN_FILES + _JOB_FILES, key=lambda name: name == _METRICS_FILE):
            if (staged.path / name).exists():
                (staged.path / name).replace(self.path / name)
        shutil.rmtree(staged.path, ignore_errors=True)
        return kept

    # -- written while the run trains ------------------------------------------------------

    def clear_leftovers(self, resumed: bool, dynamics: bool) -> list[str]:
        """Make this unfinished run directory hold only what the attempt about to start continues,
        so nothing a killed attempt (or a hand) left is taken for this attempt's: weights and
        predictions go (the attempt writes its own once it finishes), and unless the attempt
        resumes from the checkpoint here, so do the checkpoint and the dynamics (`dynamics`: the
        resumed attempt records them, and `start_dynamics` keeps the validations its checkpoint
        holds). A staging folder that is not resumed is emptied whole. Returns what was removed."""
        if self.path.name == _STAGING_DIR and not resumed:
            removed = sorted(path.name for path in self.path.iterdir()) if self.path.is_dir() else []
            shutil.rmtree(self.path, ignore_errors=True)
            return removed
        names = [_MODEL_DIR, _PREDICTIONS_FILE, _EVAL_LANGS_DIR]
        names += [] if resumed else [_CHECKPOINT.parts[0]]
        names += [] if resumed and dynamics else [_DYNAMICS_DIR]
        removed = [name for name in names if (self.path / name).exists()]
        for name in removed:
            if (self.path / name).is_dir():
                shutil.rmtree(self.path / name)
            else:
                (self.path / name).unlink()
        return removed

    def write_config(self, cfg: DictConfig) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.path / _CONFIG_FILE, OmegaConf.to_yaml(cfg, resolve=True))

    def write_train_log(self, entries: Iterable[dict[str, Any]]) -> None:
        """Start (or, after a resume, rewrite) the epoch log."""
        atomic_write_jsonl(self.path / _TRAIN_LOG_FILE, entries)

    def append_epoch(self, entry: dict[str, Any]) -> None:
        with (self.path / _TRAIN_LOG_FILE).open("a", encoding="utf-8") as handle:
            handle.write(jsonl_text([entry]))

    def write_predictions(self, predictions: Iterable[Prediction], scored_in: str | None = None) -> None:
        """The per-item predictions on the run's own diagnostic set, or (`scored_in`) on that
        `data.eval_langs` language's."""
        path = self._predictions_path(scored_in)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_jsonl(path, (p.to_json() for p in predictions))

    def _predictions_path(self, scored_in: str | None) -> Path:
        return self.path / (_PREDICTIONS_FILE if scored_in is None else f"{_EVAL_LANGS_DIR}/{scored_in}.jsonl")

    def write_record(self, record: RunRecord) -> None:
        """Last: its presence marks the run as finished."""
        atomic_write_text(self.path / _METRICS_FILE, json.dumps(record.to_json(), indent=2, ensure_ascii=False))

    def start_dynamics(self, items: pd.DataFrame, validations_kept: int = 0) -> None:
        """Write the items of a dynamics run, keeping the first `validations_kept` validations (those
        a resumed run's checkpoint holds) and deleting any later ones an interrupted run wrote."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        folder = self.path / _DYNAMICS_DIR
        folder.mkdir(parents=True, exist_ok=True)
        for number, path in self._validation_files().items():
            if number > validations_kept:
                path.unlink()
        table = pa.Table.from_pandas(items[list(_ITEM_COLUMNS)], preserve_index=False)
        with atomic_path(folder / _DYNAMICS_ITEMS) as tmp:
            pq.write_table(table.cast(_items_schema()), tmp)

    def write_dynamics_validation(self, number: int, prob_entailment: np.ndarray, pred: np.ndarray) -> None:
        """Validation `number` (1-based): per item, in the order of items.parquet."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table({"prob_entailment": pa.array(np.asarray(prob_entailment, dtype=np.float16)),
                          "pred": pa.array(np.asarray(pred, dtype=np.int8))})
        with atomic_path(self.path / _DYNAMICS_DIR / _DYNAMICS_VALIDATION.format(number)) as tmp:
            pq.write_table(table, tmp)

    # -- read by resume, report, sweep table, probing, consistency -------------------------

    def has_dynamics(self) -> bool:
        return (self.path / _DYNAMICS_DIR / _DYNAMICS_ITEMS).is_file()

    def read_dynamics(self) -> Dynamics | None:
        """The recorded dynamics, or None for a run trained without them."""
        import pyarrow.parquet as pq

        if not self.has_dynamics():
            return None
        folder = self.path / _DYNAMICS_DIR
        files = self._validation_files()
        try:
            items = pq.read_table(folder / _DYNAMICS_ITEMS).to_pandas()
            tables = {number: pq.read_table(path) for number, path in files.items()}
        except (OSError, ValueError) as err:  # pyarrow's ArrowInvalid is a ValueError
            raise UserError(f"unreadable training dynamics ({first_line(err)})", path=folder, fix=_REDO) from None
        # validations are matched by their number: one whose file is missing is a gap, not the next one
        n_validations = max([len(self.read_train_log()), *files])
        prob = np.full((n_validations, len(items)), np.nan, dtype=np.float32)
        pred = np.full((n_validations, len(items)), -1, dtype=np.int8)
        for number, table in tables.items():
            if table.num_rows != len(items):
                raise UserError(f"validation {number} has {table.num_rows} rows for {len(items)} items",
                                path=files[number], fix=_REDO)
            prob[number - 1] = table.column("prob_entailment").to_numpy().astype(np.float32)
            pred[number - 1] = table.column("pred").to_numpy()
        return Dynamics(items, prob, pred, tuple(n for n in range(1, n_validations + 1) if n not in tables))

    def _validation_files(self) -> dict[int, Path]:
        """The validation files by their number, in order (`validation-0003.parquet` is 3)."""
        folder = self.path / _DYNAMICS_DIR
        matches = [(_DYNAMICS_VALIDATION_NUMBER.fullmatch(path.name), path)
                   for path in folder.iterdir()] if folder.is_dir() else []
        return dict(sorted((int(match[1]), path) for match, path in matches if match and int(match[1]) > 0))


    def is_finished(self) -> bool:
        return (self.path / _METRICS_FILE).is_file()

    def finished_after(self, stamp_ns: int) -> bool:
        """Whether the run finished after `stamp_ns` (a file's `st_mtime_ns`): its record was written then."""
        return self.is_finished() and (self.path / _METRICS_FILE).stat().st_mtime_ns > stamp_ns

    def is_run(self) -> bool:
        """Whether a training run owns this folder: it holds what only a run writes (finished
        or not), so no other command may write here."""
        return (any((self.path / name).exists() for name in _OWN_NAMES)
                or all((self.path / name).is_file() for name in (_METRICS_FILE, _CONFIG_FILE)))

    def read_config(self) -> DictConfig:
        """The resolved config the run was trained with (model, data, trainer, ...)."""
        path = self.path / _CONFIG_FILE
        if not path.is_file():
            raise UserError(f"no {_CONFIG_FILE} in the run directory", path=self.path, fix=_RERUN)
        config = OmegaConf.load(path)
        if not isinstance(config, DictConfig):
            raise UserError(f"malformed {_CONFIG_FILE} (not a mapping)", path=path, fix=_RERUN)
        return config

    def read_config_values(self) -> dict[str, Any] | None:
        """The resolved config as plain values, None where the run has no config.yaml (a hand-made
        record). Read by libyaml where it is built in: a tenth of `read_config`'s time, for a check
        over every run a report reads (config.yaml is written resolved, so both read the same values)."""
        path = self.path / _CONFIG_FILE
        if not path.is_file():
            return None
        try:
            values = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except (yaml.YAMLError, UnicodeDecodeError) as err:
            raise UserError(f"unreadable {_CONFIG_FILE} ({first_line(err)})", path=path, fix=_RERUN) from None
        if not isinstance(values, dict):
            raise UserError(f"malformed {_CONFIG_FILE} (not a mapping)", path=path, fix=_RERUN)
        return values

    def precision(self, record: RunRecord) -> str | None:
        """What the run trained in: its record's `precision`, or for a record written before that
        field, its config's `trainer.mixed_precision` (then the only way to choose one); None
        where neither says (a hand-made record without config.yaml)."""
        if record.precision is not None or not (self.path / _CONFIG_FILE).is_file():
            return record.precision
        return PRECISIONS.get(OmegaConf.select(self.read_config(), "trainer.mixed_precision", default=None))

    @staticmethod
    def engine(record: RunRecord) -> str:
        """What trained the run: its record's `engine`, or `solo` for a record written before that
        field (fused runs did not exist then)."""
        return record.engine or SOLO

    def read_record(self, require: Iterable[str] = ()) -> RunRecord:
        path = self.path / _METRICS_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UserError(f"no {_METRICS_FILE}: the run did not finish", path=self.path, fix=_RERUN) from None
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise UserError(f"unreadable {_METRICS_FILE} ({err})", path=path, fix=_RERUN) from None
        return RunRecord.from_json(data, path, require)

    def read_predictions(self, scored_in: str | None = None) -> list[Prediction]:
        """The per-item predictions (on `scored_in`'s diagnostic set, an `eval_langs` language; None: the
        run's own); empty when the file is absent (records made elsewhere). A repeated idx (a run made
        before the data readers refused one) is refused: items are keyed by idx."""
        path = self._predictions_path(scored_in)
        if not path.is_file():
            return []
        rows = []
        first_line: dict[str, int] = {}
        with path.open(encoding="utf-8") as handle:
            for line_no, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    prediction = Prediction.from_json(json.loads(line))
                except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as err:
                    raise UserError(f"malformed prediction line ({err!r})", path=path, line=line_no,
                                    fix=_RERUN) from None
                unknown = set(prediction.categories) - set(FINE_CATEGORIES)
                if unknown:
                    raise UserError(f"unknown categories {sorted(unknown)}", path=path, line=line_no,
                                    fix="use the 33 fine category names (docs/design.md, \"Taxonomy\")")
                if first_line.setdefault(prediction.idx, line_no) != line_no:
                    raise UserError(f"idx '{prediction.idx}' repeats line {first_line[prediction.idx]}", path=path,
                                    line=line_no, fix="give every item of the run's diagnostic file its own idx, "
                                                      "then " + _RERUN)
                rows.append(prediction)
        return rows

    def read_train_log(self) -> list[dict[str, Any]]:
        path = self.path / _TRAIN_LOG_FILE
        if not path.is_file():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def iter_runs(root: str | Path) -> Iterator[RunDir]:
    """Finished runs under `root` (itself included), in path order; unfinished ones are skipped,
    and so are runs a rerun replaced and reruns still in their staging folder."""
    root = Path(root)
    for metrics in sorted(root.rglob(_METRICS_FILE)):
        if not set(RESERVED_DIRS).intersection(metrics.relative_to(root).parts[:-1]):
            yield RunDir(metrics.parent)


def outermost_run(path: str | Path) -> Path | None:
    """The outermost run folder that is `path` or holds it (as `path` is written: relative stays
    relative), or None where no run owns `path`."""
    path = Path(path)
    return next((folder for folder in (*reversed(path.parents), path) if RunDir(folder).is_run()), None)


def semantic_config(composed: Config) -> dict[str, Any]:
    """The resolved config minus bookkeeping keys and keys nothing reads, with `HASHED_AT`'s keys
    at their one value: what the fingerprint hashes."""
    resolved = OmegaConf.to_container(composed, resolve=True) if isinstance(composed, DictConfig) \
        else copy.deepcopy(dict(composed))
    assert isinstance(resolved, dict)
    ignored = NON_SEMANTIC_KEYS + unread_keys(composed)
    ignored += tuple(key for key, off in OFF_VALUES.items() if _select(composed, key, off) == off)
    for dotted in ignored:
        drop_key(resolved, dotted)
    data = resolved.get("data")
    for node in ([data.get("train_set"), data.get("mix"), *(data.get("extra_eval") or [])]
                 if isinstance(data, dict) else []):
        for key, off in NLI_SET_OFF_VALUES.items():
            if isinstance(node, dict) and node.get(key, off) == off:
                node.pop(key, None)
    for dotted, (hashed, *_) in HASHED_AT.items():
        _replace_key(resolved, dotted, hashed)
    return resolved


def unread_keys(composed: Config) -> tuple[str, ...]:
    """The dotted keys nothing reads under this config (`trainer.warmup_ratio` with a constant
    schedule, ...): neither in the fingerprint nor in the run's variant."""
    return tuple(key for keys, read in _READ_ONLY_WHEN if not read(composed) for key in keys)


def _select(config: Config, dotted: str, default: Any = None) -> Any:
    """`OmegaConf.select` of a composed config, or the same walk through plain values."""
    if isinstance(config, DictConfig):
        return OmegaConf.select(config, dotted, default=default)
    node: Any = config
    for key in dotted.split("."):
        if not isinstance(node, Mapping) or key not in node:
            return default
        node = node[key]
    return node


def config_fingerprint(composed: DictConfig) -> str:
    """A hash of the semantic config: equal hash, same computation (of the same inputs)."""
    return fingerprint(semantic_config(composed))


def config_fingerprints(composed: DictConfig) -> set[str]:
    """Every fingerprint a run of this computation may have recorded: `config_fingerprint`, and
    those of runs finished before a `HASHED_AT` key was fixed, with the key at another value."""
    semantic = semantic_config(composed)
    found = {fingerprint(semantic)}
    for dotted, (_, *others) in HASHED_AT.items():
        for value in others:
            other = copy.deepcopy(semantic)
            if _replace_key(other, dotted, value):
                found.add(fingerprint(other))
    return found


def fingerprint(value: Any) -> str:
    """The sha256 of a JSON-able value written canonically (sorted keys): equal value, equal hash."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def _replace_key(config: dict[str, Any], dotted: str, value: Any) -> bool:
    """Set `a.b.c` where it is present (a hand-made config may lack it); whether it was."""
    *parents, last = dotted.split(".")
    for key in parents:
        config = config.get(key)
        if not isinstance(config, dict):
            return False
    if last not in config:
        return False
    config[last] = value
    return True


def drop_key(config: dict[str, Any], dotted: str) -> None:
    """Remove `a.b.c` from nested dicts; absent parents are fine (hand-made or older configs)."""
    *parents, last = dotted.split(".")
    for key in parents:
        config = config.get(key)
        if not isinstance(config, dict):
            return
    config.pop(last, None)
