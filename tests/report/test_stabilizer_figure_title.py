"""The σ panel of stabilizers_<setup>.png names the interval its cells print: the method the
calibration chose per cell (on SICK, Bonett), which its title called a bootstrap interval."""
from __future__ import annotations

import pandas as pd

from stability.report.figures import spread_title


def test_the_title_names_the_chosen_methods_in_cell_order():
    cells = pd.DataFrame({"std_method": ["bonett", "bonett", "chi2", "too few seeds", "no world fitted"]})
    assert spread_title(cells, 0.05) == "σ of MCC over seeds [95% interval: Bonett, χ²]"


def test_without_a_calibration_the_intervals_are_the_percentile_bootstrap():
    cells = pd.DataFrame({"std_method": ["percentile", "percentile"]})
    assert spread_title(cells, 0.1) == "σ of MCC over seeds [90% interval: percentile bootstrap]"


def test_cells_without_an_interval_say_so():
    cells = pd.DataFrame({"std_method": ["too few seeds", "no world fitted"]})
    assert spread_title(cells, 0.05) == "σ of MCC over seeds [no interval]"
