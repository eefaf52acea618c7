"""Probing reads the diagnostic set the way training does: data.diagnostic is honoured."""
from __future__ import annotations

from probing.run import probe_inputs, probe_plan, run_probing
from probing.settings import probe_settings
from stability.core.config import PROBE_CONFIG_NAME, compose_config
from stability.core.probetable import read_probing_table
from stability.templates import generate_suite


def test_a_generated_suite_is_what_probing_scores(small_encoder, tmp_path):
    model, tokenizer = small_encoder
    model.save_pretrained(tmp_path / "encoder")
    tokenizer.save_pretrained(tmp_path / "encoder")
    cfg = compose_config([f"model.name={tmp_path / 'encoder'}", "data.source=builtin",
                          "data.diagnostic=generated", "data.suite.name=logic", "data.suite.n=2",
                          "probe.tasks=[Logic]", "probe.bootstrap=0", f"out={tmp_path / 'probing'}"],
                         config_name=PROBE_CONFIG_NAME)
    suite = generate_suite("en", "logic", 2, 0)
    table = read_probing_table(run_probing(*probe_plan(cfg, [])) / "probing.csv")
    assert (table["n_test"] == len(suite)).all() and len(suite) != 83   # not the built-in set's 83
    assert probe_inputs(cfg, probe_settings(cfg)).examples["test"] == suite
