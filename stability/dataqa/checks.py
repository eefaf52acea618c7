"""Run every check over a language's files: per-file rates, per-category rates, findings, leaks.

Line level (language-confusion style): a text with at least `min_words` words is judged;
it fails when lid.176 names another language first with probability >= `min_confidence`
(the compressed model is unsure on short sentences: a weak guess is no evidence of a wrong
language) and that language is not one the config accepts (`dataqa_lid_accepted`). Word level:
every text passes when `words.word_findings` finds nothing. The pass rate of a file is
the harmonic mean of the two (0 when either is 0; empty when nothing was judged).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import permutations
from pathlib import Path

import numpy as np
import pandas as pd

from stability.core.languages import Language
from stability.core.progress import progress
from stability.core.qaflags import Flag
from stability.core.records import Example
from stability.core.taxonomy import COARSE_CATEGORIES, COARSE_OF, FINE_CATEGORIES
from stability.data.formats import repeated_idx
from stability.dataqa.duplicates import duplicates_within, shared_between, vectorise
from stability.dataqa.langid import LanguageIdentifier
from stability.dataqa.words import word_findings

DATAQA_COLUMNS = ["file", "n_texts", "n_judged", "line_pass_rate", "word_pass_rate", "pass_rate_hm",
                  "n_duplicates", "n_leaked",
                  # beyond the DESIGN contract
                  "role", "n_items", "n_exact_duplicates", "n_near_duplicates", "n_same_text", "n_repeated_idx"]
CATEGORY_COLUMNS = ["file", "level", "category", "coarse", "n_items", "n_texts", "n_judged", "line_pass_rate",
                    "word_pass_rate", "pass_rate_hm"]
LEAK_COLUMNS = ["file", "role", "other_file", "other_role", "n_shared", "n_exact"]
FIELDS = ("premise", "hypothesis")


@dataclass(frozen=True)
class Options:
    """Thresholds of the checks: the command's options, whose config (conf/dataqa.yaml) alone holds the defaults."""

    min_words: int
    min_confidence: float
    min_word_length: int
    allowed: str
    names: bool
    near_threshold: float
    lid_model: Path | None


@dataclass(frozen=True)
class InputFile:
    path: Path
    role: str
    examples: list[Example]


@dataclass
class QAResult:
    files: pd.DataFrame
    categories: pd.DataFrame
    leaks: pd.DataFrame
    flags: list[Flag] = field(default_factory=list)


def role_from_file(path: Path, examples: list[Example]) -> str:
    """diagnostic when items carry categories; else train / validation / test by the file name."""
    if any(example.categories for example in examples):
        return "diagnostic"
    stem = path.stem.lower()
    for role, marks in (("train", ("train",)), ("validation", ("val", "dev")), ("test", ("test",))):
        if any(mark in stem for mark in marks):
            return role
    return "other"


def harmonic_mean(a: float, b: float) -> float:
    if np.isnan(a) or np.isnan(b):
        return float("nan")
    return 0.0 if a + b == 0 else 2 * a * b / (a + b)


def _rate(passed: np.ndarray, judged: np.ndarray) -> float:
    return float(passed[judged].mean()) if judged.any() else float("nan")


@dataclass(frozen=True)
class _TextChecks:
    """Per text (items × 2 fields): judged at line level, line pass, word pass."""

    judged: np.ndarray
    line_pass: np.ndarray
    word_pass: np.ndarray


def _check_texts(source: InputFile, language: Language, options: Options, identifier: LanguageIdentifier,
                 flags: list[Flag]) -> _TextChecks:
    shape = (len(source.examples), len(FIELDS))
    judged, line_pass, word_pass = np.zeros(shape, bool), np.ones(shape, bool), np.ones(shape, bool)
    for i, example in enumerate(progress(source.examples, desc=f"data QA {source.path.name}", unit="pair")):
        for j, name in enumerate(FIELDS):
            text = getattr(example, name)
            flag = dict(file=str(source.path), lang=language.code, role=source.role, idx=example.idx, field=name,
                        text=text)
            if sum(any(c.isalpha() for c in token) for token in text.split()) >= options.min_words:
                judged[i, j] = True
                found = identifier.detect(text)
                if found.lang not in {language.code, *language.qa_lid_accepted} \
                        and found.score >= options.min_confidence:
                    line_pass[i, j] = False
                    flags.append(Flag(check="line", detected=found.lang, score=round(found.score, 4),
                                      reason=f"identified as '{found.lang}' (p = {found.score:.2f}), "
                                             f"not '{language.code}'", **flag))
            findings = word_findings(text, language, options.min_word_length, options.allowed, options.names)
            if findings:
                word_pass[i, j] = False
                what = "English words" if language.script == "cyrillic" else f"letters outside the {language.name} alphabet"
                flags.append(Flag(check="word", reason=f"{what}: {', '.join(findings)}", **flag))
    return _TextChecks(judged, line_pass, word_pass)


def _rates(checks: _TextChecks, rows: np.ndarray) -> dict[str, float]:
    judged, line_pass, word_pass = checks.judged[rows], checks.line_pass[rows], checks.word_pass[rows]
    line, word = _rate(line_pass, judged), _rate(word_pass, np.ones_like(word_pass))
    return {"n_texts": int(word_pass.size), "n_judged": int(judged.sum()), "line_pass_rate": line,
            "word_pass_rate": word, "pass_rate_hm": harmonic_mean(line, word)}


def _category_rows(source: InputFile, checks: _TextChecks) -> list[dict]:
    rows = []
    fine = [set(example.categories) for example in source.examples]
    groups = [("fine", name, lambda item, name=name: name in item) for name in FINE_CATEGORIES]
    groups += [("coarse", name, lambda item, name=name: any(COARSE_OF[c] == name for c in item))
               for name in COARSE_CATEGORIES]
    for level, name, member in groups:
        rows_of = np.array([member(item) for item in fine], bool)
        if rows_of.any():
            rows.append({"file": str(source.path), "level": level, "category": name,
                         "coarse": COARSE_OF.get(name, name), "n_items": int(rows_of.sum()),
                         **_rates(checks, rows_of)})
    return rows


def _pair_flag(source: InputFile, language: Language, example: Example, check: str, reason: str) -> Flag:
    return Flag(file=str(source.path), lang=language.code, role=source.role, idx=example.idx, field="pair",
                check=check, reason=reason, text=f"{example.premise} ||| {example.hypothesis}")


def run_qa(files: list[InputFile], language: Language, options: Options) -> QAResult:
    """Every check over every file; leakage between files of different roles."""
    identifier = LanguageIdentifier(options.lid_model)
    flags: list[Flag] = []
    vectors = vectorise([[(e.premise, e.hypothesis) for e in source.examples] for source in files])
    rows, category_rows, leak_rows = [], [], []
    leaked = [set() for _ in files]
    for (a, source), (b, other) in permutations(enumerate(files), 2):
        if source.role == other.role:
            continue
        shared = shared_between(vectors[a], vectors[b], options.near_threshold)
        leak_rows.append({"file": str(source.path), "role": source.role, "other_file": str(other.path),
                          "other_role": other.role, "n_shared": len(shared),
                          "n_exact": sum(exact for _, _, exact in shared)})
        for i, j, exact in shared:
            leaked[a].add(i)
            flags.append(_pair_flag(source, language, source.examples[i], "leak",
                                    f"{'same' if exact else 'near-same'} pair as item {other.examples[j].idx} of "
                                    f"{other.path.name} ({other.role})"))
    for k, source in enumerate(files):
        checks = _check_texts(source, language, options, identifier, flags)
        same_text = [i for i, (premise, hypothesis) in enumerate(zip(vectors[k].premises, vectors[k].hypotheses))
                     if premise == hypothesis]
        for i in same_text:
            flags.append(_pair_flag(source, language, source.examples[i], "same_text", "premise == hypothesis"))
        repeats = duplicates_within(vectors[k], options.near_threshold)
        for i, j, exact in repeats:
            flags.append(_pair_flag(source, language, source.examples[i], "duplicate" if exact else "near_duplicate",
                                    f"repeats item {source.examples[j].idx}" + ("" if exact else " (near)")))
        n_exact = sum(exact for _, _, exact in repeats)
        same_idx = repeated_idx(source.examples)
        for i, j in same_idx:
            flags.append(_pair_flag(source, language, source.examples[i], "repeated_idx",
                                    f"same idx as item no. {j + 1} of the file"))
        rows.append({"file": str(source.path), **_rates(checks, np.ones(len(source.examples), bool)),
                     "n_duplicates": len(repeats), "n_leaked": len(leaked[k]), "role": source.role,
                     "n_items": len(source.examples), "n_exact_duplicates": n_exact,
                     "n_near_duplicates": len(repeats) - n_exact, "n_same_text": len(same_text),
                     "n_repeated_idx": len(same_idx)})
        if source.role == "diagnostic":
            category_rows += _category_rows(source, checks)
    return QAResult(pd.DataFrame(rows, columns=DATAQA_COLUMNS), pd.DataFrame(category_rows, columns=CATEGORY_COLUMNS),
                    pd.DataFrame(leak_rows, columns=LEAK_COLUMNS), flags)
