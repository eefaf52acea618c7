"""benchmarks/fused_sweep.py, its CPU path: the batches each seed steps on, the arms it times and
what it derives from them."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from forked_cli import run_script
import torch

from stability.finetune.encoding import EncodedSplit

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "fused_sweep.py"
sys.path.append(str(SCRIPT.parent))  # last: benchmarks/probing.py must not hide the probing package
import fused_sweep  # noqa: E402  (benchmarks/ is not a package)


def _split(lengths: np.ndarray) -> EncodedSplit:
    """Pairs of these token counts (all ones), label 0."""
    return EncodedSplit(input_ids=[np.ones(n, dtype=np.int64) for n in lengths],
                        token_type_ids=[np.zeros(n, dtype=np.int64) for n in lengths],
                        labels=np.zeros(len(lengths), dtype=np.int64))


def test_each_seed_steps_on_full_batches_of_its_own_order_across_epochs():
    split = _split(np.arange(10, 20))     # 10 pairs: 2 full batches of 4 and a tail of 2 per epoch
    batches = fused_sweep.step_batches(split, 4, seed_order=0, steps=5)
    assert [len(b) for b in batches] == [4] * 5
    epoch = [set(b) for b in batches[:2]]
    assert not epoch[0] & epoch[1]       # one epoch's batches share no pair
    assert fused_sweep.step_batches(split, 4, seed_order=0, steps=5)[4].tolist() == batches[4].tolist()
    assert any(a.tolist() != b.tolist() for a, b in zip(batches, fused_sweep.step_batches(split, 4, 1, 5)))


def test_the_aligned_arm_steps_each_seed_on_its_own_batches_aligned_by_width():
    """40 pairs of distinct lengths in one grouping window: every seed's epoch holds the same 10 batches
    (the window sorted by length), so aligned by width the seeds step on equally wide batches, where
    each seed's own order makes them differ."""
    lengths = np.arange(10, 50)
    split = _split(lengths)
    aligned = fused_sweep.aligned_step_batches(split, 4, [0, 1], steps=10)
    own = [fused_sweep.step_batches(split, 4, seed, steps=10) for seed in (0, 1)]
    for order, batches in zip(aligned, own):
        assert sorted(map(tuple, order)) == sorted(map(tuple, batches))
    widths = [[int(lengths[batch].max()) for batch in order] for order in (*aligned, *own)]
    assert widths[0] == widths[1] and widths[2] != widths[3]


@pytest.mark.slow
def test_cpu_arms_time_solo_and_fused_seeds_and_derive_their_figures(tmp_path):
    figures = tmp_path / "figures.json"
    done = run_script(SCRIPT, ["--device", "cpu", "--shape", "small", "--samples", "32",
                               "--steps", "2", "--warmup", "1", "--ks", "1", "2", "--precisions", "fp32", "bf16",
                               "--json", str(figures)], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(figures.read_text())
    everything = {(a["precision"], a["engine"], a["members"]): a for a in result["arms"]}
    assert set(everything) == {(p, e, k) for p in ("fp32", "bf16") for e in ("solo", "fused") for k in (1, 2)} | \
        {(p, e, 2) for p in ("fp32", "bf16") for e in ("fused-aligned", "packed")}
    arms = {(engine, members): arm for (precision, engine, members), arm in everything.items() if precision == "fp32"}
    for (_, _, members), arm in everything.items():
        assert arm["examples"] == members * 2 * 4
        assert arm["examples_per_second"] == pytest.approx(arm["examples"] / arm["seconds"])
        assert arm["study_runs_per_hour"] == pytest.approx(arm["examples_per_second"] * 3600 / 28_000)
        assert 0 <= arm["padding_share"] < 1 and arm["mfu"] > 0
    # one seed steps on the same batches solo and fused: the same padding
    assert arms["fused", 1]["padding_share"] == pytest.approx(arms["solo", 1]["padding_share"])
    # fused members are padded to the widest of the step's batches: never less padding than solo
    assert arms["fused", 2]["padding_share"] >= arms["solo", 2]["padding_share"]
    # packed seeds step on their solo batches: the same tokens in less or more time, never other ones
    assert arms["packed", 2]["padding_share"] == pytest.approx(arms["solo", 2]["padding_share"])
    for precision in ("fp32", "bf16"):
        row = re.search(rf"\| {precision} \| sdpa \| 2 \| fused \| ([\d.]+) \|.*\| ([\d.]+) \| ([\d.]+) \|\n",
                        done.stdout)
        fused, packed, solo = (everything[precision, engine, 2]["examples_per_second"]
                               for engine in ("fused", "packed", "solo"))
        assert row and float(row[2]) == pytest.approx(fused / solo, abs=0.006) and \
            float(row[3]) == pytest.approx(fused / packed, abs=0.006)
    assert re.search(r"matmul peak fp32 [\d.]+ TFLOP/s, bf16 [\d.]+ TFLOP/s; load average [\d.]+\n", done.stdout)


def test_bucketed_pads_every_member_to_the_next_multiple_of_the_bucket():
    batch = {"input_ids": torch.ones(2, 3, 33, dtype=torch.long), "token_type_ids": torch.ones(2, 3, 33, dtype=torch.long),
             "attention_mask": torch.ones(2, 3, 33, dtype=torch.long), "labels": torch.zeros(2, 3, dtype=torch.long)}
    padded = fused_sweep.bucketed(batch, 32, pad_id=7)
    assert padded["input_ids"].shape == (2, 3, 64) and padded["labels"] is batch["labels"]
    assert (padded["input_ids"][..., 33:] == 7).all() and (padded["attention_mask"][..., 33:] == 0).all()
    assert (padded["token_type_ids"][..., 33:] == 0).all() and torch.equal(padded["input_ids"][..., :33], batch["input_ids"])
    assert fused_sweep.bucketed(padded, 32, pad_id=7)["input_ids"].shape == (2, 3, 64)


@pytest.mark.slow
def test_the_graphs_arm_compiles_the_fused_step_and_pads_to_its_buckets(tmp_path):
    """The capture without inductor's code generation (aot_eager: seconds, where a cold inductor takes a
    minute of C++ builds); the arm, its shapes and its figures are the same."""
    figures = tmp_path / "figures.json"
    done = run_script(SCRIPT, ["--device", "cpu", "--shape", "small", "--samples", "32",
                               "--steps", "3", "--warmup", "1", "--ks", "2", "--graphs", "--bucket", "64",
                               "--compile-backend", "aot_eager", "--evaluate", "--json", str(figures)], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    arms = {arm["engine"]: arm for arm in json.loads(figures.read_text())["arms"]}
    assert set(arms) == {"solo", "packed", "fused", "fused-aligned", "fused-graphs", "solo-eval", "fused-eval"}
    # a validation pass of each member over the pairs: dropout off, so SDPA's flash kernel, member by member
    # under vmap, without torch's "performance drop" warning (the engine silences it, docs/benchmarks.md)
    assert arms["solo-eval"]["examples"] == arms["fused-eval"]["examples"] == 2 * 32
    assert "performance drop" not in done.stderr
    graphs = arms["fused-graphs"]
    assert graphs["examples"] == 2 * 3 * 4 and graphs["examples_per_second"] > 0
    # the same steps' real tokens, each step padded further to a multiple of 64
    assert graphs["mfu"] / graphs["examples_per_second"] == pytest.approx(
        arms["fused"]["mfu"] / arms["fused"]["examples_per_second"], rel=1e-6)
    assert graphs["padding_share"] > arms["fused"]["padding_share"]
    assert "| fp32 | sdpa | 2 | fused-graphs |" in done.stdout


def test_wrong_arguments_are_refused_in_one_line(tmp_path):
    done = run_script(SCRIPT, ["--device", "cpu", "--ks", "0", "2"], tmp_path)
    assert done.returncode == 2
    assert "--ks, --steps and --bucket must be at least 1" in done.stderr.splitlines()[-1]
