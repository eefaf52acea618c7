"""Does a run folder already hold a job's computation? Same config, same input content.

A result belongs to the inputs that made it: a folder that holds a finished run is skipped
only when the job would compute the same thing, redone (beside the finished run, which is kept)
when the job only asks to record more of the same computation, and otherwise left alone: the
command refuses, naming the config keys and the input contents that differ
(docs/concepts-and-metrics.md, "Run identity: what makes two runs the same").
- *same*: equal config fingerprint (`runrecord.config_fingerprint`) and, where the run recorded
  its inputs, equal content hashes role by role. A run written before inputs were recorded
  (schema < 4) matches on its config alone; an input whose content could not be resolved (a Hub
  model not yet cached) is not compared.
- *record more*: the only difference is what is scored after training (`data.extra_eval`,
  `data.eval_langs`), or
  weights (`trainer.save_model=true`) or training dynamics (`trainer.dynamics=true`) are asked
  for and the run has none.
- *other*: anything else differs.

The runs of one condition (lang, setup, variant: one folder of seeds) are pooled as its seeds, so they
must share everything but what seeds may differ in (`condition_config`): the variant names what a run
changed against its experiment's defaults *as composed now*, so a user preset edited between two
commands puts runs of two configs in one folder, and only their configs tell them apart
(`condition_differences`; refused by `sweep.guard` before training, by the report before pooling).

A checkpoint (`trainer.resume=true`) is judged the same way before a run continues from it: it
carries its attempt's identity (`checkpoint_identity`: the semantic config and its fingerprint, the
input contents, and whether dynamics were recorded), and a run resumes only from one whose
identity equals the job's (`checkpoint_differences`); otherwise it refuses (`force=true` starts
over), since epochs of the old data or config would be continued on the new.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from omegaconf import DictConfig

from stability.core.errors import UserError
from stability.core.identity import NOT_VARIANT_KEYS
from stability.core.runrecord import (EVAL_LANG_ROLE, RunDir, config_fingerprint, config_fingerprints, drop_key,
                                      semantic_config)

ABSENT, SAME, RECORD_MORE, OTHER = "absent", "same", "record more", "other"
# keys whose change adds to what a run records after training, not to what it learns
_RECORDED_ONLY = ("data.extra_eval", "data.eval_langs")
# the input roles of what is scored after training: extra evaluation sets, other languages' diagnostic sets
_RECORDED_ONLY_ROLES = ("extra:", EVAL_LANG_ROLE)
_SHORT = 8
# What the seeds of one condition may differ in: the seeds, the experiment's name (a folder's) and the keys
# that change no result (`identity.NOT_VARIANT_KEYS`: data locations, the evaluation batch size, the extra
# evaluation sets, which only add records, ...). Bookkeeping keys (W&B, paths, out, saving weights or
# dynamics) are no part of the semantic config to begin with. Which other languages' diagnostic sets a run was
# scored on (`data.eval_langs`) adds records too: the setup says that it has some (`rte@en`), not which.
POOLED_ACROSS = ("seed", "seed_init", "seed_order", "experiment_name", *NOT_VARIANT_KEYS, "data.eval_langs")

Inputs = Mapping[str, Mapping[str, str]]


@dataclass(frozen=True)
class Verdict:
    """What a folder holds compared with a job, and what differs (`key: old -> new`); for a
    folder whose metrics.json cannot be read (absent as a finished run), what is wrong with it."""

    state: str
    differences: tuple[str, ...] = ()

    def refusal(self, run: RunDir, out: str) -> str:
        """The one line that refuses to replace the finished run, with both ways forward. `out` is the
        job's output folder: another `out=` keeps both whether or not the command line set `out`
        (which, when set, makes `paths.output_dir` change nothing)."""
        return (f"{run.path}: the finished run there differs from this job in {'; '.join(self.differences)} "
                f"(fix: force=true redoes it and keeps the finished run under {run.path}/replaced/, "
                f"or out={out}-2 (any folder but {out}) keeps both)")


def judge(run: RunDir, composed: DictConfig, inputs: Inputs, needs_model: bool = False,
          needs_dynamics: bool = False) -> Verdict:
    """Compare the finished run in `run` (if any) with a job's config and input contents."""
    if not run.is_finished():
        return Verdict(ABSENT)
    try:
        record = run.read_record()
    except UserError as err:  # an unreadable metrics.json: no finished run to keep
        return Verdict(ABSENT, (err.problem,))
    keys = [] if record.config_fingerprint in config_fingerprints(composed) else _changed_keys(run, composed)
    contents = changed_inputs(record.inputs, inputs)
    if not keys and not contents:
        lacking = (needs_model and not run.has_model()) or (needs_dynamics and not run.has_dynamics())
        return Verdict(RECORD_MORE) if lacking else Verdict(SAME)
    if keys and all(key.startswith(_RECORDED_ONLY) for key in keys) and \
            all(role.startswith(_RECORDED_ONLY_ROLES) for role, _ in contents):
        return Verdict(RECORD_MORE)
    return Verdict(OTHER, tuple(line for _, line in contents) + tuple(keys))


def changed_inputs(recorded: Inputs, job: Inputs) -> list[tuple[str, str]]:
    """(role, `role (source): content old -> new`) for each input both sides hashed differently."""
    changed = []
    for role, now in job.items():
        before = recorded.get(role)
        if before and before.get("sha256") and now.get("sha256") and before["sha256"] != now["sha256"]:
            changed.append((role, f"{role} ({now['source']}): content {before['sha256'][:_SHORT]} -> "
                                  f"{now['sha256'][:_SHORT]}"))
    return changed


def _changed_keys(run: RunDir, composed: DictConfig) -> list[str]:
    """`key: old -> new` for each config value the finished run and the job differ in."""
    try:
        before = semantic_config(run.read_config())
    except UserError:
        return ["config.yaml (unreadable) -> this job's config"]
    return _key_differences(before, semantic_config(composed))


def _key_differences(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """`key: old -> new` for each leaf two semantic configs differ in (never empty: called on
    configs whose fingerprints differ)."""
    old, new = dict(leaves(before)), dict(leaves(after))
    keys = sorted(key for key in old.keys() | new.keys() if old.get(key) != new.get(key))
    return [f"{key}: {old.get(key)} -> {new.get(key)}" for key in keys] or \
        ["the config fingerprint (the same values, written differently)"]


def condition_config(semantic: Mapping[str, Any]) -> dict[str, Any]:
    """What every seed of one condition must share: a semantic config (`runrecord.semantic_config`)
    less `POOLED_ACROSS` (`seed_init` / `seed_order` set apart from the seed are in the variant already)."""
    shared = copy.deepcopy(dict(semantic))
    for dotted in POOLED_ACROSS:
        drop_key(shared, dotted)
    return shared


def condition_differences(first: Mapping[str, Any], other: Mapping[str, Any]) -> list[str]:
    """`key: first -> other` for each value two condition configs (`condition_config`) differ in; empty
    where the two runs are seeds of one condition."""
    return [] if first == other else _key_differences(first, other)


def checkpoint_identity(composed: DictConfig, inputs: Inputs, dynamics: bool) -> dict[str, Any]:
    """What a checkpoint stores of the attempt that wrote it, for `checkpoint_differences`."""
    semantic = semantic_config(composed)
    return {"config_fingerprint": config_fingerprint(composed), "config": semantic,
            "inputs": {role: dict(entry) for role, entry in inputs.items()}, "dynamics": dynamics}


def checkpoint_differences(saved: Mapping[str, Any] | None, job: Mapping[str, Any]) -> list[str]:
    """What differs between a checkpoint's identity (None: one written before checkpoints kept it)
    and the job's (`checkpoint_identity`); empty when the job may continue from it."""
    if saved is None:
        return ["its config and input contents (not recorded: the checkpoint predates that)"]
    keys = [] if saved["config_fingerprint"] == job["config_fingerprint"] else \
        _key_differences(saved["config"], job["config"])
    contents = [line for _, line in changed_inputs(saved["inputs"], job["inputs"])]
    recorded = [] if saved["dynamics"] == job["dynamics"] else \
        [f"trainer.dynamics: {saved['dynamics']} -> {job['dynamics']}"]
    return contents + keys + recorded


def checkpoint_refusal(run: RunDir, differences: list[str]) -> str:
    """The one line that refuses to continue the checkpoint in `run` for a job it differs from."""
    return (f"{run.checkpoint_path}: the checkpoint differs from this job in {'; '.join(differences)}, so "
            f"trainer.resume=true would continue it on what this job reads (fix: force=true starts the run over "
            f"from its first epoch, replacing the checkpoint; in a sweep, trainer.resume=false does so without redoing "
            f"its finished runs)")


def leaves(node: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Dotted keys and values of a resolved config (lists are values), without Hydra's node."""
    for key, value in node.items():
        if not prefix and key == "hydra":
            continue
        if isinstance(value, Mapping):
            yield from leaves(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value
