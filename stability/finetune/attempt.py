"""One attempt at a run: load -> tokenize (cached) -> train -> evaluate -> write the run directory
(`run.run_one` decides whether a job trains; a fused group's first job uses the parts here for each member)."""
from __future__ import annotations

import logging
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from accelerate import Accelerator
from omegaconf import DictConfig, OmegaConf
from transformers import PreTrainedModel, PreTrainedTokenizerFast

from stability.core.metrics import DiagnosticScores, accuracy, majority_share, mcc, score_diagnostic
from stability.core.fingerprints import tokenizer_fingerprint
from stability.core.provenance import environment
from stability.core.errors import UserError
from stability.core.identity import group_choices
from stability.core.jobrecord import utc_now
from stability.core.records import Example, labels_from_probability
from stability.core.runmatch import checkpoint_differences, checkpoint_identity, checkpoint_refusal
from stability.core.runrecord import (EVAL_LANG_ROLE, PRECISIONS, Prediction, RunDir, RunRecord, config_fingerprint,
                                      engine_name)
from stability.core.schemas.train import TrainConfig
from stability.data.container import texts, to_examples
from stability.data.loading import RunDatasets, load_run_datasets
from stability.finetune.distributed import cpu_only_distributed
from stability.finetune.dynamics import DynamicsRecorder, DynamicsWriter
from stability.finetune.encoding import EncodedSplit, encode
from stability.finetune.loop import (TrainResult, predict_diagnostic, predict_entailment_probability, saved_identity,
                                     train)
from stability.finetune.modeling import build_model, load_tokenizer, save_weights
from stability.finetune.recipe import described
from stability.finetune.precision import (forget_previous_precision, refuse_precision_not_run,
                                          resolve_mixed_precision, run_device)
from stability.tracking.trackers import Tracker, make_tracker

log = logging.getLogger(__name__)


def _start_attempt(run_dir: RunDir, settings: TrainConfig, identity: dict, main: bool,
                   claim: Callable[[Path], None]) -> None:
    """Check the checkpoint `trainer.resume=true` would continue against the job (refused when it
    differs, unless `force=true`, which starts over), then clear what this attempt does not continue
    (`RunDir.clear_leftovers`), each said in one log line, and claim the folder it trains in (its
    `.hydra/` and log start there after the clearing, which empties a staging folder whole)."""
    checkpoint = run_dir.checkpoint_path
    resumes = settings.trainer.resume and checkpoint.is_file()
    if resumes:
        try:
            differences = checkpoint_differences(saved_identity(checkpoint), identity)
        except UserError as err:      # an unreadable checkpoint: what force=true starts over from
            if not settings.force:
                raise
            differences = [err.problem]
        if differences and not settings.force:
            raise UserError(checkpoint_refusal(run_dir, differences))
        if differences:
            log.info("[restart] %s: force=true starts over instead of continuing a checkpoint that differs in %s",
                     run_dir.path, "; ".join(differences))
        resumes = not differences
    if main:
        removed = run_dir.clear_leftovers(resumes, settings.trainer.dynamics)
        if removed:
            log.info("[clean] %s: removed %s, left by an unfinished attempt that this one does not continue",
                     run_dir.path, ", ".join(removed))
    claim(run_dir.path)


@dataclass(frozen=True)
class EncodedData:
    """What a run reads, tokenized: the same for every seed of a sweep's cell (none depends on the seed)."""

    data: RunDatasets
    tokenizer: PreTrainedTokenizerFast
    # split name (an `eval_langs` language's diagnostic set: `eval:<code>`) -> (encoded split, read from the cache)
    encoded: dict[str, tuple[EncodedSplit, bool]]
    diagnostic: list[Example]
    seconds: float
    eval_diagnostics: dict[str, list[Example]] = field(default_factory=dict)   # by language code

    @property
    def pad_id(self) -> int:
        return int(self.tokenizer.pad_token_id)


def load_encoded(settings: TrainConfig) -> EncodedData:
    """Load the run's datasets and tokenize every split (cached)."""
    started = time.perf_counter()
    data = load_run_datasets(settings)
    cache_dir = Path(settings.paths.cache_dir).expanduser()
    tokenizer = load_tokenizer(settings.model, texts([data.train]), cache_dir)
    key = tokenizer_fingerprint(tokenizer)
    splits = {"train": data.train, "validation": data.validation, "diagnostic": data.diagnostic, **data.extra,
              **{f"{EVAL_LANG_ROLE}{code}": dataset for code, dataset in data.eval_diagnostics.items()}}
    encoded = {name: encode(dataset, tokenizer, settings.data.max_length, cache_dir, key)
               for name, dataset in splits.items()}
    return EncodedData(data, tokenizer, encoded, to_examples(data.diagnostic), time.perf_counter() - started,
                       {code: to_examples(dataset) for code, dataset in data.eval_diagnostics.items()})


def run_name(settings: TrainConfig) -> str:
    """How logs and progress bars name the run: `en rte seed 3`."""
    return " ".join(part for part in (settings.lang.code, settings.setup, settings.variant,
                                      f"seed {settings.seed}") if part)


def recorded_config(composed: DictConfig) -> dict:
    """The config a tracker records: the group options (trainer=mosbach, ...) beside the config, so a
    dashboard groups runs by method."""
    return {**OmegaConf.to_container(composed, resolve=True), "choices": group_choices(composed)}


def train_and_record(settings: TrainConfig, composed: DictConfig, run_dir: RunDir,
                      inputs: dict[str, dict[str, str]], claim: Callable[[Path], None]) -> RunRecord | None:
    """Train into `run_dir` and write its record (once its refusals have passed, `claim`); the
    main process returns it."""
    started_at = utc_now()
    started = time.perf_counter()
    cpu = cpu_only_distributed()
    forget_previous_precision()
    mixed_precision = resolve_mixed_precision(settings.trainer.mixed_precision, run_device(cpu))
    accelerator = Accelerator(mixed_precision=mixed_precision, cpu=cpu)
    refuse_precision_not_run(settings.trainer.mixed_precision, accelerator)
    main = accelerator.is_main_process
    identity = checkpoint_identity(composed, inputs, settings.trainer.dynamics)
    _start_attempt(run_dir, settings, identity, main, claim)
    if main:
        log.info("[%s] %s", run_name(settings), described(settings.trainer, group_choices(composed).get("trainer")))
    accelerator.wait_for_everyone()     # no process loads a checkpoint the main one removed
    loaded = load_encoded(settings)
    model = build_model(settings.model, loaded.tokenizer, settings.seed_init)
    checkpoint = run_dir.checkpoint_path if settings.trainer.resume else None
    tracker = make_tracker(settings, recorded_config(composed), run_dir.path) if main else None
    if main:
        run_dir.write_config(composed)
        run_dir.write_train_log([])
    name = run_name(settings)

    recorder, writer = None, None
    if settings.trainer.dynamics:
        recorder, writer = dynamics_recording(run_dir, loaded, accelerator)

    def on_validation(entry: dict) -> None:
        if main:
            run_dir.append_epoch(entry)
            scores = {"diagnostic_mcc": writer.latest_mcc} if writer is not None else {}
            tracker.log_epoch({**entry, **scores})
            log.info("[%s] epoch %d: loss %.4f, val acc %.4f", name, entry["epoch"], entry["loss"],
                     entry["val_accuracy"])

    def on_resume(finished: list[dict]) -> None:
        if main:
            run_dir.write_train_log(finished)
            if writer is not None:
                writer.start(len(finished))

    result = train(model, loaded.encoded["train"][0], loaded.encoded["validation"][0], settings, accelerator,
                   loaded.pad_id, checkpoint, on_validation, on_resume, name, recorder, identity)
    record = evaluate_and_record(model, settings, composed, run_dir, loaded, accelerator, result, recorder, tracker,
                                 inputs, started_at, started)
    if record is not None and checkpoint is not None:
        checkpoint.unlink(missing_ok=True)
    return record


def dynamics_recording(run_dir: RunDir, loaded: EncodedData,
                       accelerator: Accelerator) -> tuple[DynamicsRecorder, DynamicsWriter]:
    """The recorder of a run's training dynamics and the writer that stores them in `run_dir` (from the
    main process)."""
    data = loaded.data
    examples = {"train": to_examples(data.train), "validation": to_examples(data.validation),
                "diagnostic": loaded.diagnostic}
    writer = DynamicsWriter(run_dir, examples, accelerator.is_main_process)
    return DynamicsRecorder(len(data.train), loaded.encoded["diagnostic"][0], accelerator.device, writer), writer


def evaluate_and_record(model: PreTrainedModel, settings: TrainConfig, composed: DictConfig, run_dir: RunDir,
                        loaded: EncodedData, accelerator: Accelerator, result: TrainResult,
                        recorder: DynamicsRecorder | None, tracker: Tracker | None, inputs: dict[str, dict[str, str]],
                        started_at: str, started: float, fused_with: Sequence[int] = ()) -> RunRecord | None:
    """Score the trained `model` (holding its best validation's weights) on the diagnostic and extra
    sets, and write the run's predictions, weights (if asked) and record, the record last; the main
    process returns it. `fused_with`: the seeds of the fused group the run trained in (none: solo)."""
    name = run_name(settings)
    main = accelerator.is_main_process
    pad_id = loaded.pad_id
    eval_started = time.perf_counter()
    diagnostic = loaded.diagnostic
    scores, predictions = score_diagnostic_set(model, loaded.encoded["diagnostic"][0], diagnostic, settings,
                                               accelerator, pad_id, recorder, f"[{name}] diagnostic")
    scored_in = {code: score_diagnostic_set(model, loaded.encoded[f"{EVAL_LANG_ROLE}{code}"][0], examples, settings,
                                            accelerator, pad_id, None, f"[{name}] diagnostic {code}")
                 for code, examples in loaded.eval_diagnostics.items()}
    extra = {extra_name: score_extra(model, loaded.encoded[extra_name][0], settings, accelerator, pad_id,
                                     f"[{name}] {extra_name}") for extra_name in loaded.data.extra}
    if not main:
        return None
    save_model = settings.trainer.save_model
    if save_model:
        save_weights(accelerator.unwrap_model(model), loaded.tokenizer, run_dir.model_dir)
    data = loaded.data
    record = RunRecord(
        experiment=settings.experiment_name, lang=settings.lang.code, setup=settings.setup,
        variant=settings.variant, seed=settings.seed, seed_init=settings.seed_init,
        seed_order=settings.seed_order, model=settings.model.name, n_train=len(data.train), n_added=data.n_added,
        n_validation=len(data.validation), n_items=len(diagnostic),
        val_accuracy=result.best_val_accuracy, val_majority=majority_share(loaded.encoded["validation"][0].labels),
        **asdict(scores), extra_eval=extra,
        eval_langs={code: {"n_items": len(examples), **asdict(scored_in[code][0])}
                    for code, examples in loaded.eval_diagnostics.items()},
        epochs_trained=result.epochs_trained, best_epoch=result.best_epoch,
        timings={"tokenize_seconds": loaded.seconds, "train_seconds": result.seconds,
                 "eval_seconds": time.perf_counter() - eval_started,
                 "total_seconds": time.perf_counter() - started},
        tokenization_cached=all(hit for _, hit in loaded.encoded.values()),
        num_processes=accelerator.num_processes, device=str(accelerator.device), pid=os.getpid(),
        config_fingerprint=config_fingerprint(composed), environment=environment(str(accelerator.device)),
        inputs=inputs, started=started_at, ended=utc_now(),
        precision=PRECISIONS[accelerator.mixed_precision],
        engine=engine_name(settings.trainer.fuse_seeds), fused_with=list(fused_with),
        saved_model=run_dir.model_dir.name if save_model else None,
    )
    run_dir.write_predictions(predictions)
    for code, (_, language_predictions) in scored_in.items():
        run_dir.write_predictions(language_predictions, scored_in=code)
    tracker.log_final(record.to_json(), [p.to_json() for p in predictions])
    tracker.finish()
    run_dir.write_record(record)
    return record


def score_diagnostic_set(model: PreTrainedModel, split: EncodedSplit, items: list[Example], settings: TrainConfig,
                         accelerator: Accelerator, pad_id: int, recorder: DynamicsRecorder | None,
                         desc: str) -> tuple[DiagnosticScores, list[Prediction]]:
    """The trained model's scores per category on one diagnostic set (the run's own, whose dynamics
    `recorder` may hold its predictions already, or an `eval_langs` language's) and its per-item predictions."""
    prob = predict_diagnostic(model, split, settings.trainer.eval_batch_size, accelerator, pad_id, recorder, desc,
                              settings.trainer.eval_tokens_per_batch)
    pred = labels_from_probability(prob)
    gold = split.labels.tolist()
    scores = score_diagnostic(gold, pred.tolist(), [e.categories for e in items], [e.coarse for e in items])
    return scores, [Prediction(e.idx, int(g), int(p), float(pr), e.categories, e.template, e.features)
                    for e, g, p, pr in zip(items, gold, pred, prob)]


def score_extra(model, split: EncodedSplit, settings: TrainConfig, accelerator: Accelerator, pad_id: int,
                desc: str) -> dict[str, float | int | bool]:
    """Accuracy and MCC of the trained model on an extra evaluation set; an undefined MCC (one
    predicted or gold label only) scores 0.0 and is flagged `degenerate`, as the diagnostic's are."""
    prob = predict_entailment_probability(model, split, settings.trainer.eval_batch_size, accelerator, pad_id, desc,
                                          settings.trainer.eval_tokens_per_batch)
    gold, pred = split.labels.tolist(), labels_from_probability(prob).tolist()
    value = mcc(gold, pred)
    return {"accuracy": accuracy(gold, pred), "mcc": 0.0 if value is None else value, "n_items": len(gold),
            "degenerate": value is None}
