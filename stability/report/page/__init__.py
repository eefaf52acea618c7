"""report.html, the report as a page to browse (`build.write_page`): report.md's sections with
navigation, sortable and filterable tables, interactive heat maps with their items, data maps and
the atlas, in one file that opens offline."""

PAGE_FILE = "report.html"   # here, not in build.py: `nli-stability view` names it without the report's imports
