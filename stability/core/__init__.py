"""Shared contracts of every part of the framework: the example record and labels, the
diagnostic taxonomy, the metrics (MCC), setup names, language facts, the run record
(the run directory's files), user errors, atomic writes, markdown tables, provenance,
config location, logging and progress bars.

Imports nothing from the rest of `stability`; everything else may import it.
"""
