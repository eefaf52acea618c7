"""probing.md: what was probed on which data, per task a layer table beside its figure, the
seed stability of the fine-tuned probes, and the representation similarity (CKA) across seeds."""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from probing.encoders import ProbePlan
from probing.cka import SEED_VS_PRETRAINED, SEED_VS_SEED
from probing.features import POOLING
from probing.figures import CKA_LAYERS_FIGURE
from probing.settings import ProbeSettings
from probing.similarity import CKA_LAYER_FILE, CKA_PAIR_FILE, CKA_SUMMARY_FILE, Similarity
from probing.tasks import TaskSet
from stability.core.markdown import num, table
from stability.core.probetable import PRETRAINED

_PAIR_FEATURES = {"uv": "[u; v]", "uv_diff_prod": "[u; v; |u − v|; u * v]"}


@dataclass(frozen=True)
class ProbingPage:
    """Everything probing.md shows."""

    lang: str
    plan: ProbePlan
    settings: ProbeSettings
    inputs: dict[str, str]           # split -> where its examples came from
    n_examples: dict[str, int]
    tasks: TaskSet
    rows: pd.DataFrame               # probing.csv
    intervals: pd.DataFrame          # probing_ci.csv
    seeds: pd.DataFrame              # probing_seeds.csv (empty without ≥ 1 fine-tuned setup)
    figures: list[Path]
    shares: dict[str, str]           # task -> share of positive pairs per split
    similarity: Similarity | None    # CKA across seeds (None: probe.cka=false or no fine-tuned encoder)


def _setup(page: ProbingPage) -> str:
    plan, settings = page.plan, page.settings
    tuned = {}
    for spec in plan.fine_tuned:
        tuned.setdefault(spec.model, []).append(str(spec.seed))
    encoders = [f"`pretrained`: {plan.pretrained.source}"
                + (f" (no pretrained weights: an untrained initialisation, seed {plan.pretrained.init_seed})"
                   if plan.pretrained.init_seed is not None else "")]
    encoders += [f"`{model}`: seeds {', '.join(seeds)}" for model, seeds in tuned.items()]
    encoders.append(f"`random-init` control: the architecture of {plan.random_init.source} with random "
                    f"weights (seed {plan.random_init.init_seed})")
    names = {"fit": "fit", "heldout": "held-out (picks L2)", "test": "scored"}
    data = [f"{names[split]}: {page.inputs[split]} ({page.n_examples[split]} pairs)" for split in page.inputs]
    if settings.labels == "annotator":
        labels = ("rule-based annotator: a pair is positive for a task when its premise or hypothesis has any "
                  "of the task's features — " + "; ".join(f"{task.name}: {', '.join(task.features)}"
                                                         for task in page.tasks.tasks))
    else:
        labels = "the diagnostic set's gold categories (`gold:<category>`)"
    strengths = ", ".join(f"{value:g}" for value in settings.fit.l2)
    text = (f"# Layer-wise probes: {page.lang} · {plan.display_name}\n\n"
            "Encoders:\n\n" + "".join(f"- {line}\n" for line in encoders)
            + "\nData:\n\n" + "".join(f"- {line}\n" for line in data)
            + f"\nLabels: {labels}.\n\n"
            f"Method: sentence vector = {POOLING}, every layer from one forward pass (0 = embeddings); "
            f"pair = {_PAIR_FEATURES[settings.pair_features]}; logistic regression on inputs standardised "
            f"with the fit split's statistics, L2 strength λ ∈ {{{strengths}}} (loss + λ/2·‖w‖²) chosen by "
            "held-out accuracy only. *control*: the same probe trained on labels permuted within the fit "
            "split, scored against the real labels; *selectivity* = accuracy − control accuracy; "
            "*random-init*: the same probe on the randomly initialised encoder; *majority*: always the fit "
            f"split's most frequent label. Intervals: {settings.confidence:.0%} bootstrap over diagnostic "
            f"items ({settings.bootstrap} samples); for fine-tuned means, seeds and items resampled together.\n")
    if page.tasks.notes:
        text += "\nNotes:\n\n" + "".join(f"- {note}\n" for note in page.tasks.notes)
    return text


def _interval(estimate: float, low: float, high: float) -> str:
    if math.isnan(low):
        return num(estimate)
    return f"{num(estimate)} [{num(low)}, {num(high)}]"


def _task_section(page: ProbingPage, task: str, figure: Path) -> str:
    rows = page.rows[page.rows["task"] == task]
    pretrained = rows[rows["model"] == PRETRAINED].set_index("layer")
    ci = page.intervals[(page.intervals["task"] == task) & (page.intervals["model"] == PRETRAINED)].set_index("layer")
    seeds = page.seeds[page.seeds["task"] == task] if not page.seeds.empty else page.seeds
    tuned_models = sorted(seeds["model"].unique()) if not seeds.empty else []
    header = ["layer", "pretrained", "selectivity", "control"]
    for model in tuned_models:
        header += [f"{model} (mean ± σ)", "selectivity", "control"]
    header += ["random-init", "majority"]
    body = []
    for layer, row in pretrained.iterrows():
        cells = [layer, _interval(row.test_acc, ci.loc[layer, "ci_low"], ci.loc[layer, "ci_high"]),
                 num(row.selectivity), num(row.control_acc)]
        for model in tuned_models:
            stat = seeds[(seeds["model"] == model) & (seeds["layer"] == layer)].iloc[0]
            controls = rows[(rows["model"] == model) & (rows["layer"] == layer)]["control_acc"].mean()
            cells += [f"{num(stat.test_acc_mean)} ± {num(stat.test_acc_std)}"
                      + (f" [{num(stat.ci_low)}, {num(stat.ci_high)}]" if not math.isnan(stat.ci_low) else ""),
                      f"{num(stat.selectivity_mean)}", num(controls)]
        cells += [num(row.random_init_acc), num(row.majority_acc)]
        body.append(cells)
    best = pretrained["test_acc"].idxmax()
    summary = f"Pretrained: best layer {best} ({num(pretrained.loc[best, 'test_acc'])})"
    for model in tuned_models:
        mine = seeds[seeds["model"] == model].set_index("layer")
        layer = mine["test_acc_mean"].idxmax()
        summary += (f"; {model}: best layer {layer} ({num(mine.loc[layer, 'test_acc_mean'])} mean over "
                    f"{int(mine.loc[layer, 'n_seeds'])} seeds), layer-profile correlation between seeds "
                    f"{num(mine['profile_corr'].iloc[0])} (seed pairs used: {int(mine['profile_pairs'].iloc[0])}"
                    f", skipped as constant: {int(mine['profile_skipped'].iloc[0])})")
    return (f"## {task}\n\nPositive pairs: {page.shares[task]}.\n\n![{task}]({figure.name})\n\n{summary}.\n\n"
            + table(header, body))


def _similarity_section(found: Similarity, pair_features: str) -> str:
    """Per fine-tuned model and layer: CKA between its seeds and against the pretrained encoder."""
    text = ("## Representation similarity across seeds\n\nLinear CKA (Kornblith et al. 2019) between two "
            f"encoders' pair representations ({_PAIR_FEATURES[pair_features]}) of the same {found.n_items} "
            "diagnostic pairs, per layer: 1 = the same representation up to rotation and scale, lower = the "
            "encoders encode the items differently. Seed vs seed: every pair of fine-tuned seeds; seed vs "
            "pretrained: each seed against the encoder it started from. Mean ± σ over pairs (number of pairs); "
            "every pair in `" + CKA_PAIR_FILE + "`. A layer where seed-vs-seed CKA drops is where the seeds "
            "diverge.\n")
    for model, part in found.summary.groupby("model", sort=False):
        cells = part.set_index(["layer", "comparison"])
        body = []
        for layer in sorted(part["layer"].unique()):
            row = [layer]
            for comparison in (SEED_VS_SEED, SEED_VS_PRETRAINED):
                if (layer, comparison) in cells.index:
                    cell = cells.loc[(layer, comparison)]
                    spread = "" if math.isnan(cell.cka_sd) else f" ± {num(cell.cka_sd)}"
                    row.append(f"{num(cell.cka_mean)}{spread} ({int(cell.n_pairs)})")
                else:
                    row.append("–")
            body.append(row)
        text += f"\n### {model}\n\n" + table(["layer", "seed vs seed", "seed vs pretrained"], body)
    first = found.layers.iloc[0]
    text += (f"\nEvery layer of {first.model} {first.seed_a} against every layer of {first.seed_b} "
             f"(`{CKA_LAYER_FILE}`):\n\n![CKA between layers]({CKA_LAYERS_FIGURE})\n")
    return text


def render(page: ProbingPage) -> str:
    """The whole page."""
    sections = [_setup(page)]
    sections += [_task_section(page, task, figure)
                 for task, figure in zip([t.name for t in page.tasks.tasks], page.figures)]
    if page.similarity is not None:
        sections.append(_similarity_section(page.similarity, page.settings.pair_features))
    sections.append("## Files\n\n- `probing.csv`: one row per (model, seed, task, layer)\n"
                    "- `probing_ci.csv`: the bootstrap interval of every accuracy\n"
                    + ("- `probing_seeds.csv`: per fine-tuned setup, task and layer: mean ± σ over seeds, "
                       "interval of the mean, layer-profile correlation between seeds\n"
                       if not page.seeds.empty else "")
                    + (f"- `{CKA_SUMMARY_FILE}`, `{CKA_PAIR_FILE}`, `{CKA_LAYER_FILE}`, `{CKA_LAYERS_FIGURE}`: "
                       "linear CKA across seeds (mean ± σ per layer, every pair, one pair's layer × layer matrix)\n"
                       if page.similarity is not None else "")
                    + "".join(f"- `{figure.name}`\n" for figure in page.figures))
    return "\n".join(sections)
