"""The report's page (report.html) at the study's size: its bytes, its time to become usable in
headless Chromium, and the report command's extra time for it against report.md alone.

A synthetic sweep of the study's design (5 languages × 2 setups × 6 seeds × 1,104 diagnostic items,
each item's premise and hypothesis drawn from the built-in diagnostic set's words of its language,
two categories per item), as run directories with metrics.json and predictions.jsonl. The report
runs in this process twice on it with the same options, html=false (the baseline: report.md, CSVs,
PNGs) and html=true, and the page's own time is measured inside the second run. Time to usable: the
page's `usable` mark (its script has drawn every view and wired every table), from navigation start,
loaded from file:// `--loads` times in one headless Chromium (Debian's chromium and chromium-driver).

    python benchmarks/report_page.py [--langs 5] [--seeds 6] [--items 1104] [--calibration-sims 500] [--loads 5]
"""
from __future__ import annotations

import argparse
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from stability.core.languages import language_codes
from stability.core.metrics import score_diagnostic
from stability.core.runrecord import Prediction, RunDir, RunRecord
from stability.core.schemas.report import ReportSchema
from stability.core.taxonomy import COARSE_OF, FINE_CATEGORIES
from stability.report import cli
from stability.report.context import prepare

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
# what keeps Chromium off the network and out of the user's profile (as root it needs --no-sandbox)
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--window-size=1400,1000")
SETUPS = (("rte", 0, 0.62), ("rte+mnli10000", 10000, 0.75))   # setup, MNLI pairs added, accuracy


def chromium(profile: Path):
    """Headless Chromium driven by selenium through Debian's chromedriver, with a fresh profile in
    `profile`, logging the console and the network (`goog:loggingPrefs`)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.binary_location = str(CHROMIUM)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)


def usable_ms(driver, page: Path) -> float:
    """Milliseconds from navigation start to the page's `usable` mark."""
    driver.get(page.resolve().as_uri())
    return float(driver.execute_script("return performance.getEntriesByName('usable')[0].startTime"))


def synthetic_records(lang: str, n_items: int, rng: np.random.Generator) -> pd.DataFrame:
    """Diagnostic records with the study's shape: idx, sentences of 8-20 words of the language's
    built-in diagnostic set, a label and two fine categories per item."""
    builtin = Path(__file__).resolve().parents[1] / "stability" / "data" / "builtin" / lang / "diagnostic.jsonl"
    words = pd.read_json(builtin, lines=True)["sentence1"].str.split().explode().tolist()

    def sentence() -> str:
        return " ".join(rng.choice(words, rng.integers(8, 21))) + "."

    return pd.DataFrame({
        "idx": [str(i) for i in range(n_items)], "label": np.random.default_rng(0).integers(0, 2, n_items),
        "premise": [sentence() for _ in range(n_items)], "hypothesis": [sentence() for _ in range(n_items)],
        "categories": [sorted({FINE_CATEGORIES[i % 33], FINE_CATEGORIES[(i * 7 + 3) % 33]}) for i in range(n_items)]})


def write_study(root: Path, langs: list[str], seeds: int, n_items: int) -> dict[str, pd.DataFrame]:
    """The sweep's run directories under `root`; each language's records, for the report's reader."""
    rng = np.random.default_rng(1)
    records = {lang: synthetic_records(lang, n_items, rng) for lang in langs}
    for lang, items in records.items():
        labels, categories = items["label"].to_numpy(), items["categories"].tolist()
        coarse = [sorted({COARSE_OF[name] for name in names}) for names in categories]
        for setup, added, accuracy in SETUPS:
            for seed in range(seeds):
                preds = np.where(rng.random(n_items) < accuracy, labels, 1 - labels)
                prob = np.clip(np.where(preds == 0, 0.75, 0.25) + rng.normal(0, 0.2, n_items), 0, 1)
                run = RunDir(root / lang / setup / f"seed{seed}")
                run.path.mkdir(parents=True)
                run.write_predictions(Prediction(idx, int(gold), int(pred), float(p), tuple(names))
                                      for idx, gold, pred, p, names in zip(items["idx"], labels, preds, prob, categories))
                scores = score_diagnostic(labels.tolist(), preds.tolist(), categories, coarse)
                run.write_record(RunRecord(lang=lang, setup=setup, seed=seed, n_added=added, n_items=n_items,
                                           val_accuracy=accuracy, val_majority=0.5, overall_mcc=scores.overall_mcc,
                                           mean_category_mcc=scores.mean_category_mcc,
                                           category_mcc=scores.category_mcc, category_n=scores.category_n,
                                           coarse_mcc=scores.coarse_mcc, coarse_n=scores.coarse_n,
                                           degenerate=scores.degenerate))
    return records


def timed_report(options: ReportSchema, records: dict[str, pd.DataFrame]) -> float:
    """Seconds of the report (read, check, every section, the files) in this process."""
    start = time.perf_counter()
    cli.write_report(prepare(options, None, lambda run: records[run.parts[-3]]))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--langs", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=6)
    parser.add_argument("--items", type=int, default=1104)
    parser.add_argument("--calibration-sims", type=int, default=500, help="the report's default")
    parser.add_argument("--bootstrap", type=int, default=1000, help="the report's default")
    parser.add_argument("--repeats", type=int, default=2, help="reports of each kind, alternating; the fastest counts")
    parser.add_argument("--loads", type=int, default=5, help="page loads in Chromium (0: none)")
    args = parser.parse_args()
    langs = list(language_codes())[:args.langs]
    work = Path(tempfile.mkdtemp(prefix="report-page-"))
    try:
        records = write_study(work / "runs", langs, args.seeds, args.items)
        common = dict(runs=[str(work / "runs")], calibration_sims=args.calibration_sims, bootstrap=args.bootstrap)
        page_seconds, baselines, with_pages = [], [], []
        write_page = cli.write_page

        def timed_page(*arguments):
            start = time.perf_counter()
            try:
                return write_page(*arguments)
            finally:
                page_seconds.append(time.perf_counter() - start)

        cli.write_page = timed_page
        for _ in range(args.repeats):
            baselines.append(timed_report(ReportSchema(out=str(work / "md"), html=False, **common), records))
            with_pages.append(timed_report(ReportSchema(out=str(work / "html"), html=True, **common), records))
        cli.write_page = write_page
        baseline, with_page, page_time = min(baselines), min(with_pages), min(page_seconds)
        page = work / "html" / "report.html"
        print(f"sweep: {len(langs)} languages × {len(SETUPS)} setups × {args.seeds} seeds × {args.items} items; "
              f"calibration_sims={args.calibration_sims}, bootstrap={args.bootstrap}")
        text = page.read_text(encoding="utf-8")
        images = sum(map(len, re.findall(r"data:image/png;base64,[A-Za-z0-9+/=]+", text)))
        data = len(re.search(r'<script type="application/json" id="page-data">(.*?)</script>', text, re.S).group(1))
        print(f"report.html: {page.stat().st_size / 1e6:.2f} MB (budget 10 MB): inline PNGs {images / 1e6:.2f} MB, "
              f"the views' data {data / 1e6:.2f} MB, report.md's sections, styles and script the rest")
        print(f"report (fastest of {args.repeats}), html=false: {baseline:.1f} s; html=true: {with_page:.1f} s, of which "
              f"the page {page_time:.2f} s: {page_time / baseline:.1%} of the report without it (budget 20 %); "
              f"whole-run difference {(with_page - baseline) / baseline:+.1%}")
        if args.loads and CHROMIUM.is_file() and CHROMEDRIVER.is_file():
            driver = chromium(work / "profile")
            try:
                loads = [usable_ms(driver, page) for _ in range(args.loads)]
            finally:
                driver.quit()
            print(f"usable in headless Chromium: median {statistics.median(loads):.0f} ms, worst {max(loads):.0f} ms "
                  f"over {len(loads)} loads from file:// (budget 3000 ms)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
