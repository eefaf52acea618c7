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
- *record more*: the only difference is what is scored after training (`data.extra_eval`), or
  weights (`trainer.save_model=true`) or training dynamics (`trainer.dynamics=true`) are asked
  for and the run has none.
- *other*: anything else differs.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from omegaconf import DictConfig

from stability.core.errors import UserError
from stability.core.runrecord import RunDir, config_fingerprint, semantic_config

ABSENT, SAME, RECORD_MORE, OTHER = "absent", "same", "record more", "other"
# keys whose change adds to what a run records after training, not to what it learns
_RECORDED_ONLY = ("data.extra_eval",)
_SHORT = 8

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
    keys = [] if record.config_fingerprint == config_fingerprint(composed) else _changed_keys(run, composed)
    contents = changed_inputs(record.inputs, inputs)
    if not keys and not contents:
        lacking = (needs_model and not run.has_model()) or (needs_dynamics and not run.has_dynamics())
        return Verdict(RECORD_MORE) if lacking else Verdict(SAME)
    if keys and all(key.startswith(_RECORDED_ONLY) for key in keys) and \
            all(role.startswith("extra:") for role, _ in contents):
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
        before = dict(leaves(semantic_config(run.read_config())))
    except UserError:
        return ["config.yaml (unreadable) -> this job's config"]
    after = dict(leaves(semantic_config(composed)))
    keys = sorted(key for key in before.keys() | after.keys() if before.get(key) != after.get(key))
    return [f"{key}: {before.get(key)} -> {after.get(key)}" for key in keys] or \
        ["the config fingerprint (the same values, written differently)"]


def leaves(node: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Dotted keys and values of a resolved config (lists are values), without Hydra's node."""
    for key, value in node.items():
        if not prefix and key == "hydra":
            continue
        if isinstance(value, Mapping):
            yield from leaves(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value
