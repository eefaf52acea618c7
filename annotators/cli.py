"""`nli-stability annotate [overrides]` (= `python -m annotators`): annotate files, measure
feature shares, score the rules against gold diagnostic categories.

    nli-stability annotate lang=en files=[RTE/train.jsonl] out=features/en
    nli-stability annotate action=stats lang=en files=[RTE/train.jsonl,MNLI/train.tsv]
    nli-stability annotate action=evaluate lang=fr files=[French/diagnostics/LiDiRus_fr.jsonl]

Keys and defaults: `stability/conf/annotate.yaml` (typed by `stability.core.schemas.annotate`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from omegaconf import DictConfig, OmegaConf

from annotators.api import annotate
from annotators.evaluate import agreement
from annotators.features import FeatureSet
from annotators.stats import feature_share
from annotators.tables import to_markdown, to_text
from stability.core.atomic import atomic_write_text, jsonl_text
from stability.core.command import run_command
from stability.core.errors import UserError
from stability.core.schemas.annotate import AnnotateConfig
from stability.core.records import Example
from stability.data.formats import read_examples


def _column_names(paths: Sequence[Path]) -> list[str]:
    """File stems, prefixed by the parent folder where two inputs share a stem."""
    stems = [path.stem for path in paths]
    return [f"{path.parent.name}/{path.stem}" if stems.count(path.stem) > 1 else path.stem
            for path in paths]


def _write(path: Path, text: str) -> None:
    try:
        atomic_write_text(path, text)
    except OSError as err:
        raise UserError(f"cannot write ({err.strerror})", path=path, fix="choose a writable out=") from None


@dataclass(frozen=True)
class _Annotator:
    """The language, annotator settings and cache choice every action reads and annotates with."""

    lang: str
    settings: DictConfig
    cache: bool

    def read(self, path: Path) -> list[Example]:
        return read_examples(path, self.lang)

    def features(self, examples: list[Example]) -> list[FeatureSet]:
        return annotate(examples, self.lang, self.settings, use_cache=self.cache)


def _annotate(annotator: _Annotator, paths: list[Path], out: Path) -> None:
    for name, path in zip(_column_names(paths), paths):
        examples = annotator.read(path)
        rows = ({**example.to_json(), **fs.to_json()} for example, fs in zip(examples, annotator.features(examples)))
        target = out / f"{name}.features.jsonl"
        _write(target, jsonl_text(rows))
        print(f"wrote the features of {len(examples)} pairs to {target}")


def _stats(annotator: _Annotator, paths: list[Path], out: Path) -> None:
    table = feature_share({name: annotator.features(annotator.read(path))
                           for name, path in zip(_column_names(paths), paths)})
    _write(out / "feature_share.csv", table.to_csv(index=False))
    _write(out / "feature_share.md", to_markdown(table))
    print(to_text(table), end="")


def _evaluate(annotator: _Annotator, paths: list[Path], out: Path) -> None:
    (path,) = paths
    examples = annotator.read(path)
    if not any(example.categories for example in examples):
        raise UserError("no item carries gold categories", path=path,
                        fix="pass a diagnostic file (with logic / lexical-semantics / ... fields)")
    table = agreement(examples, annotator.features(examples))
    _write(out / "agreement.csv", table.to_csv(index=False))
    print(to_text(table), end="")


_ACTIONS: dict[str, Callable[[_Annotator, list[Path], Path], None]] = {
    "annotate": _annotate, "stats": _stats, "evaluate": _evaluate}


def task(cfg: DictConfig) -> None:
    settings: AnnotateConfig = OmegaConf.to_object(cfg)
    annotator = _Annotator(cfg.lang.code, cfg.annotator, settings.cache)
    _ACTIONS[settings.action](annotator, [Path(name) for name in settings.files], Path(settings.out))


def main(argv: Sequence[str] | None = None) -> None:
    run_command("annotate", task, argv)


if __name__ == "__main__":
    main()
