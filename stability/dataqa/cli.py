"""`nli-stability dataqa [overrides]`: is each translated file really in its language?

    nli-stability dataqa lang=fr files=[train_fr.jsonl,LiDiRus_fr.jsonl] out=qa/fr
    nli-stability dataqa lang=sv data.root=/data        # the language config's own files

The options and their defaults are `stability/conf/dataqa.yaml`, typed by
`stability.core.schemas.dataqa`; `--help` explains them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from omegaconf import DictConfig, OmegaConf

from stability.core.atomic import atomic_write_text
from stability.core.command import run_command
from stability.core.errors import UserError
from stability.core.languages import language_of
from stability.core.qaflags import FLAGGED_FILE, write_flags
from stability.core.schemas.dataqa import DataQAConfig
from stability.data.formats import read_examples
from stability.data.loading import language_source
from stability.dataqa.checks import InputFile, Options, role_from_file, run_qa
from stability.dataqa.markdown import render


def _configured_inputs(cfg: DictConfig) -> list[InputFile]:
    """The language config's own files, each in the role of its split (read with repeated idx,
    which the checks report instead of refusing)."""
    source = language_source(cfg)
    if source.root is not None:
        missing = [str(source.root / relative) for relative in source.files.values()
                   if not (source.root / relative).is_file()]
        if missing:
            raise UserError(f"missing {source.name} files: {', '.join(missing)}", path=source.root,
                            fix="put the files there, pass the right data.root, or name files=[...]")
    return [InputFile(path, split, read_examples(path, cfg.lang.code, unique_idx=False))
            for split, path in ((split, source.path(split)) for split in source.files)]


def _named_inputs(files: list[str], lang: str) -> list[InputFile]:
    """Files given by name, each in the role its content and name suggest."""
    inputs = []
    for path in map(Path, files):
        examples = read_examples(path, lang, unique_idx=False)
        inputs.append(InputFile(path, role_from_file(path, examples), examples))
    return inputs


def task(cfg: DictConfig) -> None:
    """Check the files, write the tables, the findings and the page into `out`."""
    settings: DataQAConfig = OmegaConf.to_object(cfg)
    facts = language_of(OmegaConf.to_container(cfg.lang, resolve=True))  # a user's own language too
    options = Options(settings.min_words, settings.min_confidence, settings.min_word_length, settings.allow,
                      settings.flag_names, settings.near_threshold,
                      Path(settings.lid_model) if settings.lid_model else None)
    inputs = _named_inputs(settings.files, facts.code) if settings.files else _configured_inputs(cfg)
    result = run_qa(inputs, facts, options)
    out = Path(settings.out)
    for table, name in ((result.files, "dataqa.csv"), (result.categories, "dataqa_categories.csv"),
                        (result.leaks, "leaks.csv")):
        atomic_write_text(out / name, table.to_csv(index=False))
    write_flags(out / FLAGGED_FILE, result.flags)
    atomic_write_text(out / "dataqa.md", render(result, facts, options))
    print(f"checked {len(result.files)} files ({int(result.files['n_items'].sum())} pairs): "
          f"{len(result.flags)} findings; wrote dataqa.csv, dataqa_categories.csv, leaks.csv, {FLAGGED_FILE} and "
          f"dataqa.md to {out}")


def main(argv: Sequence[str] | None = None) -> None:
    run_command("dataqa", task, argv)


if __name__ == "__main__":
    main()
