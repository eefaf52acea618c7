"""`a..b` ranges expand to sweeps; paths with '..' are left alone."""
from __future__ import annotations

import pytest

from stability.core.config import CONF_DIR
from stability.core.errors import UserError
from stability.core.overrides import expand_ranges, prepare_argv


@pytest.mark.parametrize("given, expected", [
    ("seed=0..5", "seed=0,1,2,3,4,5"),
    ("seed=2..2", "seed=2"),
    ("seed=0..1,7", "seed=0,1,7"),
    ("seed=-1..1", "seed=-1,0,1"),
    ("data.root=../corpora/data", "data.root=../corpora/data"),
    ("data.root=/a/../b", "data.root=/a/../b"),
    ("lang=fr,de", "lang=fr,de"),
])
def test_expand_ranges(given, expected):
    assert expand_ranges(given) == expected


def test_sweeps_turn_on_multirun_once():
    assert prepare_argv(["seed=0..1", "lang=fr,de"], CONF_DIR) == \
        ["--multirun", "seed=0,1", "lang=fr,de"]
    assert prepare_argv(["-m", "seed=0..1"], CONF_DIR) == ["-m", "seed=0,1"]
    assert prepare_argv(["seed=3", "lang=de"], CONF_DIR) == ["seed=3", "lang=de"]


def test_unknown_choice_in_a_sweep_is_named():
    with pytest.raises(UserError, match="unknown lang 'dk'"):
        prepare_argv(["lang=fr,dk"], CONF_DIR)
