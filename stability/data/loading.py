"""Assemble one run's data (train / validation / diagnostic) from the Hydra config."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from omegaconf import DictConfig

from stability.core.errors import UserError
from stability.core.records import Example
from stability.data.formats import read_examples
from stability.data.mnli import mnli_addition
from stability.data.sources import BUILTIN_DIR, DownloadSpec, FileSource

SPLITS = ("train", "validation", "diagnostic")


@dataclass
class RunData:
    """The examples of one run; `n_added` counts the mixed-in MNLI pairs."""

    train: list[Example]
    validation: list[Example]
    diagnostic: list[Example]
    n_added: int = 0


def language_source(cfg: DictConfig) -> FileSource:
    """The file source of `cfg.lang`, honouring data.source (files | builtin) and data.root."""
    code = cfg.lang.code
    if cfg.data.source == "builtin":
        files = {split: f"{code}/{split}.jsonl" for split in SPLITS}
        return FileSource(f"built-in {code}", files, BUILTIN_DIR, Path(), DownloadSpec())
    if cfg.data.source != "files":
        raise UserError(f"unknown data.source '{cfg.data.source}'", fix="use data.source=files or builtin")
    return FileSource(
        name=cfg.lang.name,
        files=dict(cfg.lang.files),
        root=Path(cfg.data.root).expanduser() if cfg.data.root else None,
        cache_dir=Path(cfg.paths.cache_dir).expanduser() / "downloads",
        download=DownloadSpec.from_config(cfg.lang.download),
    )


def take_first(examples: list[Example], limit: int | None) -> list[Example]:
    """The first `limit` examples (all when None): data.max_*_samples cut files this way."""
    return examples if limit is None else examples[: int(limit)]


def read_diagnostic(cfg: DictConfig, source: FileSource) -> list[Example]:
    """data.diagnostic: the language's file (null), a generated test suite, or a file path.
    Training and probing both read it here, so they score the same items."""
    choice = cfg.data.get("diagnostic")
    if choice == "generated":
        from stability.templates import generate_suite

        suite = cfg.data.suite
        return generate_suite(cfg.lang.code, suite.name, suite.n, suite.seed)
    path = source.path("diagnostic") if choice is None else Path(str(choice)).expanduser()
    examples = read_examples(path, cfg.lang.code)
    if not any(example.categories for example in examples):
        raise UserError("the diagnostic file has no category fields", path=path,
                        fix="point lang.files.diagnostic (or data.diagnostic) at a diagnostic set "
                            "(LiDiRus / AX-b, or a generated suite)")
    return examples


def load_run_data(cfg: DictConfig) -> RunData:
    """Read the language's splits, cut them for quick runs, and mix in MNLI when asked."""
    source = language_source(cfg)
    code = cfg.lang.code
    train = take_first(read_examples(source.path("train"), code), cfg.data.max_train_samples)
    validation = take_first(read_examples(source.path("validation"), code), cfg.data.max_eval_samples)
    diagnostic = take_first(read_diagnostic(cfg, source), cfg.data.max_eval_samples)
    added = mnli_addition(cfg)
    return RunData(train=train + added, validation=validation, diagnostic=diagnostic,
                   n_added=len(added))
