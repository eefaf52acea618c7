"""Statistics that several commands share, owned by none of them.

Comparisons with multiplicity control (`multiplicity`), almost stochastic order between
seed distributions (`dominance`, optional deepsig extra), variance sources of a
seed_init × seed_order grid (`variance`), expected best validation score over n runs
(`expected_max`) and seeds needed to detect a difference (`power`).
"""
