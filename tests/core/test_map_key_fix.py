"""A key added to a free-form map (a dataset's columns or labels) without `+` is refused with a fix that
works when typed as printed, in a shell: the whole override with a `+`, quoted where it holds braces,
commas or spaces (it was cut at the last space: "(fix: add it with pair_ID})")."""
from __future__ import annotations

import re
import subprocess

import pytest

SICK_COLUMNS = "{premise: sentence_A, hypothesis: sentence_B, label: entailment_label, idx: pair_ID}"
OVERRIDES = [
    "data.train_set.columns.idx=pair_ID",
    f"data.train_set.columns={SICK_COLUMNS}",
    "data.train_set={name:sick,path:csv,data_files:[SICK.txt],columns:{premise:sentence_A,hypothesis:sentence_B,"
    "label:entailment_label,idx:pair_ID}}",
]


def _train_cfg(arguments: str, cwd) -> subprocess.CompletedProcess:
    """`nli-stability train ... --cfg job` as a shell runs the line: the printed fix is pasted as is."""
    return subprocess.run(f"nli-stability train experiment=smoke {arguments} --cfg job", shell=True, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow   # six commands in subprocesses
@pytest.mark.parametrize("override", OVERRIDES)
def test_the_printed_fix_works_as_typed(override, tmp_path):
    refused = subprocess.run(["nli-stability", "train", "experiment=smoke", override, "--cfg", "job"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2, refused.stderr
    line = refused.stderr.strip()
    assert line.startswith("error: 'data.train_set.columns.idx' is a new key of its map (fix: add it with ")
    fix = re.search(r"\(fix: add it with (.+)\)$", line).group(1)
    fixed = _train_cfg(fix, tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    assert re.search(r"^\s+idx: pair_ID$", fixed.stdout, re.MULTILINE), fixed.stdout
