"""Reports on seed stability: run directories or tidy CSVs → statistics, tables, heat maps, report.md.

Entry point: `nli-stability report runs=PATH [key=value ...]` or `python -m stability.report`
(`cli.py`, options in `stability/conf/report.yaml`). The page is a list of sections
(`section.py`, `sections/`), each building its tables, figures and markdown from one shared
`context.Context`. May import `stability.core` and `stability.statistics`; reads runs only
through `stability.core.runrecord`.
"""
