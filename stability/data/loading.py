"""Assemble one run's data (train / validation / diagnostic) from its typed config."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stability.core.errors import UserError
from stability.core.records import Example
from stability.data.formats import read_examples
from stability.data.mnli import mnli_addition
from stability.data.sources import BUILTIN_DIR, DataSettings, DownloadSpec, FileSource, downloads_dir

SPLITS = ("train", "validation", "diagnostic")


@dataclass
class RunData:
    """The examples of one run; `n_added` counts the mixed-in MNLI pairs."""

    train: list[Example]
    validation: list[Example]
    diagnostic: list[Example]
    n_added: int = 0


def language_source(settings: DataSettings) -> FileSource:
    """The file source of `settings.lang`, honouring data.source (files | builtin) and data.root."""
    lang, data = settings.lang, settings.data
    if data.source == "builtin":
        files = {split: f"{lang.code}/{split}.jsonl" for split in SPLITS}
        return FileSource(f"built-in {lang.code}", files, BUILTIN_DIR, Path(), DownloadSpec())
    return FileSource(
        name=lang.name,
        files=dict(lang.files),
        root=Path(data.root).expanduser() if data.root else None,
        cache_dir=downloads_dir(settings.paths),
        download=DownloadSpec.from_config(lang.download),
    )


def take_first(examples: list[Example], limit: int | None) -> list[Example]:
    """The first `limit` examples (all when None): data.max_*_samples cut files this way."""
    return examples if limit is None else examples[:limit]


def read_diagnostic(settings: DataSettings, source: FileSource) -> list[Example]:
    """data.diagnostic: the language's file (null), a generated test suite, or a file path.
    Training and probing both read it here, so they score the same items."""
    choice, code = settings.data.diagnostic, settings.lang.code
    if choice == "generated":
        from stability.templates import generate_suite

        suite = settings.data.suite
        return generate_suite(code, suite.name, suite.n, suite.seed)
    path = source.path("diagnostic") if choice is None else Path(choice).expanduser()
    examples = read_examples(path, code)
    if not any(example.categories for example in examples):
        raise UserError("the diagnostic file has no category fields", path=path,
                        fix="point lang.files.diagnostic (or data.diagnostic) at a diagnostic set "
                            "(LiDiRus / AX-b, or a generated suite)")
    return examples


def load_run_data(settings: DataSettings) -> RunData:
    """Read the language's splits, cut them for quick runs, and mix in MNLI when asked."""
    source, data, code = language_source(settings), settings.data, settings.lang.code
    train = take_first(read_examples(source.path("train"), code), data.max_train_samples)
    validation = take_first(read_examples(source.path("validation"), code), data.max_eval_samples)
    diagnostic = take_first(read_diagnostic(settings, source), data.max_eval_samples)
    added = mnli_addition(settings)
    return RunData(train=train + added, validation=validation, diagnostic=diagnostic,
                   n_added=len(added))
