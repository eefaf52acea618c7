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


@pytest.mark.parametrize("path", ["/data/café", "/data/Отчёт 2", '/data/say "hi"/é'])
def test_a_value_hydra_takes_only_quoted_gets_a_fix_that_quotes_it_and_parses(path):
    """An unquoted non-ASCII `out=` is a token error: the fix quotes it for Hydra inside the shell's
    quotes, and that argument, as the shell passes it, gives the path."""
    import shlex

    from stability.core.jobs import job_configs

    with pytest.raises(UserError) as raised:
        prepare_argv([f"out={path}"], CONF_DIR)
    fix = str(raised.value).split("(fix: quote the value for Hydra, inside the shell's quotes: ", 1)[1][:-1]
    (argument,) = shlex.split(fix)
    assert job_configs([argument, "--cfg", "job"])[0].out == path


@pytest.mark.parametrize("flag", [["--cfg", "job"], ["-c", "job"], ["--cfg=job"], ["--resolve", "--cfg", "job"]])
def test_printing_a_sweeps_config_is_one_line_naming_the_swept_keys(flag):
    with pytest.raises(UserError, match=r"prints one job's config, and this command line sweeps seed, lang "
                                        r"\(fix: give each swept key one value .* nli-stability plan"):
        prepare_argv(["experiment=smoke", "seed=0..4", "lang=en,fr", *flag], CONF_DIR)
    assert prepare_argv(["experiment=smoke", "seed=0", *flag], CONF_DIR) == ["experiment=smoke", "seed=0", *flag]
