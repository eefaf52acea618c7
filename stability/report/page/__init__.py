"""report.html, the report as a page to browse (`build.write_page`): report.md's sections with
navigation, sortable and filterable tables, interactive heat maps with their items, data maps and
the atlas, in one file that opens offline."""
