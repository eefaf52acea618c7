"""Setup names: what training builds, the report parses back."""
from __future__ import annotations

import math

import pytest

from stability.core.setups import n_added_from_setup, setup_family, setup_name


@pytest.mark.parametrize("n, feature, presence, name, n_added, family", [
    (0, None, None, "rte", 0, "rte"),
    (10000, None, None, "rte+mnli10000", 10000, "rte"),
    ("all", None, None, "rte+mnli_all", math.nan, "rte"),
    (10000, "Negation", 25, "rte+mnli10000+Negation25", 10000, "rte+Negation25"),
    (40, "Intervals/Numbers", 50.0, "rte+mnli40+Intervals-Numbers50", 40, "rte+Intervals-Numbers50"),
])
def test_built_names_parse_back(n, feature, presence, name, n_added, family):
    assert setup_name(n, feature, presence) == name
    parsed = n_added_from_setup(name)
    assert (math.isnan(parsed) and math.isnan(n_added)) or parsed == n_added
    assert setup_family(name) == family


def test_names_outside_the_convention_say_nothing_about_size():
    assert math.isnan(n_added_from_setup("my-own-setup"))
    assert setup_family("my-own-setup") == "my-own-setup"
