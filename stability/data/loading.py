"""Assemble one run's data from its typed config: train (the language's split or `data.train_set`,
plus MNLI or `data.mix` pairs), validation (the language's or `data.validation_set`), diagnostic,
the other languages' diagnostic sets (`data.eval_langs`) and the extra evaluation sets, each a
`datasets.Dataset` of records (`data.container`). `load_run_data` gives the same as `Example`s."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from datasets import Dataset, concatenate_datasets

from stability.core.errors import UserError
from stability.core.languages import language
from stability.core.records import Example
from stability.data.container import first, to_dataset, to_examples
from stability.data.formats import read_examples
from stability.data.hub import load_nli_set
from stability.data.mixing import mix_addition
from stability.data.mnli import mnli_addition
from stability.data.sources import BUILTIN_DIR, DataSettings, DownloadSpec, FileSource, downloads_dir

SPLITS = ("train", "validation", "diagnostic")


@dataclass
class RunDatasets:
    """The datasets of one run; `n_added` counts the mixed-in pairs (MNLI or data.mix), `extra`
    holds the extra evaluation sets by name, `eval_diagnostics` the other languages' diagnostic
    sets (`data.eval_langs`) by language code."""

    train: Dataset
    validation: Dataset
    diagnostic: Dataset
    extra: dict[str, Dataset] = field(default_factory=dict)
    n_added: int = 0
    eval_diagnostics: dict[str, Dataset] = field(default_factory=dict)


@dataclass
class RunData:
    """The examples of one run (`RunDatasets` as `Example`s)."""

    train: list[Example]
    validation: list[Example]
    diagnostic: list[Example]
    n_added: int = 0
    extra: dict[str, list[Example]] = field(default_factory=dict)


def language_source(settings: DataSettings) -> FileSource:
    """The file source of `settings.lang`, honouring data.source (files | builtin) and data.root."""
    lang = settings.lang
    return _source(settings, lang.code, lang.name, lang.files, DownloadSpec.from_config(lang.download))


def eval_language_source(settings: DataSettings, code: str) -> FileSource:
    """The file source of the `data.eval_langs` language `code`: its shipped config's files
    (`stability/conf/lang/<code>.yaml`), read as the run's own language's are (data.source, data.root)."""
    facts = language(code)
    download = facts.download
    spec = DownloadSpec(download.get("base_url"), dict(download.get("archives") or {}),
                        dict(download.get("sha256") or {}))
    return _source(settings, code, facts.name, facts.files, spec,
                   key=f"files.{{split}} of stability/conf/lang/{code}.yaml")


def _source(settings: DataSettings, code: str, name: str, files: Mapping[str, str], download: DownloadSpec,
            key: str = FileSource.key) -> FileSource:
    data = settings.data
    if data.source == "builtin":
        return FileSource(f"built-in {code}", {split: f"{code}/{split}.jsonl" for split in SPLITS}, BUILTIN_DIR,
                          Path(), DownloadSpec(), key)
    return FileSource(name=name, files=dict(files), root=Path(data.root).expanduser() if data.root else None,
                      cache_dir=downloads_dir(settings.paths), download=download, key=key)


def take_first(examples: list[Example], limit: int | None) -> list[Example]:
    """The first `limit` examples (all when None): data.max_*_samples cut files this way
    (`container.first` cuts a Dataset the same way)."""
    return examples if limit is None else examples[:limit]


def read_diagnostic(settings: DataSettings, source: FileSource) -> list[Example]:
    """data.diagnostic: the language's file (null), a generated test suite, or a file path.
    Training and probing both read it here, so they score the same items."""
    choice, code = settings.data.diagnostic, settings.lang.code
    if choice == "generated":
        from stability.templates import generate_suite

        suite = settings.data.suite
        return generate_suite(code, suite.name, suite.n, suite.seed)
    return diagnostic_examples(source.path("diagnostic") if choice is None else Path(choice).expanduser(), code)


def diagnostic_examples(path: Path, code: str) -> list[Example]:
    """The items of a diagnostic file, refused when it has no category fields (no diagnostic set)."""
    examples = read_examples(path, code)
    if not any(example.categories for example in examples):
        raise UserError("the diagnostic file has no category fields", path=path,
                        fix="point lang.files.diagnostic (or data.diagnostic) at a diagnostic set "
                            "(LiDiRus / AX-b, or a generated suite)")
    return examples


def own_train(settings: DataSettings, source: FileSource) -> Dataset:
    """The run's own training pairs: the language's train file, or data.train_set when it has a path."""
    train_set, code = settings.data.train_set, settings.lang.code
    if train_set.path is not None:
        return load_nli_set(train_set, code)
    return to_dataset(read_examples(source.path("train"), code))


def own_validation(settings: DataSettings, source: FileSource) -> Dataset:
    """The run's validation pairs: the language's validation file, or data.validation_set when it has a path."""
    validation_set, code = settings.data.validation_set, settings.lang.code
    if validation_set.path is not None:
        return load_nli_set(validation_set, code, "data.validation_set")
    return to_dataset(read_examples(source.path("validation"), code))


def load_run_datasets(settings: DataSettings) -> RunDatasets:
    """Read the splits, cut them for quick runs, mix in MNLI or data.mix, load the extra sets."""
    source, data, code = language_source(settings), settings.data, settings.lang.code
    train = first(own_train(settings, source), data.max_train_samples)
    validation = first(own_validation(settings, source), data.max_eval_samples)
    diagnostic = first(to_dataset(read_diagnostic(settings, source)), data.max_eval_samples)
    mnli = mnli_addition(settings)
    added = to_dataset(mnli) if mnli else mix_addition(settings)
    extra = {spec.name: first(load_nli_set(spec, code, f"data.extra_eval.{number}"), data.max_eval_samples)
             for number, spec in enumerate(data.extra_eval)}
    scored = {other: first(to_dataset(diagnostic_examples(eval_language_source(settings, other).path("diagnostic"),
                                                          other)), data.max_eval_samples)
              for other in data.eval_langs}
    return RunDatasets(train=train if added is None else concatenate_datasets([train, added]),
                       validation=validation, diagnostic=diagnostic, extra=extra,
                       n_added=0 if added is None else len(added), eval_diagnostics=scored)


def load_run_data(settings: DataSettings) -> RunData:
    """The run's data as `Example`s, for code that reads records one by one."""
    sets = load_run_datasets(settings)
    return RunData(train=to_examples(sets.train), validation=to_examples(sets.validation),
                   diagnostic=to_examples(sets.diagnostic), n_added=sets.n_added,
                   extra={name: to_examples(dataset) for name, dataset in sets.extra.items()})
