"""The diagnostic items a finished run was scored on, read again from the run's own config.

Predictions keep each item's idx, label and categories, not its text; what the items have in
common beyond that (a shared sentence, a template) is read here, from the same file or generated
suite and with the same cut (`data.max_eval_samples`) the run used, from local copies only (the
run's `data.root` or the download cache): a report never downloads. The report reaches this
through its command (`report/cli.py`), since the report itself does not read data.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pandas as pd
from omegaconf.errors import OmegaConfBaseException

from stability.core.errors import UserError
from stability.core.runrecord import RunDir
from stability.data.loading import (diagnostic_examples, eval_language_source, language_source, read_diagnostic,
                                    take_first)
from stability.data.sources import DownloadSpec


def run_diagnostic_records(run_path: Path, lang: str | None = None) -> pd.DataFrame:
    """One row per diagnostic item of the run (the record fields: idx, premise, hypothesis, label,
    lang, source, categories, coarse, and template and features for test-suite items), in its own
    language or (`lang`) one of its `data.eval_langs`. UserError when the run has no config.yaml or
    its diagnostic set cannot be read here."""
    config = RunDir(run_path).read_config()
    try:
        other = lang is not None and lang != config.lang.code
        source = eval_language_source(config, lang) if other else language_source(config)
        local = replace(source, download=DownloadSpec(sha256=source.download.sha256))
        examples = diagnostic_examples(local.path("diagnostic"), lang) if other else read_diagnostic(config, local)
        examples = take_first(examples, config.data.max_eval_samples)
    except OmegaConfBaseException as err:   # a run made by an older version lacks a key read here
        raise UserError(f"{run_path}: its config.yaml does not say where its diagnostic set is "
                        f"({type(err).__name__}: {str(err).splitlines()[0]})",
                        fix="run it again with this version (force=true), or pass cluster=none") from None
    return pd.DataFrame([example.to_json() for example in examples])
