"""σ's interval never claims a σ the MCCs cannot have: a score in [−1, 1] has σ ≤ 1 (Popoviciu), so a
bound above 1 is cut to 1 and the σ column's header says so; the header names what its rows say when
no row has an interval; a cell without an interval is worded one way on every page."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stability.report.calibration import SIGMA_CAP, SeedHalf, std_bounds, too_few
from stability.report.sections.stabilizers import NOTHING_TO_SIMULATE, _Labels
from stability.statistics.intervals import std_interval_of

# five MCCs as far apart as MCCs go: sample σ 1.10, and χ²'s upper bound at 95 % far above 1
SPLIT = np.array([-1.0, -1.0, 1.0, 1.0, 1.0])


def _choice(method: str) -> pd.Series:
    return pd.Series({"method": method, "usable": True, "coverage": 0.95})


@pytest.mark.parametrize("method", ["chi2", "bonett"])
def test_bounds_above_the_largest_possible_sigma_are_cut_to_it(method):
    low, high = std_interval_of(SPLIT, method, 0.95)
    assert high > 1.5
    assert std_bounds(_choice(method), True, SPLIT, bootstrap=0, confidence=0.95, random_state=0) == (
        pytest.approx(min(low, 1.0)), SIGMA_CAP)
    narrow = np.array([0.1, 0.2, 0.3, 0.25, 0.15])
    assert std_bounds(_choice(method), True, narrow, bootstrap=0, confidence=0.95, random_state=0) == \
        pytest.approx(std_interval_of(narrow, method, 0.95))


def _overall(methods: list[str], high: float = 0.5) -> pd.DataFrame:
    return pd.DataFrame({"std_method": methods, "std_coverage": [0.95] * len(methods), "std_high": [high] * len(methods)})


def test_the_sigma_header_says_what_its_rows_say():
    assert _Labels(_overall(["no world fitted"] * 2), "std", True).header == f", {NOTHING_TO_SIMULATE}"
    assert _Labels(_overall(["too few seeds"]), "std", True).header == ", no method reaches 90 % measured coverage"
    both = _Labels(_overall(["too few seeds", "no world fitted"]), "std", True).header
    assert both == f", no method reaches 90 % measured coverage or {NOTHING_TO_SIMULATE}"
    cut = _Labels(_overall(["chi2"], high=SIGMA_CAP), "std", True).header
    assert cut == ", χ²: measured coverage ≥ 95 %; bounds cut at 1, the largest σ of MCCs in [−1, 1]"


def test_too_few_seeds_reads_the_same_in_every_table():
    assert too_few(0.734) == "too few seeds (measured coverage 73 %)"
    assert SeedHalf("seed half", 0.734).interval(0.31, 0.1, 0.5) == "0.310; too few seeds (measured coverage 73 %)"
    row = _overall(["too few seeds"]).assign(std_coverage=0.734).iloc[0]
    assert _Labels(_overall(["too few seeds"]), "std", True).cell(row, "0.31", "[0.1, 0.5]") == \
        "0.31; too few seeds (measured coverage 73 %)"


def test_a_method_whose_every_run_failed_has_no_world_fitted_as_the_docs_say():
    """reading-the-report.md, `std_method`: `no world fitted` where the non-failed runs have no spread, a
    method whose every run failed among them; the other method's cell is calibrated."""
    from stability.report.calibration import UNFITTED, calibrate, interval_method

    rows = [{"lang": "fr", "setup": "rte", "variant": variant, "seed": seed, "level": "all", "category": "overall",
             "mcc": score, "n_items": 100}
            for variant, scores in (("", [0.31, 0.25, 0.4]), ("mixout", [0.0, 0.0, 0.0])) for seed, score in
            enumerate(scores)]
    failed = pd.DataFrame([{"lang": "fr", "setup": "rte", "variant": variant, "seed": seed, "failed": variant != ""}
                           for variant in ("", "mixout") for seed in range(3)])
    calibration = calibrate(pd.DataFrame(rows), failed, references={}, compare=None, sims=50, confidence=0.95,
                            aso_iterations=1, random_state=0, bootstrap=0)
    chosen = {name: calibration.choice("fr", name, "", "all", "overall", "σ") for name in ("rte", "rte/mixout")}
    assert chosen["rte"] is not None and chosen["rte/mixout"] is None
    assert interval_method(chosen["rte/mixout"], True)[0] == UNFITTED == "no world fitted"
