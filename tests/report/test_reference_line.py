"""A `reference=` that names no variant of the runs is one line on the console naming the
variants there are, and the reference it suggests works as typed."""
from __future__ import annotations

import re

from test_stabilizers import write_runs

from stability.report.cli import main

FAST = ["bootstrap=0", "figures=false", "calibration_sims=0"]   # none of them is what these tests check


def test_a_reference_naming_no_variant_names_the_variants_on_the_console(tmp_path, capsys):
    root = write_runs(tmp_path / "runs", ("trainer-mosbach", "trainer-llrd"), ("fr",))
    out = tmp_path / "report"
    main([f"runs={root}", f"out={out}", *FAST, "reference=trainer-mosbch"])
    warnings = [line for line in capsys.readouterr().err.splitlines() if "reference=" in line]
    assert warnings == ["warning: reference=trainer-mosbch matches no variant of these runs, so no method is "
                        "compared: the variants are trainer-llrd, trainer-mosbach (pass one, e.g. "
                        "reference=trainer-llrd)"]
    assert not (out / "stabilizers.csv").exists()
    suggested = re.search(r"e\.g\. (reference=\S+)\)$", warnings[0]).group(1)
    main([f"runs={root}", f"out={out}", *FAST, suggested])
    assert "matches no variant" not in capsys.readouterr().err
    assert (out / "stabilizers.csv").is_file()


def test_without_two_variants_the_line_says_so(tmp_path, capsys):
    root = write_runs(tmp_path / "runs", ("trainer-mosbach",), ("fr",))
    main([f"runs={root}", f"out={tmp_path / 'report'}", *FAST, "reference=trainer-llrd"])
    assert ("warning: reference=trainer-llrd matches no variant of these runs, so no method is compared: "
            "no (language, setup) has two or more variants") in capsys.readouterr().err.splitlines()
