"""report.html in a real browser: Debian's headless Chromium through its chromedriver (selenium),
started once for the module (`benchmarks/report_page.py` knows its flags). The page of a sweep with
everything the report can show (two languages' built-in diagnostic items with their text, two setups
compared, fused seeds, training dynamics, an adaptive sweep's record, an extra evaluation set) must
open from file:// with no console error and no request, show report.md's sections and cells, sort,
filter, and say on hover and click what the CSVs and predictions.jsonl hold; the page of a report of
a tidy CSV alone and that of the README's smoke sweep (real runs) must open as cleanly, with report.md's
sections. Each section's screenshot is written to SHOTS for a person to read."""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import front_door
from report_runs import noisy_predictions, write_dynamics, write_run
from test_decided_pairs import _write_record

from annotators.features import FeatureSet
from stability.core.config import compose_config
from stability.core.markdown import num
from stability.core.runrecord import RunDir
from stability.data.run_items import run_diagnostic_records
from stability.report import cli as report_cli

REPO = Path(__file__).resolve().parents[2]
sys.path.append(str(REPO / "benchmarks"))
import report_page  # noqa: E402  (benchmarks/ is not a package)

pytestmark = pytest.mark.slow
SHOTS = Path(os.environ.get("NLI_STABILITY_SCREENSHOTS", REPO / "outputs" / "screenshots" / "report-page"))
LANGS, SETUPS, SEEDS, N_TRAIN = ("en", "fr"), ("rte", "rte+mnli10000"), (0, 1, 2), 30
DECIMAL = re.compile(r"-?\d+\.\d+")
NETWORK = ("http:", "https:", "ws:", "wss:", "ftp:")


def _no_features(pairs: list[tuple[str, str]], lang: str) -> list[FeatureSet]:
    return [FeatureSet(frozenset(), frozenset(), frozenset({"Negation"})) for _ in pairs]


def _sweep(root: Path) -> dict[str, pd.DataFrame]:
    """The runs under `root`, and each language's diagnostic records (what the page must show)."""
    rng = np.random.default_rng(3)
    records = {}
    for lang in LANGS:
        config = compose_config(["experiment=smoke", f"lang={lang}"])
        RunDir(root.parent / "texts" / lang).write_config(config)
        items = run_diagnostic_records(root.parent / "texts" / lang)
        assert list(items["idx"]) == [str(i) for i in range(len(items))]   # write_run's idx
        records[lang] = items
        labels, categories = items["label"].to_numpy(), items["categories"].tolist()
        for setup, accuracy in zip(SETUPS, (0.65, 0.8)):
            for seed in SEEDS:
                final = noisy_predictions(rng, labels, accuracy)
                run = write_run(root, lang, setup, seed, labels, final, categories, n_added=10000 * (setup != "rte"))
                RunDir(run).write_config(config)
                metrics = json.loads((run / "metrics.json").read_text())
                metrics.update(schema=6, engine="fused3", fused_with=list(SEEDS), extra_eval={
                    "held-out": {"accuracy": 0.5 + 0.1 * seed, "mcc": 0.1 * seed, "n_items": 40, "degenerate": False}})
                (run / "metrics.json").write_text(json.dumps(metrics))
                if setup == "rte":
                    _dynamics(run, items, final, rng)
    return records


def _dynamics(run: Path, items: pd.DataFrame, final: np.ndarray, rng: np.random.Generator) -> None:
    """Three validations: training items drift towards their label, the last diagnostic one is final."""
    train_labels = np.arange(N_TRAIN) % 2
    frame = pd.DataFrame(
        [("train", f"t{i}", int(label), f"training premise {i}", f"training hypothesis {i}", [])
         for i, label in enumerate(train_labels)]
        + [("diagnostic", r.idx, int(r.label), r.premise, r.hypothesis, list(r.categories)) for r in items.itertuples()],
        columns=["split", "idx", "label", "premise", "hypothesis", "categories"])
    p_gold = np.clip(np.linspace(0.4, 0.9, 3)[:, None] + rng.normal(0, 0.2, (3, N_TRAIN)), 0, 1)
    steps = [noisy_predictions(rng, items["label"].to_numpy(), 0.6) for _ in range(2)] + [final]
    prob = np.hstack([np.where(train_labels == 0, p_gold, 1 - p_gold), np.where(np.array(steps) == 0, 0.8, 0.2)])
    write_dynamics(run, frame, prob, np.where(prob >= 0.5, 0, 1))


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> tuple[Path, Path, dict[str, pd.DataFrame]]:
    """(the runs, their report's folder, each language's records)."""
    root = tmp_path_factory.mktemp("page")
    records = _sweep(root / "runs")
    _write_record(root / "runs", list(SETUPS))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(report_cli, "annotate_pairs", _no_features)
        # figures=false: the PNGs are most of this report's time; the views then close their sections, and
        # test_cli's rich report checks that the page inlines the figures that stay static
        report_cli.main([f"runs={root / 'runs'}", f"out={root / 'report'}", "bootstrap=50", "calibration_sims=40",
                         f"compare=[{','.join(SETUPS)}]", "figures=false"])
    return root / "runs", root / "report", records


@pytest.fixture(scope="module")
def csv_report(tmp_path_factory) -> Path:
    """The report of a tidy CSV alone: no predictions, no intervals, no figures."""
    root = tmp_path_factory.mktemp("csv")
    rows = [f"sv,rte,{seed},{category},{0.1 * seed + 0.05 * k:.2f}"
            for seed in SEEDS for k, category in enumerate(("Negation", "Quantifiers", "Conjunction"))]
    (root / "sv.csv").write_text("lang,setup,seed,category,mcc\n" + "\n".join(rows) + "\n")
    report_cli.main([f"runs={root / 'sv.csv'}", f"out={root / 'report'}", "bootstrap=0", "calibration_sims=0",
                     "figures=false"])
    return root / "report"


@pytest.fixture(scope="module")
def smoke_report(tmp_path_factory) -> Path:
    """The README's first commands: `train experiment=smoke`, then `report runs=` of its folder, real runs."""
    root = tmp_path_factory.mktemp("smoke")
    trained = front_door(["train", "experiment=smoke", f"paths.output_dir={root}"], root)
    assert trained.returncode == 0, trained.stderr
    reported = front_door(["report", f"runs={root / 'smoke'}", "calibration_sims=100"], root)
    assert reported.returncode == 0, reported.stderr
    return root / "smoke" / "report"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    pytest.importorskip("selenium", reason="selenium is in the dev extra: pip install -e '.[dev]'")
    if not (report_page.CHROMIUM.is_file() and report_page.CHROMEDRIVER.is_file()):
        pytest.skip("headless Chromium not found: apt-get install -y chromium chromium-driver")
    driver = report_page.chromium(tmp_path_factory.mktemp("profile"))
    yield driver
    driver.quit()


def _open(driver, folder: Path) -> None:
    """Load the page afresh from file:// (the logs emptied first) and wait for its script."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get_log("browser")
    driver.get_log("performance")
    driver.get((folder / "report.html").as_uri())
    WebDriverWait(driver, 10).until(lambda d: d.execute_script("return document.body.dataset.ready === '1'"))


@pytest.fixture
def page(browser, study):
    _open(browser, study[1])
    return browser


def _hover(driver, element) -> str:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).move_to_element(element).perform()
    return driver.find_element("id", "tip").get_attribute("textContent")


def _view(driver, title: str):
    return driver.find_element("xpath", f"//div[contains(@class,'view')][h3[text()={json.dumps(title, ensure_ascii=False)}]]")


def _markdown_tables(markdown: str) -> list[list[list[str]]]:
    """Every pipe table of report.md as rows of cells (the separator line left out, `\\|` unescaped)."""
    tables, current = [], []
    for line in markdown.splitlines() + [""]:
        if line.startswith("|"):
            if not re.fullmatch(r"\|(---\|)+", line):
                current.append([cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line)[1:-1]])
        elif current:
            tables.append(current)
            current = []
    return tables


def _headings(markdown: str) -> list[str]:
    """report.md's section headings, as the page's navigation names them."""
    return [line.lstrip("#").strip().replace("`", "") for line in markdown.splitlines() if re.match(r"#{1,2} ", line)]


def _navigation(driver) -> list[str]:
    return [link.get_attribute("textContent") for link in driver.find_elements("css selector", "nav li a")]


def _plain(text: str) -> str:
    return re.sub(r"[*`]", "", text).strip()


def test_the_pages_open_offline_without_console_errors_or_requests(browser, study, csv_report, smoke_report):
    for folder in (study[1], csv_report, smoke_report):
        _open(browser, folder)
        errors = [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]
        assert not errors, errors
        events = [json.loads(entry["message"])["message"] for entry in browser.get_log("performance")]
        requests = [event["params"] for event in events if event["method"] == "Network.requestWillBeSent"]
        own = [r["request"]["url"] for r in requests if r["documentURL"] == (folder / "report.html").as_uri()]
        assert own and all(url.startswith(("file://", "data:")) for url in own), [url[:80] for url in own]
        # nor any other request (the browser's own pages, chrome://, may still load after its start)
        assert not [r["request"]["url"] for r in requests if r["request"]["url"].startswith(NETWORK)]
        assert browser.find_elements("css selector", "section")
        assert _navigation(browser) == _headings((folder / "report.md").read_text(encoding="utf-8"))


def test_the_sections_are_report_md_s_in_its_order_and_its_tables_hold_its_cells(page, study):
    markdown = (study[1] / "report.md").read_text(encoding="utf-8")
    headings = _headings(markdown)
    assert _navigation(page) == headings
    for title in ("Adaptive design", "Extra evaluation sets", "Data maps", "Instability atlas"):
        assert any(heading.startswith(title) for heading in headings), title
    shown = page.execute_script("""return [...document.querySelectorAll('main table')].filter(t => !t.closest('.view'))
        .map(t => [...t.rows].map(r => [...r.cells].map(c => c.textContent.trim())))""")
    expected = _markdown_tables(markdown)
    assert len(shown) == len(expected) > 20
    for table, cells in zip(shown, expected):
        assert [[_plain(cell) for cell in row] for row in table] == [[_plain(cell) for cell in row] for row in cells]


def _summary(driver):
    return driver.find_element("xpath", "//section[@id='summary']//table")


def _column(table, i: int) -> list[str]:
    return [row.find_elements("tag name", "td")[i].get_attribute("textContent") for row in
            table.find_elements("css selector", "tbody tr") if row.is_displayed()]


def test_a_click_on_a_header_sorts_the_rows_by_that_column_and_a_second_reverses_them(page):
    table = _summary(page)
    header = [cell.get_attribute("textContent") for cell in table.find_elements("css selector", "thead th")]
    column = header.index("overall MCC")
    before = sorted(map(tuple, page.execute_script(
        "return [...arguments[0].tBodies[0].rows].map(r => [...r.cells].map(c => c.textContent))", table)))
    means = lambda: [float(cell.split(" ± ")[0]) for cell in _column(table, column)]  # noqa: E731
    table.find_elements("css selector", "thead th")[column].click()
    assert means() == sorted(means()) and len(means()) == 4 and len(set(means())) > 1
    table.find_elements("css selector", "thead th")[column].click()
    assert means() == sorted(means(), reverse=True)
    after = sorted(map(tuple, page.execute_script(
        "return [...arguments[0].tBodies[0].rows].map(r => [...r.cells].map(c => c.textContent))", table)))
    assert after == before


def test_choosing_a_language_hides_the_other_language_s_rows_and_views(page):
    from selenium.webdriver.support.ui import Select

    Select(page.find_element("id", "filter-lang")).select_by_value("fr")
    languages = page.execute_script("""return [...document.querySelectorAll('main table')].filter(t => !t.closest('.view'))
        .flatMap(t => { const i = [...t.tHead.rows[0].cells].map(c => c.textContent.trim()).indexOf('lang');
                        return i < 0 ? [] : [...t.tBodies[0].rows].map(r => r.cells[i].textContent.trim()); })""")
    assert languages and set(languages) <= {"fr", ""} and "fr" in languages
    assert not _view(page, "en · rte: category MCC per seed").is_displayed()
    assert _view(page, "fr · rte: category MCC per seed").is_displayed()
    heads = _view(page, "rte: mean category MCC per language").find_elements("css selector", "thead th")
    assert [cell.text for cell in heads if cell.is_displayed()] == ["category", "fr"]
    assert set(_column(_summary(page), 0)) == {"fr"}
    Select(page.find_element("id", "filter-lang")).select_by_value("")
    assert set(_column(_summary(page), 0)) == {"en", "fr"}


def _condition_rows(study, name: str, lang: str, setup: str) -> pd.DataFrame:
    table = pd.read_csv(study[1] / name, keep_default_na=False, na_values=[""])
    return table[(table["lang"] == lang) & (table["setup"] == setup)].set_index("category")


def _interval_form(study, lang: str, setup: str) -> bool:
    """Whether report.md prints the (lang, setup) bootstrap interval as an interval (else *too few seeds*)."""
    section = (study[1] / "report.md").read_text(encoding="utf-8").split("## Bootstrap intervals", 1)[1]
    row = next(line for line in section.splitlines() if line.startswith(f"| {lang} | {setup} |"))
    return "too few seeds" not in row


def test_hovering_a_heat_map_cell_shows_the_csv_s_value_its_interval_and_its_items(page, study):
    stats = _condition_rows(study, "category_stats.csv", "fr", "rte+mnli10000")
    ci = _condition_rows(study, "bootstrap_ci.csv", "fr", "rte+mnli10000")
    view = _view(page, "fr · rte+mnli10000: category MCC per seed")
    rows = page.execute_script("return [...arguments[0].querySelectorAll('tbody tr')].map(r => "
                               "[r.cells[0].textContent, ...[...r.querySelectorAll('td.cell')].map(c => [c.textContent, "
                               "c.dataset.tip])])", view)
    as_interval = _interval_form(study, "fr", "rte+mnli10000")
    checked = 0
    for category, *cells in rows:
        if stats.loc[category, "n_items"] == 0:
            continue
        interval = ci.loc[category]
        shown = (f"{num(interval.estimate)} [{num(interval.ci_low)}, {num(interval.ci_high)}]" if as_interval
                 else f"{num(interval.estimate)}; too few seeds (measured coverage")
        for seed, (text, tip) in zip(SEEDS, cells):
            value = num(stats.loc[category, f"seed_{seed}"])
            assert text == value and f"seed {seed}\nMCC {value}" in tip
            assert f"items: {stats.loc[category, 'n_items']}" in tip and shown in tip
        assert cells[-1][0] == num(stats.loc[category, "mcc_mean"]) and shown in cells[-1][1]
        checked += 1
    assert checked >= 10
    cell = view.find_element("xpath", ".//tr[th/button[text()='Negation']]/td[contains(@class,'cell')][2]")
    assert _hover(page, cell) == cell.get_attribute("data-tip") and "seed 1\n" in cell.get_attribute("data-tip")
    languages = _view(page, "rte: mean category MCC per language")
    row = languages.find_element("xpath", ".//tr[th/button[text()='Negation']]")
    for lang, cell in zip(LANGS, row.find_elements("css selector", "td")):
        mean = _condition_rows(study, "category_stats.csv", lang, "rte").loc["Negation", "mcc_mean"]
        assert cell.text == num(mean) and f"mean MCC {num(mean)}" in _hover(page, cell)


def test_a_click_on_a_category_lists_its_items_with_each_seed_s_prediction_as_predictions_jsonl_has_it(page, study):
    runs, _, records = study
    view = _view(page, "en · rte: category MCC per seed")
    view.find_element("xpath", ".//button[text()='Negation']").click()
    panel = view.find_element("css selector", ".items-panel")
    assert panel.is_displayed()
    n_items = _condition_rows(study, "category_stats.csv", "en", "rte").loc["Negation", "n_items"]
    assert f"Negation · rte: {n_items} items in en, {n_items} in fr" == panel.find_element("tag name", "h4").text
    predictions = {(lang, seed): {row["idx"]: row for row in map(json.loads,
                                  (runs / f"{lang}_rte_seed{seed}" / "predictions.jsonl").read_text().splitlines())}
                   for lang in LANGS for seed in SEEDS}
    rows = page.execute_script("return [...arguments[0].querySelectorAll('tbody tr')].map(r => [...r.cells]"
                               ".map(c => c.textContent))", panel)
    idx, seen = None, set()
    for cells in rows:
        idx = cells[0] or idx
        lang = cells[1]
        seen.add((lang, idx))
        record = records[lang].set_index("idx").loc[idx]
        assert "Negation" in record.categories and cells[4] == record.premise and cells[5] == record.hypothesis
        assert cells[2] == ("entailment", "not_entailment")[int(record.label)]
        for seed, shown in zip(SEEDS, cells[6:]):
            line = predictions[(lang, seed)][idx]
            assert shown == f"{'EN'[line['pred']]} {line['prob_entailment']:.3f}"
    assert {idx for lang, idx in seen if lang == "en"} == \
        {idx for idx, line in predictions[("en", 0)].items() if "Negation" in line["categories"]}
    assert len(seen) == 2 * n_items   # every item in both languages: the sets are aligned by idx


def test_a_data_map_point_shows_its_training_item_on_hover(page, study):
    from selenium.webdriver.common.action_chains import ActionChains

    table = pd.read_csv(study[1] / "data_map.csv", keep_default_na=False, na_values=[""])
    means = table[(table["seed"] == "mean") & (table["lang"] == "fr")].set_index("idx")
    canvas = _view(page, "fr · rte: data map, seed-averaged (30 items)").find_element("tag name", "canvas")
    page.execute_script("arguments[0].scrollIntoView({block: 'center'})", canvas)
    tips = set()
    for i in (0, 7, 19):
        x, y = page.execute_script(f"return arguments[0].pointAt({i})", canvas)
        box = canvas.rect
        ActionChains(page).move_to_element_with_offset(canvas, int(x - box["width"] / 2),
                                                       int(y - box["height"] / 2)).perform()
        tip = page.find_element("id", "tip").get_attribute("textContent")
        item = re.search(r"item (t\d+) ", tip).group(1)
        row = means.loc[item]
        assert f"premise: training premise {item[1:]}\n" in tip
        assert f"confidence {num(row.confidence)}, variability {num(row.variability)}" in tip
        tips.add(item)
    assert len(tips) > 1


def test_the_atlas_finds_items_by_any_word(page, study):
    atlas = pd.read_csv(study[1] / "instability_atlas.csv", keep_default_na=False, na_values=[""])
    view = page.find_element("css selector", ".view.atlas")
    query = "musée"
    view.find_element("tag name", "input").send_keys(query)
    matching = atlas[atlas["premise"].str.lower().str.contains(query) | atlas["hypothesis"].str.lower().str.contains(query)]
    assert len(matching) and view.find_element("css selector", ".count").text.startswith(f"{len(matching)} of {len(atlas)}")
    shown = page.execute_script("return [...arguments[0].querySelectorAll('tbody tr')].map(r => r.cells[9].textContent)", view)
    assert sorted(shown) == sorted(matching["premise"])


def test_every_number_the_page_shows_is_report_md_s_or_a_csv_s(page, study):
    runs, report, records = study
    for title in ("en · rte: category MCC per seed", "rte+mnli10000: mean category MCC per language"):
        _view(page, title).find_element("xpath", ".//button[text()='Quantifiers']").click()
    text = page.execute_script("return document.querySelector('main').innerText + '\\n' + "
                               "[...document.querySelectorAll('[data-tip]')].map(c => c.dataset.tip).join('\\n')")
    allowed = set(DECIMAL.findall((report / "report.md").read_text(encoding="utf-8")))
    for csv in report.glob("*.csv"):
        values = pd.read_csv(csv).select_dtypes("number").to_numpy().ravel()
        allowed |= {num(float(value)) for value in values}
    for items in records.values():   # numbers in the items' own text
        allowed |= set(DECIMAL.findall(" ".join(items["premise"]) + " " + " ".join(items["hypothesis"])))
    for path in runs.rglob("predictions.jsonl"):
        allowed |= {f"{json.loads(line)['prob_entailment']:.3f}" for line in path.read_text().splitlines()}
    shown = DECIMAL.findall(text)
    assert len(shown) > 1000
    assert not sorted(set(shown) - allowed)


def test_a_screenshot_of_each_section_is_written_for_a_person_to_read(page):
    import base64

    folder = SHOTS / "study"
    folder.mkdir(parents=True, exist_ok=True)
    sections = page.find_elements("css selector", "main section")
    for number, section in enumerate(sections):
        box = page.execute_script("const r = arguments[0].getBoundingClientRect(); "
                                  "return [r.left + scrollX, r.top + scrollY, r.width, r.height]", section)
        shot = page.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": box[0], "y": box[1], "width": box[2], "height": min(box[3], 6000), "scale": 1}})
        path = folder / f"{number:02d}-{section.get_attribute('id')}.png"
        path.write_bytes(base64.b64decode(shot["data"]))
        assert path.stat().st_size > 2000
    assert len(list(folder.glob("*.png"))) >= len(sections) > 15
