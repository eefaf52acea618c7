"""What the pooled runs were made from: their inputs and their code.

Seed statistics are only seed statistics when the seeds are all that differs: runs of one
(lang, setup, variant) whose recorded inputs differ (a data file or model that changed between
runs) are refused, role by role; a run with no recorded inputs (written before schema 4)
matches anything, and the report counts such runs. So are runs of one (lang, setup, variant) that
trained in different precisions: `trainer.mixed_precision=auto` is bf16 on one machine and
float32 on another; and so are runs trained by different engines (solo, fused: `check_same_engine`),
and runs whose configs differ in more than what seeds of one condition may (`check_same_config`,
`core.runmatch.condition_config`): a user preset edited between two commands into one folder gives
runs of two configs one variant.
Runs of different code commits are pooled, since most commits change no
result, but report.md names the commits (`code_sentence`).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from stability.core.errors import UserError
from stability.core.markdown import counted
from stability.core.runmatch import condition_config, condition_differences
from stability.core.runrecord import RunDir, RunRecord, fingerprint, semantic_config
from stability.core.setups import trained_in

SHORT_HASH = 8
SHORT_COMMIT = 7
_FIX = "rerun the runs of old inputs with force=true, or report them from separate folders"

Runs = Sequence[tuple[Path, RunRecord]]


def check_same_inputs(runs: Runs) -> None:
    """Refuse, in one line, the first (lang, setup, variant) whose runs recorded different
    contents for some input role."""
    for cell, members in _cells(runs):
        folder = _common_folder([path for path, _ in members])
        roles = sorted({role for _, record in members for role in record.inputs})
        found = [text for role in roles if (text := _difference(role, members, folder))]
        if found:
            raise UserError(f"{len(members)} runs of {cell} read other inputs: {'; '.join(found)}", path=folder,
                            fix=_FIX)


def check_same_precision(runs: Runs) -> None:
    """Refuse, in one line, the first (lang, setup, variant) whose runs trained in different
    precisions, naming one run of each; a run that says none (a hand-made record) matches any.
    The fix is a report of one precision's runs, whose folders it lists: they share the variant's
    folder, so no folder holds one precision alone."""
    _check_same_training(runs, "precisions", lambda path, record: RunDir(path).precision(record))


def check_same_engine(runs: Runs) -> None:
    """Refuse, in one line, the first (lang, setup, variant) whose runs were trained by different
    engines (`solo`, `fused<K>`: `trainer.fuse_seeds`), naming one run of each. The engine is in
    the variant, so this takes runs gathered from folders whose presets chose different engines."""
    _check_same_training(runs, "engines", lambda path, record: RunDir.engine(record))


def check_same_config(runs: Runs) -> None:
    """Refuse, in one line, the first (lang, setup, variant) whose runs' configs (config.yaml) differ in
    more than seeds of one condition may, naming the keys, a run of each config and the runs of the
    first config to report apart; a run without config.yaml (a hand-made record) matches any."""
    for cell, members in _cells(runs):
        if len(members) < 2:
            continue
        by_config: dict[str, list[tuple[Path, dict]]] = {}
        for path, _ in members:
            values = RunDir(path).read_config_values()
            if values is not None:
                shared = condition_config(semantic_config(values))
                by_config.setdefault(fingerprint(shared), []).append((path, shared))
        if len(by_config) > 1:
            folder = _common_folder([path for path, _ in members])
            (first_path, first), (other_path, other) = (paths[0] for paths in by_config.values())
            differences = "; ".join(condition_differences(first, other))
            paths = [path for path, _ in next(iter(by_config.values()))]
            raise UserError(f"{len(members)} runs of {cell} were trained with {len(by_config)} configs: "
                            f"{_name(first_path, folder)} and {_name(other_path, folder)} differ in {differences}",
                            path=folder, fix=f"report each config's runs apart, e.g. runs=[{','.join(map(str, paths))}] "
                                             "out=report-1, or train them again into separate out= folders")


def _check_same_training(runs: Runs, what: str, how: Callable[[Path, RunRecord], str | None]) -> None:
    """The first (lang, setup, variant) whose runs `how` tells apart, refused in one line naming one
    run of each kind and the runs of the first kind to report apart; None from `how` matches any."""
    for cell, members in _cells(runs):
        folder = _common_folder([path for path, _ in members])
        by_kind: dict[str, list[Path]] = {}
        for path, record in members:
            kind = how(path, record)
            if kind is not None:
                by_kind.setdefault(kind, []).append(path)
        if len(by_kind) > 1:
            found = ", ".join(f"{kind} in {_name(paths[0], folder)}" for kind, paths in sorted(by_kind.items()))
            kind, paths = min(by_kind.items())
            raise UserError(f"{len(members)} runs of {cell} trained in different {what}: {found}", path=folder,
                            fix=f"report each {what[:-1]}'s runs apart, e.g. runs=[{','.join(map(str, paths))}] "
                                f"out=report-{kind}")


def _cells(runs: Runs) -> list[tuple[str, list[tuple[Path, RunRecord]]]]:
    """The runs by (lang, setup, variant), in that order, each cell named `lang / setup[ / variant]`."""
    cells: dict[tuple[str, str, str], list[tuple[Path, RunRecord]]] = {}
    for path, record in runs:
        cells.setdefault((record.lang, record.setup, record.variant), []).append((path, record))
    return [(" / ".join(filter(None, cell)), members) for cell, members in sorted(cells.items())]


def _difference(role: str, members: list[tuple[Path, RunRecord]], folder: Path | None) -> str | None:
    """`role (source) <hash> in <run> vs <hash> in <run>` for the first run whose `role` differs
    from the first run recording it; None when all that recorded it agree."""
    recorded = [(path, record.inputs[role]) for path, record in members if record.inputs.get(role, {}).get("sha256")]
    if not recorded:
        return None
    first_path, first = recorded[0]
    for path, entry in recorded[1:]:
        if entry["sha256"] != first["sha256"]:
            other_source = "" if entry.get("source") == first.get("source") else f"({entry.get('source')}) "
            return (f"{role} ({first.get('source')}) {first['sha256'][:SHORT_HASH]} in {_name(first_path, folder)} "
                    f"vs {other_source}{entry['sha256'][:SHORT_HASH]} in {_name(path, folder)}")
    return None


def _common_folder(paths: list[Path]) -> Path | None:
    """The deepest folder holding all `paths` (the cell's folder); None when they share none."""
    try:
        common = os.path.commonpath([str(path) for path in paths])
    except ValueError:                  # absolute and relative paths mixed
        return None
    return Path(common) if common else None


def _name(path: Path, folder: Path | None) -> str:
    """A run named relative to its cell's folder (`seed0`), or in full."""
    return str(path.relative_to(folder)) if folder is not None and path != folder else str(path)


def code_sentence(results: pd.DataFrame) -> str:
    """One sentence naming the commits the runs of `results` (with `commit` and `dirty` columns)
    ran, with how many runs each, and the runs from a tree with uncommitted changes; "" when all
    ran one known commit from clean trees, or no run recorded either."""
    # a run scored in several languages (`data.eval_langs`) has rows in each; its setup names where it trained
    trained = results["setup"].map(lambda setup: trained_in(setup)[1])
    runs = results.assign(_run=trained.where(trained != "", results["lang"])) \
        .drop_duplicates(["_run", "setup", "variant", "seed"])
    commits = runs["commit"].fillna("unknown").map(lambda commit: commit[:SHORT_COMMIT])
    n_dirty, n_unknown = int(runs["dirty"].fillna(False).sum()), int(runs["dirty"].isna().sum())
    counts = commits.value_counts(sort=False).sort_index()
    if (len(counts) < 2 and not n_dirty) or runs["commit"].isna().all():
        return ""
    listed = ", ".join(f"{commit} ({counted(n, 'run')})" for commit, n in counts.items())
    opening = f"Runs of {len(counts)} code commits are pooled: {listed}" if len(counts) > 1 \
        else f"All {counted(len(runs), 'run')} ran commit {counts.index[0]}"
    if n_unknown == len(runs):
        return f"{opening}; whether their trees had uncommitted changes was not recorded."
    unknown = f" (not recorded for {counted(n_unknown, 'run')})" if n_unknown else ""
    return f"{opening}; {n_dirty or 'none'} ran from a tree with uncommitted changes{unknown}."


def unrecorded_note(runs: pd.DataFrame) -> str:
    """`inputs not recorded: N runs (...)` for the run directories (`Collected.runs`) whose inputs
    went unchecked because their records predate input hashes; "" when there are none (a run scored in
    several languages is one directory with a row per language)."""
    n = runs.loc[~runs["inputs_recorded"].astype(bool), "source"].nunique()
    return f"inputs not recorded: {counted(n, 'run')} (written before input hashes)" if n else ""

