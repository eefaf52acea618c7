"""Which encoders to probe, and loading them: checkpoints, runs' saved weights, random init.

With `runs`, every run probed (`probing.recorded` selects them) must have saved its
weights (`trainer.save_model=true`); the pretrained encoder is the one named by the runs'
model config. `model=tiny` runs have no pretrained weights (the tiny BERT starts from a
random initialisation): their `pretrained` row is an untrained initialisation of the same
architecture with `probe.seed`, which is also the random-init control.
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import torch
from omegaconf import DictConfig
from transformers import AutoConfig, AutoModel, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase
from transformers.utils import logging as hf_logging

from stability.core.errors import UserError, first_line
from stability.core.fingerprints import tokenizer_fingerprint
from stability.core.probetable import PRETRAINED, fine_tuned_model
from stability.core.runrecord import RunDir, RunRecord

log = logging.getLogger(__name__)
RANDOM_INIT = "random-init"


@dataclass(frozen=True)
class EncoderSpec:
    """One encoder to probe: `source` is a folder or HF id; `init_seed` set means the
    architecture of `source` with random weights drawn from that seed."""

    model: str
    seed: int | None
    source: str
    init_seed: int | None = None

    @property
    def label(self) -> str:
        return self.model if self.seed is None else f"{self.model} seed {self.seed}"


@dataclass(frozen=True)
class ProbePlan:
    """The encoders of one probing run: the pretrained one, the fine-tuned runs, the control."""

    pretrained: EncoderSpec
    fine_tuned: list[EncoderSpec]
    random_init: EncoderSpec
    model_name: str

    @property
    def display_name(self) -> str:
        """The model for titles: an HF id as it is, a local folder by its last two path parts."""
        path = Path(self.model_name)
        return "/".join(path.parts[-2:]) if path.is_dir() else self.model_name


def random_init_of(spec: EncoderSpec, seed: int) -> EncoderSpec:
    return EncoderSpec(RANDOM_INIT, None, spec.source, init_seed=seed)


def plan_without_runs(model_cfg: DictConfig, seed: int) -> ProbePlan:
    """Only `model.name`."""
    if model_cfg.kind == "tiny":
        raise UserError("model=tiny has no pretrained weights to probe",
                        fix="pass runs=<sweep folder trained with trainer.save_model=true>, "
                            "or model.name=<checkpoint folder or HF id>")
    pretrained = EncoderSpec(PRETRAINED, None, str(model_cfg.name))
    return ProbePlan(pretrained, [], random_init_of(pretrained, seed), str(model_cfg.name))


def plan_from_runs(runs: list[tuple[RunDir, RunRecord]], model_cfg: DictConfig, seed: int) -> ProbePlan:
    """The given runs (each must hold saved weights) and their pretrained encoder, `model_cfg`
    (the runs' own model unless the command line named another)."""
    for run, _ in runs:
        if not run.has_model():
            raise UserError("the run saved no weights", path=run.path,
                            fix="rerun the sweep with trainer.save_model=true (finished runs only add their weights)")
    fine_tuned = [EncoderSpec(fine_tuned_model(record.setup, record.variant), record.seed, str(run.model_dir))
                  for run, record in sorted(runs, key=lambda pair: (pair[1].setup, pair[1].variant, pair[1].seed))]
    if model_cfg.kind == "tiny":
        pretrained = EncoderSpec(PRETRAINED, None, fine_tuned[0].source, init_seed=seed)
    else:
        pretrained = EncoderSpec(PRETRAINED, None, str(model_cfg.name))
    return ProbePlan(pretrained, fine_tuned, random_init_of(pretrained, seed), str(model_cfg.name))


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Loading a fine-tuned classifier as a bare encoder reports its unused head and shows a
    bar per checkpoint; both are noise here."""
    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        hf_logging.enable_progress_bar()


def _unloadable(spec: EncoderSpec, err: Exception) -> UserError:
    return UserError(f"cannot load the {spec.label} encoder '{spec.source}' ({first_line(err)})",
                     fix="pass model.name=<local checkpoint folder or an HF id in the local cache>, "
                         "or runs=<folder of runs trained with trainer.save_model=true>")


def check_available(spec: EncoderSpec) -> None:
    """Fail before any data is read or annotated when the checkpoint cannot be found."""
    try:
        with _quiet_transformers():
            AutoConfig.from_pretrained(spec.source)
    except (OSError, ValueError) as err:
        raise _unloadable(spec, err) from None


def load_encoder(spec: EncoderSpec) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """The bare encoder (no task head) and its tokenizer; a missing checkpoint is a user error."""
    try:
        with _quiet_transformers():
            tokenizer = AutoTokenizer.from_pretrained(spec.source)
            if spec.init_seed is None:
                model = AutoModel.from_pretrained(spec.source)
            else:
                config = AutoConfig.from_pretrained(spec.source)
                torch.manual_seed(spec.init_seed)
                model = AutoModel.from_config(config)
    except (OSError, ValueError) as err:
        raise _unloadable(spec, err) from None
    return model.eval(), tokenizer


def encoder_fingerprint(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> str:
    """A hash of the weights (every tensor of the state dict) and of the tokenizer: equal
    hash, equal features, whatever folder or seed the encoder came from. Each tensor's bytes
    reach sha256 as a buffer, not a copy (`tobytes()`): the same digest without a second copy of
    the weights in memory, 1.5x faster on a 711 MB encoder (benchmarks/probing.py)."""
    digest = hashlib.sha256(tokenizer_fingerprint(tokenizer).encode())
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}".encode())
        digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy())
    return digest.hexdigest()
