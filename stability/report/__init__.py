"""Reports on seed stability: run directories or tidy CSVs → statistics, tables, heat maps, report.md.

Entry point: `python -m stability.report PATH... [--out DIR]` (see `cli.py`).
May import `stability.core`; reads runs only through `stability.core.runrecord`.
"""
