"""The run record states the precision that ran: fp16 on a CPU, which accelerate would silently
train in float32, is refused in one line before anything is written, and the precisions its fix
names run as recorded (bf16's predictions are not float32's)."""
from __future__ import annotations

import re

import pytest
import torch
from helpers import QUICK, assert_one_line_error, predictions, runs, train_cli


NO_GPU = ("trainer.mixed_precision=fp16 needs a CUDA GPU, and this machine, where the jobs run, has none (accelerate "
          "would train in float32)")
FUSED = "seeds cannot be fused with trainer.mixed_precision=fp16: its loss scale would be one for all members"


@pytest.mark.skipif(torch.cuda.is_available(), reason="fp16 runs where there is a GPU")
@pytest.mark.parametrize("sweep, message", [(["seed=0..1"], NO_GPU), (["seed=0..1", "trainer.fuse_seeds=2"], FUSED)],
                         ids=["solo", "fused"])
def test_fp16_of_a_sweep_run_here_without_a_gpu_is_refused_by_the_check_before_any_job(sweep, message):
    """The training command's check of the composed sweep, which runs before Hydra writes anything (the
    slow test below shows a run refused that way leaves nothing): one line, not a failed job per run (a
    fused group: two, the second naming the first's error)."""
    from stability.core.errors import UserError
    from stability.core.jobs import job_configs
    from stability.train import check

    with pytest.raises(UserError, match=re.escape(message)):
        check(job_configs([*QUICK, *sweep, "trainer.mixed_precision=fp16"]))


@pytest.mark.slow
def test_fp16_on_a_cpu_is_refused_and_the_precisions_of_its_fix_run_as_recorded(tmp_path):
    out = tmp_path / "outputs"
    args = [*QUICK, "trainer.max_epochs=1", "seed=0", "hydra.mode=RUN", f"paths.output_dir={out}"]
    refused = train_cli([*args, "trainer.mixed_precision=fp16"], tmp_path)
    assert_one_line_error(refused, NO_GPU, "(fix: trainer.mixed_precision=no trains in float32, "
                                           "trainer.mixed_precision=bf16 in bf16")
    written = [path.name for path in out.rglob("*") if path.is_file() and path.name != "run.lock"]
    assert written == []                             # not even Hydra's .hydra/ and job log

    for fix in ("trainer.mixed_precision=no", "trainer.mixed_precision=bf16"):   # as typed
        result = train_cli([*args, fix], tmp_path)
        assert result.returncode == 0, result.stderr
    recorded = {metrics["precision"]: name for name, metrics in runs(out).items()}
    assert recorded.keys() == {"float32", "bf16"} and "precision-bf16" in recorded["bf16"]
    float32, bf16 = (predictions(out / recorded[precision]) for precision in ("float32", "bf16"))
    assert [row["idx"] for row in float32] == [row["idx"] for row in bf16]
    # bf16 really ran: its probabilities are not float32's (fp16 on a CPU gave float32's, byte for byte)
    assert [row["prob_entailment"] for row in float32] != [row["prob_entailment"] for row in bf16]
