"""What identity hashing costs: a sweep with input hashing vs the same sweep without, side by side.

    python benchmarks/identity_hashing.py [--seeds 12] [--rounds 2] [--big-gb 1]

1. The sweep: `nli-stability train experiment=smoke seed=0..S-1` (the built-in data, the tiny
   model), run `--rounds` times each way, alternating, each time into a fresh folder with a
   fresh cache: *with* is the command as shipped; *without* is the same command in a process
   where `run_inputs` (the only caller of the hashing) returns nothing. Prints both walls, the
   overhead in percent (target <= 2 %), and the time the sweep spent inside `run_inputs`.
2. A large file: a `--big-gb` GB diagnostic file read by S runs of one sweep. Each run asks for
   the inputs, as a run does; prints how many times the file was really hashed (1: the hash
   is cached by path, size and mtime) and the time of the first vs the other requests.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = "--child"


def _child(mode: str, timings: Path, argv: list[str]) -> None:
    """Run the training command in this process, hashing (timed) or not."""
    import stability.finetune.run as run_module
    from stability.train import main

    real = run_module.run_inputs

    def timed(*args, **kwargs):
        started = time.perf_counter()
        inputs = real(*args, **kwargs) if mode == "with" else {}
        with timings.open("a") as handle:
            handle.write(f"{time.perf_counter() - started}\n")
        return inputs

    run_module.run_inputs = timed
    main(argv)


def _sweep(mode: str, seeds: int, work: Path) -> tuple[float, float]:
    """One sweep in a fresh folder and cache; its wall time and the seconds spent on inputs."""
    folder = Path(tempfile.mkdtemp(dir=work, prefix=f"{mode}-"))
    timings = folder / "inputs_seconds.txt"
    command = [sys.executable, __file__, _CHILD, mode, str(timings), "experiment=smoke",
               f"seed=0..{seeds - 1}", f"paths.output_dir={folder / 'out'}"]
    env = {**os.environ, "NLI_STABILITY_CACHE": str(folder / "cache"), "TOKENIZERS_PARALLELISM": "false"}
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"error: the {mode} sweep failed:\n{done.stderr[-3000:]}")
    spent = sum(float(line) for line in timings.read_text().split())
    return wall, spent


def _big_file(gb: float, seeds: int, work: Path) -> None:
    """S runs of one sweep asking for the inputs of a large diagnostic file."""
    from stability.core import contenthash
    from stability.core.config import compose_config
    from stability.core.schemas.train import train_settings
    from stability.data.inputs import run_inputs

    big = work / "big_diagnostic.jsonl"
    block = (json.dumps({"idx": "0", "premise": "p" * 200, "hypothesis": "h", "label": "entailment"}) + "\n").encode()
    with big.open("wb") as handle:
        for _ in range(int(gb * (1 << 30)) // len(block)):
            handle.write(block)
    real, hashed = contenthash.sha256_of_file, []
    contenthash.sha256_of_file = lambda path: hashed.append(path) or real(path)
    os.environ["NLI_STABILITY_CACHE"] = str(work / "big-cache")
    seconds = []
    for seed in range(seeds):
        settings = train_settings(compose_config(["experiment=smoke", f"seed={seed}", f"data.diagnostic={big}"]))
        started = time.perf_counter()
        run_inputs(settings, settings.model)
        seconds.append(time.perf_counter() - started)
    big_hashes = sum(path == big for path in hashed)
    print(f"{big.stat().st_size / (1 << 30):.2f} GB diagnostic file, {seeds} runs: hashed {big_hashes} time(s); "
          f"first run's inputs {seconds[0]:.2f} s, the others {1000 * max(seconds[1:]):.1f} ms at most")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == _CHILD:
        _child(sys.argv[2], Path(sys.argv[3]), sys.argv[4:])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=12, help="runs per sweep (seeds 0..S-1)")
    parser.add_argument("--rounds", type=int, default=2, help="sweeps each way, alternating")
    parser.add_argument("--big-gb", type=float, default=1.0, help="size of the large file (0: skip part 2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        walls: dict[str, list[float]] = {"with": [], "without": []}
        spent: list[float] = []
        for round_ in range(args.rounds):
            for mode in ("with", "without") if round_ % 2 == 0 else ("without", "with"):
                wall, seconds = _sweep(mode, args.seeds, work)
                walls[mode].append(wall)
                if mode == "with":
                    spent.append(seconds)
                print(f"round {round_ + 1}, {mode} hashing: {wall:.1f} s", flush=True)
        with_wall, without_wall = (sum(walls[mode]) / args.rounds for mode in ("with", "without"))
        print(f"{args.seeds}-run smoke sweep: with hashing {with_wall:.1f} s, without {without_wall:.1f} s, "
              f"overhead {100 * (with_wall / without_wall - 1):+.2f} % (target <= 2 %); time inside run_inputs "
              f"{sum(spent) / len(spent):.3f} s a sweep ({100 * sum(spent) / sum(walls['with']):.2f} % of its wall)")
        if args.big_gb > 0:
            _big_file(args.big_gb, args.seeds, work)


if __name__ == "__main__":
    main()
