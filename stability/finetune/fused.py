"""Seeds fused into one model: K runs that differ only in their seeds, trained as one batched
computation (torch.func's `stack_module_state`, `functional_call` and `vmap`).

At batch size 4 a GPU mostly waits for kernel launches, once per process (docs/benchmarks.md,
"Packed runs on one H100"). Here the K members' parameters are stacked along a leading dimension
and one forward and one backward per step serve K batches. Each member keeps what makes it a seed:

- its initialisation: each member is built as a solo run builds its model (`build_members`);
- its data order: member k's batch is its own `seed_order`'s (`batching.epoch_batches`), and the
  K batches of a step are padded to the widest of them (`collate_members`);
- its dropout masks: `vmap(randomness="different")` draws each member's apart;
- its AdamW state: AdamW is elementwise, so one AdamW over the stacked parameters is K independent
  ones as long as the members share what is not per element (rate, weight decay, betas, eps and the
  step count). They do: they share the trainer config and step together, and with one t_total their
  schedules give the same rate at every step, so one `LearningRate` serves all;
- its plateau rule: jiant's rule (`schedules.plateau_rule`) counts each member's validations and
  gives it its own factor on the shared schedule. AdamW's update is linear in the rate (p moves by
  -lr·(m̂/(√v̂+eps) + wd·p), the moments do not depend on lr), so a member at factor f is stepped at
  the shared rate and its move scaled by f (`_member_rates`);
- its clipping: by its own gradient norm (`clip_per_member`), never the stack's;
- stopping: a stopped member's parameters and optimiser state are put back after every step.

What does not hold yet is refused (`refuse_unfusable`): BertAdam (it clips each tensor by a norm
that would span all members), mixout and the pretrained decay (parametrisations and a penalty over
one model's parameters), validating every N steps (`fused_loop` validates after each epoch), fp16 (its loss scale would be one for all members). bf16 is accelerate's:
the forward under autocast, weights, gradients and optimiser in float32.
"""
from __future__ import annotations

import copy
import warnings
from contextlib import contextmanager
from typing import Iterator, Sequence

import numpy as np
import torch
from torch.func import functional_call, stack_module_state, vmap
from transformers import PreTrainedModel, PreTrainedTokenizerFast
from transformers.masking_utils import create_bidirectional_mask

from stability.core.errors import UserError
from stability.core.schemas.model import Model
from stability.core.schemas.trainer import Trainer
from stability.finetune.batching import collate, eval_batches
from stability.finetune.encoding import EncodedSplit
from stability.finetune.modeling import build_model
from stability.finetune.optimizers import optimizer_over, parameter_groups
from stability.finetune.precision import resolve_mixed_precision
from stability.finetune.recipe import initialise
from stability.finetune.schedules import LearningRate, plateau_rule

# torch.nn.utils.clip_grad_norm_'s guard against a zero norm, so a member clips as its solo run does
_CLIP_EPS = 1e-6
IGNORED_LABEL = -100   # the label the models' cross-entropy leaves out (torch's ignore_index)
# torch's warning when vmap loops over an op without a batching rule, for SDPA's CPU flash kernel
_SDPA_FALLBACK = r"There is a performance drop .* batching rule for aten::_scaled_dot_product_flash_attention_for_cpu"

# trainer keys the fused engine does not run yet, with the value that it does run
_UNFUSABLE = {"optimizer": "adamw", "mixout": 0.0, "pretrained_decay": 0.0, "eval_every": "epoch"}


@contextmanager
def _member_by_member_attention() -> Iterator[None]:
    """Without torch's warning that vmap runs SDPA's CPU flash kernel member by member (it has no
    batching rule): the kernel SDPA takes without dropout, so at every validation pass and in training
    with dropout 0 (with dropout SDPA takes its math path, which vmap batches). Member by member it
    computes what each member's model computes alone, with a solo run's own kernel; eager attention,
    which vmap batches, would change every fused member's numbers and, measured on the CPU with
    benchmarks/fused_sweep.py --evaluate (docs/benchmarks.md), does not evaluate faster."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=_SDPA_FALLBACK)
        yield


def refuse_unfusable(trainer: Trainer) -> None:
    """One line naming every trainer key set to what fused members cannot do yet; fp16 (which `auto`
    never resolves to, so the value asked for decides on every device) has a loss scale of its own."""
    if trainer.mixed_precision == "fp16":
        raise UserError("seeds cannot be fused with trainer.mixed_precision=fp16: its loss scale would be one for "
                        "all members", fix="trainer.mixed_precision=bf16 or no, or train these seeds one by one")
    unfusable = [f"trainer.{key}={_override_text(getattr(trainer, key))}" for key, fused in _UNFUSABLE.items()
                 if getattr(trainer, key) != fused]
    if unfusable:
        keep = " ".join(f"trainer.{key}={_override_text(value)}" for key, value in _UNFUSABLE.items())
        raise UserError(f"seeds cannot be fused with {', '.join(unfusable)}",
                        fix=f"train these seeds one by one, or fuse them with {keep}")


def _override_text(value: object) -> str:
    """A value as an override writes it: `true`, `null`, `0.2`."""
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def build_members(model: Model, tokenizer: PreTrainedTokenizerFast, trainer: Trainer,
                  seeds_init: Sequence[int]) -> list[PreTrainedModel]:
    """Each seed's model as its solo run builds it: the head (and tiny weights) from its seed_init,
    re-initialised layers from seed_init · 1000 (`loop.train`'s draw)."""
    members = []
    for seed_init in seeds_init:
        member = build_model(model, tokenizer, seed_init)
        initialise(member, trainer, seed_init * 1000)
        members.append(member)
    return members


def collate_members(split: EncodedSplit, member_indices: Sequence[np.ndarray], pad_id: int) -> dict[str, torch.Tensor]:
    """The K members' batches of one step, each as `batching.collate` pads it, padded further to the
    widest of them and stacked: every tensor gets a leading member dimension. A member whose batch is
    shorter (its epoch's last, partial batch falls at another step than the others' when batches are
    grouped by length) gets copies of its first row labelled `IGNORED_LABEL`: the model's loss leaves
    them out, so its loss and gradients are those of its own rows, as in its solo run."""
    batches = [collate(split, indices, pad_id) for indices in member_indices]
    rows = max(len(indices) for indices in member_indices)
    width = max(batch["input_ids"].shape[1] for batch in batches)
    fill = {"input_ids": pad_id, "token_type_ids": 0, "attention_mask": 0}
    stacked = {key: torch.stack([_rows_filled(torch.nn.functional.pad(batch[key], (0, width - batch[key].shape[1]),
                                                                     value=value), rows)
                                 for batch in batches]) for key, value in fill.items()}
    stacked["labels"] = torch.stack([torch.nn.functional.pad(batch["labels"], (0, rows - len(batch["labels"])),
                                                             value=IGNORED_LABEL) for batch in batches])
    return stacked


def _rows_filled(tensor: torch.Tensor, rows: int) -> torch.Tensor:
    """`tensor` (rows × width) with copies of its first row appended up to `rows` (a real row, not an
    empty one: a row with nothing to attend to would give NaN)."""
    return torch.cat([tensor, tensor[:1].expand(rows - len(tensor), -1)]) if len(tensor) < rows else tensor


def clip_per_member(params: Sequence[torch.Tensor], max_norm: float) -> torch.Tensor:
    """Scale each member's gradients as `torch.nn.utils.clip_grad_norm_` scales a solo run's, by the
    member's own L2 norm over all its gradients (dimension 0 of every tensor is the member); returns
    the K norms before clipping."""
    grads = [param.grad for param in params if param.grad is not None]
    members = grads[0].shape[0]
    per_tensor = torch.stack([torch.linalg.vector_norm(grad.reshape(members, -1), dim=1) for grad in grads], dim=1)
    norms = torch.linalg.vector_norm(per_tensor, dim=1)
    scale = (max_norm / (norms + _CLIP_EPS)).clamp(max=1.0)
    for grad in grads:
        grad.mul_(scale.view(-1, *[1] * (grad.dim() - 1)))
    return norms


def storage_free_copy(model: torch.nn.Module) -> torch.nn.Module:
    """`model`'s structure on the meta device, its parameters and buffers never copied: each is given to
    deepcopy as a meta tensor of its shape (tied weights stay tied). Copying the 470 MB of
    multilingual-e5-small's weights only to drop them took 0.3-0.5 s where the memory was at hand, and its
    fused pair of 16 pairs took 56 s with that copy against 50 s without it (CPU, one thread, measured once)."""
    memo: dict[int, torch.Tensor] = {id(param): torch.nn.Parameter(torch.empty_like(param, device="meta"),
                                                                    requires_grad=param.requires_grad)
                                     for param in model.parameters()}
    memo.update({id(buffer): torch.empty_like(buffer, device="meta") for buffer in model.buffers()})
    return copy.deepcopy(model, memo).to("meta")


class FusedMembers:
    """K members of one Hugging Face sequence classifier, their parameters stacked along dimension 0,
    with one optimiser and one rate policy over the stack (why that is K independent ones: the
    module's docstring)."""

    def __init__(self, members: Sequence[PreTrainedModel], trainer: Trainer, steps_per_epoch: int) -> None:
        refuse_unfusable(trainer)
        self.size = len(members)
        self.params, self.buffers = stack_module_state(list(members))
        device = next(iter(self.params.values())).device
        precision = resolve_mixed_precision(trainer.mixed_precision, device)
        # accelerate's mixed precision: the forward (loss included) under autocast
        self._autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=precision == "bf16")
        # the members' shared structure, without storage: every forward passes the stacked tensors
        self._base = storage_free_copy(members[0])
        self._max_grad_norm = trainer.max_grad_norm
        self.stopped = torch.zeros(self.size, dtype=torch.bool)
        name_of = {id(param): name for name, param in members[0].named_parameters()}
        groups = [{**group, "params": [self.params[name_of[id(param)]] for param in group["params"]]}
                  for group in parameter_groups(members[0], trainer.learning_rate, trainer.weight_decay,
                                                trainer.layer_lr_decay)]
        self.optimizer = optimizer_over(groups, trainer.optimizer, trainer.learning_rate, trainer.weight_decay)
        self.total_steps = trainer.planned_steps(steps_per_epoch)
        # the shared schedule; the plateau rule is each member's own
        self.learning_rate = LearningRate(self.optimizer, trainer.schedule, trainer.warmup_ratio, self.total_steps,
                                          None, trainer.lr_decay_factor, trainer.min_lr)
        self.rate_factors = torch.ones(self.size)
        self._min_lr = trainer.min_lr
        self._plateaus = None if trainer.lr_patience is None else [
            plateau_rule(torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0), trainer.lr_patience,
                         trainer.lr_decay_factor) for _ in members]

    def train(self, mode: bool = True) -> None:
        """Dropout on (training) or off (evaluation), for every member."""
        self._base.train(mode)

    def forward(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """Each member's loss (K) and logits (K × batch × labels) on its own batch (`collate_members`)."""
        inputs = self._with_built_mask(batch)
        with self._autocast, _member_by_member_attention():
            losses, logits = self.members_forward(self.params, self.buffers, inputs)
        return losses.float(), logits.float()

    def members_forward(self, params: dict[str, torch.Tensor], buffers: dict[str, torch.Tensor],
                        inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """The stacked members' losses and logits on their stacked inputs, the mask built: one vmap over
        the members, each with its own dropout masks. A function of tensors only, so that it can be
        compiled as a whole (benchmarks/fused_sweep.py's `fused-graphs` arm)."""
        def member(member_params, member_buffers, member_inputs):
            output = functional_call(self._base, (member_params, member_buffers), (), member_inputs)
            return output.loss, output.logits

        return vmap(member, randomness="different")(params, buffers, inputs)

    def _with_built_mask(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """`batch` with its attention mask replaced by the one the model takes (`_attention_mask`), or
        without one where nothing is padded."""
        inputs = dict(batch)
        mask = self._attention_mask(inputs.pop("attention_mask"))
        if mask is not None:
            inputs["attention_mask"] = mask
        return inputs

    def _attention_mask(self, mask: torch.Tensor) -> torch.Tensor | None:
        """The attention mask the model's attention implementation takes, built by transformers
        outside vmap: its builder looks at the mask's values (no padding anywhere: None), which vmap
        cannot trace; a 4-D mask is passed through the model as it is. `mask` is (members ×) rows ×
        width; the mask built keeps the leading dimensions."""
        leading, width = mask.shape[:-1], mask.shape[-1]
        rows = mask.reshape(-1, width)
        dtype = next(iter(self.params.values())).dtype
        built = create_bidirectional_mask(config=self._base.config, attention_mask=rows,
                                          inputs_embeds=torch.empty((len(rows), width, 0), dtype=dtype, device=mask.device))
        return None if built is None else built.reshape(*leading, *built.shape[1:])

    def predict_entailment_probability(self, split: EncodedSplit, batch_size: int, pad_id: int,
                                       tokens_per_batch: int | None = None) -> np.ndarray:
        """Every member's P(entailment) for every example of `split` (members × examples, in the
        split's order), dropout off: the batches of `loop.predict_entailment_probability`
        (`batching.eval_batches`), each one passed once through all members."""
        self.train(False)
        device = next(iter(self.params.values())).device
        out = np.empty((self.size, len(split)), dtype=np.float64)
        with torch.inference_mode():
            for indices in eval_batches(split.lengths, batch_size, tokens_per_batch):
                inputs = collate(split, indices, pad_id)
                del inputs["labels"]
                inputs = self._with_built_mask({key: value.to(device) for key, value in inputs.items()})
                with self._autocast, _member_by_member_attention():
                    logits = vmap(lambda params, buffers: functional_call(self._base, (params, buffers), (),
                                                                          inputs).logits)(self.params, self.buffers)
                out[:, indices] = torch.softmax(logits.float(), dim=-1)[..., 0].cpu().numpy()
        return out

    def step(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One optimiser step of every member on its own batch: the members' losses, logits and
        gradient norms before clipping (as `loop.train_step`, member by member)."""
        losses, logits = self.forward(batch)
        losses.sum().backward()     # members share no parameter: each gets its own loss's gradient
        norms = clip_per_member(list(self.params.values()), self._max_grad_norm)
        with self._stopped_kept(), self._member_rates():
            self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.learning_rate.after_step()
        return losses.detach(), logits.detach(), norms

    def after_validation(self, member: int, score: float) -> bool:
        """Feed member `member`'s validation accuracy to its plateau rule; True when it must stop because
        its base rate fell below min_lr (`LearningRate.after_validation`, member by member). Its rule
        counts on a one-parameter stand-in optimiser whose rate is the member's factor."""
        if self._plateaus is None:
            return False
        plateau = self._plateaus[member]
        plateau.step(score)
        self.rate_factors[member] = plateau.optimizer.param_groups[0]["lr"]
        return max(self.learning_rate.base_rates()) * float(self.rate_factors[member]) < self._min_lr

    @contextmanager
    def _member_rates(self) -> Iterator[None]:
        """Scale each member's move in the step inside by its rate factor (all 1: nothing to do)."""
        if bool((self.rate_factors == 1).all()):
            yield
            return
        params = list(self.params.values())
        before = [param.detach().clone() for param in params]
        yield
        with torch.no_grad():
            for param, old in zip(params, before):
                factor = self.rate_factors.to(param.device, param.dtype).view(-1, *[1] * (param.dim() - 1))
                param.copy_(old + factor * (param - old))

    def stop(self, member: int) -> None:
        """Member `member` changes no more: its parameters and optimiser state stay as they are now."""
        self.stopped[member] = True

    @contextmanager
    def _stopped_kept(self) -> Iterator[None]:
        """Put the stopped members' parameters and optimiser state back after the step inside.
        State the step creates (its first) starts the stopped members at zero, as if never stepped."""
        frozen = self.stopped.nonzero().flatten()
        if not len(frozen):
            yield
            return
        kept = {id(tensor): (tensor, tensor[frozen].clone()) for tensor in self._member_tensors()}
        yield
        with torch.no_grad():
            for tensor in self._member_tensors():
                if id(tensor) in kept:
                    tensor[frozen] = kept[id(tensor)][1]
                else:
                    tensor[frozen] = 0

    def _member_tensors(self) -> list[torch.Tensor]:
        """The parameters and the optimiser's per-member state (tensors with the member dimension)."""
        state = [value for param in self.params.values() for value in self.optimizer.state.get(param, {}).values()
                 if isinstance(value, torch.Tensor) and value.dim() and value.shape[0] == self.size]
        return [*self.params.values(), *state]

    def load_member(self, member: int, model: PreTrainedModel) -> PreTrainedModel:
        """`model` (of the members' architecture) holding member `member`'s weights and buffers, copied
        off the stack: a solo model, for what reads one (evaluation, saving)."""
        stacked = {**self.params, **self.buffers}
        model.load_state_dict({name: stacked[name][member].detach() for name in model.state_dict()})
        return model
