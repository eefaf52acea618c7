"""Statistics and figures that several commands share, owned by none of them.

The report, probing and W&B tracking all compute seed statistics the same way: Pearson
correlation between seeds' vectors (`correlation`: RS corr., docs/design.md, "Metrics"), per-category
mean ± σ over seeds (`seeds`), the multi-bootstrap over seeds and items (`bootstrap`), which
categories an item belongs to (`membership`), and the category × seed heat map (`figures`).
Comparisons with multiplicity control (`multiplicity`), almost stochastic order between
seed distributions (`dominance`, optional deepsig extra), variance sources of a
seed_init × seed_order grid (`variance`), expected best validation score over n runs
(`expected_max`), seeds needed to detect a difference (`power`), σ over seeds with its
bootstrap interval and tests of equal spread and mean between two methods (`spread`), intervals
for σ and σ ratios that hold at few seeds (`intervals`), the Wilson interval of a failure rate
(`rates`), and the simulation that measures all of these at the runs' own design (`calibration`,
with almost stochastic order vectorised in `aso_core`) answer a reviewer's questions about comparisons;
when to stop adding seeds, by group-sequential boundaries or a precision target (`sequential`), with
those rules' error rates measured in the same simulated worlds (`sequential_calibration`).
Keeping them here lets each command import them without importing another command.
May import `stability.core` only.
"""
