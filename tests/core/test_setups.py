"""Setup names: what training builds, the report parses back."""
from __future__ import annotations

import math

import pytest

from stability.core.setups import diagnostic_tag, n_added_from_setup, setup_family, setup_name


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


def test_runs_on_another_diagnostic_set_get_a_tagged_folder():
    from stability.core.config import compose_config

    assert diagnostic_tag(None) == ""
    assert diagnostic_tag("generated", "logic", 50, 0) == "@suite-logic-n50-seed0"
    assert diagnostic_tag("/data/my suites/suite_fr.jsonl") == "@suite_fr"
    plain = compose_config(["experiment=smoke"], return_hydra_config=True)
    scored = compose_config(["experiment=smoke", "data.diagnostic=generated", "data.suite.n=4"],
                            return_hydra_config=True)
    assert plain.hydra.sweep.dir == "outputs/smoke"
    assert scored.hydra.sweep.dir == "outputs/smoke@suite-all-n4-seed0"
    assert scored.hydra.run.dir == "outputs/smoke@suite-all-n4-seed0/en/rte/seed0"
