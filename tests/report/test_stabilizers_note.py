"""A sweep of several variants, none the reference (e.g. `trainer.optimizer=adamw,bertadam` with the default
`reference=trainer-jiant-superglue`): the stabilisers section is one note naming the variants and the
`reference=` to pass, and passing it as printed gives the comparison."""
from __future__ import annotations

import re

from stability.report.cli import main
from test_stabilizers import write_runs

VARIANTS = ("", "opt-bertadam")   # adamw is the default optimizer: no item


def _section(out) -> str:
    text = (out / "report.md").read_text(encoding="utf-8")
    return text[text.index("## Which method stabilises what"):].split("\n## ", 1)[0]


def test_variants_without_the_default_reference_get_a_note_naming_them(tmp_path):
    root = write_runs(tmp_path / "runs", VARIANTS, ("fr", "sv"))
    out = tmp_path / "report"
    main([f"runs={root}", f"out={out}", "bootstrap=0", "figures=false", "calibration_sims=0"])
    assert not (out / "stabilizers.csv").exists()
    section = _section(out)
    assert "`reference=trainer-jiant-superglue` (the default) matches no variant of these runs" in section
    for lang in ("fr", "sv"):
        assert f"{lang} · rte: `''` (the experiment as configured), `opt-bertadam`" in section
    passed = re.search(r"e\.g\. `(reference=[^`]+)`", section).group(1)
    assert passed == "reference=opt-bertadam"
    assert "`reference=''` makes the runs of the experiment as configured the reference" in section

    again = tmp_path / "report-with-reference"
    main([f"runs={root}", f"out={again}", "bootstrap=0", "figures=false", "calibration_sims=0", passed])
    assert "**fr · rte**" in _section(again) and (again / "stabilizers.csv").is_file()
