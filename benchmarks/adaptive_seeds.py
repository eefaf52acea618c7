"""What adaptive seed allocation saves at the study's design, and what it costs in error rates, by
simulation (`stability.statistics.sequential`, `sequential_calibration`).

    python benchmarks/adaptive_seeds.py [--sims 1000] [--targets 0.3 0.4 0.5] [--start 3] [--step 3]
                                        [--max-seeds 24] [--looks 3 6 9] [--delta 0.1] [--seed 0] [--json FILE]

The design: 5 languages × 2 setups (10 conditions) × 33 fine categories. Each category's σ of MCC
across seeds is drawn from the distribution the study reports (median 0.12, quartiles 0.09 and 0.19,
range 0 to 0.34: the quantile function linear between those five points), its mean uniform in
[0.1, 0.6]; one such study, `--sims` simulated seed sweeps of it per world (normal seeds, and
Laplace seeds of the same mean and σ: `calibration`'s `heavy` world).

- **Precision goal** (mean MCC of every fine category, its t interval at 95 %): a condition starts
  with `--start` seeds and gets `--step` more a round while some category's interval is wider than
  the target (each of `--targets` in turn), up to `--max-seeds`. Baselines, measured on the same
  simulated seeds: the *fixed design that reaches the same worst-category precision* (the fewest
  seeds on the same grid, the same for every condition, at which every category's interval is at
  most the target wide: the fixed design a planner who knew the answer would choose, so the least a
  fixed design can spend),
  and the fixed design at `--max-seeds` (what a planner who only knows σ can reach 0.34 must run).
  Printed: runs of each, the ratios adaptive / fixed, the share of conditions that reached the
  target, the worst category's width (median over sweeps), and the coverage of the intervals at
  the stop (vs 95 %): of every category, and of each condition's widest category at its stop (the
  one nearest the target).
- **Decision goal** (setup B against setup A per language and category, Welch z at `--looks` seeds
  per arm, two-sided O'Brien–Fleming and Pocock Lan–DeMets boundaries at α = 0.05): under the null
  (A/A) the false-positive rate of the sequential test and of naive repeated Welch tests at the same
  looks, with Monte-Carlo intervals; with every category shifted by `--delta` MCC, the rejections
  (power) and the runs, a language's two setups running while any of its 33 comparisons is open,
  against the fixed design at the last look; and the seeds per arm of one comparison alone (a
  sweep deciding a single comparison, e.g. all items) over the last look's.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from stability.statistics.calibration import Fit, draw
from stability.statistics.rates import wilson_interval
from stability.statistics.sequential import boundaries, information_fractions, interval_width
from stability.statistics.sequential_calibration import coverage_at_stop, precision_stops, sequential_tests

LANGS, SETUPS, CATEGORIES = 5, 2, 33
SIGMA_QUANTILES = ([0.0, 0.25, 0.5, 0.75, 1.0], [0.0, 0.09, 0.12, 0.19, 0.34])   # the study's σ of MCC
WORLDS = ("normal", "heavy")
SPENDINGS = ("obrien-fleming", "pocock")
ALPHA, CONFIDENCE = 0.05, 0.95


def draw_sigmas(rng: np.random.Generator, size: int | tuple[int, ...]) -> np.ndarray:
    """σ of MCC across seeds per category: the study's quantiles, linear in between."""
    return np.interp(rng.random(size), *SIGMA_QUANTILES)


def study(rng: np.random.Generator) -> Fit:
    """The study's cells, (conditions × categories) rows: condition c = lang c // 2, setup c % 2."""
    cells = LANGS * SETUPS * CATEGORIES
    zeros = np.zeros((cells, 2))
    return Fit(zeros, zeros.astype(bool), rng.uniform(0.1, 0.6, cells), draw_sigmas(rng, cells))


def _rate(events: np.ndarray) -> dict[str, float]:
    low, high = wilson_interval(events.sum(), events.size, 0.95)
    return {"rate": float(events.mean()), "mc_low": float(low), "mc_high": float(high)}


def precision_goal(cells: Fit, looks: np.ndarray, target: float, world: str, sims: int,
                   rng: np.random.Generator) -> dict:
    """The adaptive precision sweep against the fixed designs, on the same simulated seeds."""
    samples = draw(world, cells, int(looks[-1]), sims, rng).samples          # (cells, sims, seeds)
    conditions = np.repeat(np.arange(LANGS * SETUPS), CATEGORIES)
    stops = precision_stops(samples, looks, target, groups=conditions)        # (cells, sims)
    per_condition = stops.reshape(LANGS * SETUPS, CATEGORIES, sims)[:, 0]     # (conditions, sims)
    adaptive_runs = looks[per_condition].sum(axis=0)                          # (sims,)
    widths = np.stack([interval_width(samples[..., :k]) for k in looks], axis=-1)   # (cells, sims, looks)
    every = (widths <= target).all(axis=0)                                   # (sims, looks)
    oracle = np.where(every.any(axis=-1), every.argmax(axis=-1), len(looks) - 1)
    fixed_runs = LANGS * SETUPS * looks[oracle]
    at_stop = np.take_along_axis(widths, stops[..., None], -1)[..., 0]
    reached = (at_stop <= target).reshape(LANGS * SETUPS, CATEGORIES, sims).all(axis=1)
    oracle_widths = np.take_along_axis(widths.max(axis=0), oracle[:, None], -1)[:, 0]
    covered = coverage_at_stop(samples, looks, stops, cells.mean)
    fixed_covered = coverage_at_stop(samples, looks, np.full_like(stops, len(looks) - 1), cells.mean)
    widest = at_stop.reshape(LANGS * SETUPS, CATEGORIES, sims).argmax(axis=1)   # nearest the target
    binding = np.take_along_axis(covered.reshape(LANGS * SETUPS, CATEGORIES, sims), widest[:, None], 1)
    max_runs = LANGS * SETUPS * int(looks[-1])
    return {"world": world, "target": target, "adaptive_runs": float(adaptive_runs.mean()),
            "fixed_same_precision_runs": float(fixed_runs.mean()), "fixed_max_runs": max_runs,
            "ratio_same_precision": float(adaptive_runs.mean() / fixed_runs.mean()),
            "ratio_max": float(adaptive_runs.mean() / max_runs),
            "reached_share": float(reached.mean()),
            "worst_width_adaptive": float(np.median(at_stop.max(axis=0))),
            "worst_width_fixed_same_precision": float(np.median(oracle_widths)),
            "seeds_per_condition": {str(k): float((looks[per_condition] == k).mean()) for k in looks},
            "coverage": _rate(covered), "coverage_widest": _rate(binding),
            "coverage_fixed_max": _rate(fixed_covered)}


def decision_goal(cells: Fit, looks: np.ndarray, delta: float, world: str, sims: int,
                  rng: np.random.Generator) -> list[dict]:
    """Setup B against A per language and category: A/A false positives and, shifted by `delta`,
    rejections and runs, for each spending function."""
    setup_a = np.arange(LANGS * SETUPS * CATEGORIES).reshape(LANGS, SETUPS, CATEGORIES)[:, 0].ravel()
    side = Fit(cells.scores[setup_a], cells.failed[setup_a], cells.mean[setup_a], cells.std[setup_a])
    n = int(looks[-1])
    a, null_b, shifted_b = (draw(world, side, n, sims, rng).samples for _ in range(3))
    shifted_b = shifted_b + delta
    out = []
    for spending in SPENDINGS:
        bounds = boundaries(information_fractions(looks), ALPHA, spending)
        null = sequential_tests(a, null_b, looks, bounds, ALPHA)
        shifted = sequential_tests(a, shifted_b, looks, bounds, ALPHA)
        fixed = sequential_tests(a, shifted_b, looks[-1:], boundaries([1.0], ALPHA), ALPHA)
        runs = SETUPS * shifted.seeds.reshape(LANGS, CATEGORIES, sims).max(axis=1).sum(axis=0)
        out.append({"world": world, "spending": spending, "bounds": bounds.round(4).tolist(),
                    "false_positives": _rate(null.sequential), "naive_false_positives": _rate(null.naive),
                    "null_seeds_per_arm": float(null.seeds.mean()), "power": _rate(shifted.sequential),
                    "fixed_power": _rate(fixed.sequential), "seeds_per_arm": float(shifted.seeds.mean()),
                    "seeds_ratio": float(shifted.seeds.mean() / n),
                    "runs": float(runs.mean()), "fixed_runs": LANGS * SETUPS * n,
                    "ratio": float(runs.mean() / (LANGS * SETUPS * n))})
    return out


def _interval(rate: dict) -> str:
    return f"{rate['rate']:.1%} [{rate['mc_low']:.1%}, {rate['mc_high']:.1%}]"


def tables(result: dict) -> str:
    """The Markdown tables printed and kept in docs/benchmarks.md."""
    precision = ["world", "target", "adaptive runs", "fixed, same worst-category precision", "adaptive / fixed",
                 "fixed at the maximum", "adaptive / maximum", "conditions at the target",
                 "worst width adaptive / fixed", "coverage at the stop", "its widest category's",
                 "coverage fixed at the maximum"]
    decision = ["world", "spending", "bounds", "false positives", "naive repeated", "power (Δ)", "fixed power",
                "seeds per arm", "one comparison's seeds / fixed", "runs", "fixed runs", "runs / fixed"]
    lines = [_row(precision), "|---" * len(precision) + "|"]
    for row in result["precision"]:
        lines.append(_row([row["world"], f"{row['target']:g}", f"{row['adaptive_runs']:.1f}",
                           f"{row['fixed_same_precision_runs']:.1f}", f"**{row['ratio_same_precision']:.2f}**",
                           row["fixed_max_runs"], f"{row['ratio_max']:.2f}", f"{row['reached_share']:.1%}",
                           f"{row['worst_width_adaptive']:.3f} / {row['worst_width_fixed_same_precision']:.3f}",
                           _interval(row["coverage"]), _interval(row["coverage_widest"]),
                           _interval(row["coverage_fixed_max"])]))
    lines += ["", _row(decision), "|---" * len(decision) + "|"]
    for row in result["decision"]:
        lines.append(_row([row["world"], row["spending"], ", ".join(f"{b:.3f}" for b in row["bounds"]),
                           _interval(row["false_positives"]), _interval(row["naive_false_positives"]),
                           _interval(row["power"]), _interval(row["fixed_power"]), f"{row['seeds_per_arm']:.2f}",
                           f"{row['seeds_ratio']:.2f}", f"{row['runs']:.1f}", row["fixed_runs"],
                           f"**{row['ratio']:.2f}**"]))
    return "\n".join(lines)


def _row(cells: list) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=1000, help="simulated sweeps per world")
    parser.add_argument("--targets", type=float, nargs="+", default=[0.3, 0.4, 0.5],
                        help="widest interval of a category's mean MCC, one precision goal each")
    parser.add_argument("--start", type=int, default=3, help="seeds per condition before the first look")
    parser.add_argument("--step", type=int, default=3, help="seeds added per round")
    parser.add_argument("--max-seeds", type=int, default=24, help="the most seeds a condition gets")
    parser.add_argument("--looks", type=int, nargs="+", default=[3, 6, 9], help="decision goal: seeds per arm")
    parser.add_argument("--delta", type=float, default=0.1, help="decision goal: the true ΔMCC for its power")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    args = parser.parse_args()
    if args.sims < 1 or args.start < 2 or args.step < 1 or args.max_seeds < args.start:
        parser.error("--sims and --step must be at least 1, --start at least 2, --max-seeds at least --start")
    if args.looks[0] < 2 or any(b <= a for a, b in zip(args.looks, args.looks[1:])):
        parser.error(f"--looks must be increasing seed counts of at least 2, got {args.looks}")
    if not all(target > 0 for target in args.targets):
        parser.error("--targets must be > 0")

    rng = np.random.default_rng(args.seed)
    cells = study(rng)
    precision_looks = np.arange(args.start, args.max_seeds + 1, args.step)
    if precision_looks[-1] != args.max_seeds:
        precision_looks = np.append(precision_looks, args.max_seeds)
    decision_looks = np.asarray(args.looks)
    wall, cpu = time.perf_counter(), time.process_time()
    result = {"design": {"langs": LANGS, "setups": SETUPS, "categories": CATEGORIES, "sims": args.sims,
                         "targets": args.targets, "precision_looks": precision_looks.tolist(),
                         "decision_looks": decision_looks.tolist(), "delta": args.delta, "seed": args.seed,
                         "sigma_median": float(np.median(cells.std)),
                         "sigma_quartiles": np.quantile(cells.std, [0.25, 0.75]).round(4).tolist(),
                         "sigma_range": [float(cells.std.min()), float(cells.std.max())]},
              "precision": [precision_goal(cells, precision_looks, target, world, args.sims, rng)
                            for world in WORLDS for target in args.targets],
              "decision": [row for world in WORLDS
                           for row in decision_goal(cells, decision_looks, args.delta, world, args.sims, rng)]}
    result["seconds"] = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu}
    design = result["design"]
    print(f"design: {LANGS} languages x {SETUPS} setups x {CATEGORIES} categories, {args.sims} sweeps per world; "
          f"σ of MCC median {design['sigma_median']:.3f}, quartiles {design['sigma_quartiles']}, range "
          f"{design['sigma_range'][0]:.3f}–{design['sigma_range'][1]:.3f}")
    print(f"precision goal: 95 % t interval of every category's mean MCC at most {args.targets} wide, seeds "
          f"{precision_looks.tolist()}; decision goal: looks {decision_looks.tolist()} seeds per arm, α = {ALPHA}, "
          f"Δ = {args.delta}")
    print(tables(result))
    for row in result["precision"]:
        saved = row["fixed_same_precision_runs"] - row["adaptive_runs"]
        print(f"{row['world']}, target {row['target']:g}: adaptive {row['adaptive_runs']:.1f} runs vs fixed "
              f"{row['fixed_same_precision_runs']:.1f} at the same worst-category precision: {saved:.1f} runs saved "
              f"({1 - row['ratio_same_precision']:.0%})")
    print(f"{result['seconds']['wall']:.1f} s wall, {result['seconds']['cpu']:.1f} s CPU on {os.cpu_count()} cores "
          f"({platform.processor() or platform.machine()}), load average {os.getloadavg()[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
