"""The probe's three splits, read through the training data loaders.

- fit: the language's NLI training pairs (plus validation when the test split picks L2);
- held-out: the split whose accuracy alone picks the L2 strength;
- test: the diagnostic set (data.diagnostic, as in training), where accuracies are reported.

The probe's labels come from the annotator (or the diagnostic gold categories), not from
the NLI labels, so an NLI test split serves as held-out data. `probe.heldout=auto` uses it
when the language configures one (the paper's French/German/Swedish release) and falls
back to validation otherwise (English RTE, Russian TERRa and the built-in data have no
test split configured); the probe then trains on train alone. `data.max_train_samples`
cuts the training split and `data.max_eval_samples` the others, as in training.
"""
from __future__ import annotations

from dataclasses import dataclass

from omegaconf import DictConfig

from stability.core.records import Example
from stability.data.formats import read_examples
from stability.data.loading import language_source, read_diagnostic, take_first
from stability.data.sources import FileSource


@dataclass(frozen=True)
class ProbeSplits:
    """Examples per split, and which data files each one came from (for the report)."""

    fit: list[Example]
    heldout: list[Example]
    test: list[Example]
    fit_from: tuple[str, ...]
    heldout_from: str

    def by_name(self) -> dict[str, list[Example]]:
        return {"fit": self.fit, "heldout": self.heldout, "test": self.test}


def load_diagnostic(cfg: DictConfig, source: FileSource | None = None) -> list[Example]:
    """The diagnostic set alone (labels=gold needs no NLI split): the one data.diagnostic
    names, cut as in training."""
    return take_first(read_diagnostic(cfg, source or language_source(cfg)), cfg.data.max_eval_samples)


def load_probe_splits(cfg: DictConfig) -> ProbeSplits:
    """Read the splits `cfg.probe.heldout` asks for from the language's configured files."""
    choice = str(cfg.probe.heldout)
    source = language_source(cfg)
    if choice == "auto":
        choice = "test" if source.files.get("test") else "validation"

    def read(split: str, limit: object) -> list[Example]:
        return take_first(read_examples(source.path(split), cfg.lang.code), limit)

    train = read("train", cfg.data.max_train_samples)
    validation = read("validation", cfg.data.max_eval_samples)
    diagnostic = load_diagnostic(cfg, source)
    if choice == "test":
        return ProbeSplits(train + validation, read("test", cfg.data.max_eval_samples), diagnostic,
                           ("train", "validation"), "test")
    return ProbeSplits(train, validation, diagnostic, ("train",), "validation")
