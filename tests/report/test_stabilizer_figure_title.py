"""The σ panel of stabilizers_<setup>.png names the interval its cells print: the method(s) the
calibration chose per cell (on SICK, Bonett) with their lowest measured coverage, where its title
called every interval a bootstrap one."""
from __future__ import annotations

import numpy as np
import pandas as pd

from stability.report.figures import interval_title


def test_the_title_names_the_chosen_methods_and_their_lowest_coverage():
    cells = pd.DataFrame({"std_method": ["bonett", "bonett", "chi2", "too few seeds", "no world fitted"],
                          "std_low": [0.1, 0.2, 0.1, np.nan, np.nan],
                          "std_coverage": [0.95, 0.93, 0.94, 0.80, np.nan]})
    assert interval_title(cells, 0.05) == ("95% interval, Bonett or χ² per cell: measured coverage ≥ 93 %; "
                                           "none where too few seeds")


def test_without_a_calibration_the_intervals_are_the_percentile_bootstrap():
    cells = pd.DataFrame({"std_method": ["percentile", "percentile"], "std_low": [0.0, 0.1],
                          "std_coverage": [np.nan, np.nan]})
    assert interval_title(cells, 0.1) == "90% percentile bootstrap interval, coverage not measured"


def test_cells_without_an_interval_say_so():
    cells = pd.DataFrame({"std_method": ["too few seeds", "too few seeds"], "std_low": [np.nan, np.nan],
                          "std_coverage": [0.80, 0.85]})
    assert interval_title(cells, 0.05) == "no interval: too few seeds"
