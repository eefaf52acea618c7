"""`nli-stability generate [overrides]`: write a template test suite as a diagnostic set.

    nli-stability generate lang=fr suite=all n=200 seed=0 out=suites   # suites/fr-all-n200-seed0.jsonl

The items of the language's template suite(s), in the diagnostic format (idx, label,
sentence1, sentence2, the coarse category fields) plus `template` and `features`; see
`stability/conf/generate.yaml` for the keys and `--help` for what they mean.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Sequence

from omegaconf import DictConfig, OmegaConf

from stability.core.command import run_command
from stability.core.errors import UserError
from stability.core.schemas.generate import GenerateConfig
from stability.templates import generate_suite, write_diagnostic_jsonl
from stability.templates.suites import SUITES_DIR, check_suite


def suite_file(settings: GenerateConfig) -> Path:
    """`<out>/<lang>-<suite>-n<N>-seed<K>.jsonl`; `nall` when every combination is taken."""
    n = "all" if settings.n is None else settings.n
    return Path(settings.out) / f"{settings.lang.code}-{settings.suite}-n{n}-seed{settings.seed}.jsonl"


def suites_root(suites_dir: str | None) -> Path:
    """The folder of suites: `suites_dir` (a language of the user's own), else the shipped one."""
    return SUITES_DIR if suites_dir is None else Path(suites_dir).expanduser()


def check(configs: list[DictConfig]) -> None:
    """The suites exist (one line naming the language's suites otherwise)."""
    for cfg in configs:
        check_suite(cfg.lang.code, cfg.suite, suites_root(cfg.suites_dir))


def task(cfg: DictConfig) -> None:
    settings: GenerateConfig = OmegaConf.to_object(cfg)
    examples = generate_suite(cfg.lang.code, settings.suite, settings.n, settings.seed,
                              suites_root(settings.suites_dir))
    path = suite_file(settings)
    try:
        write_diagnostic_jsonl(examples, path)
    except OSError as err:
        raise UserError(f"cannot write the suite ({err.strerror})", path=path, fix="choose another out=") from None
    labels = Counter(example.label for example in examples)
    print(f"wrote {len(examples)} items of {len({e.template for e in examples})} templates "
          f"({labels[0]} entailment, {labels[1]} not_entailment) to {path}")


def main(argv: Sequence[str] | None = None) -> None:
    run_command("generate", task, argv, check=check)


if __name__ == "__main__":
    main()
