"""Layer-wise linear probes on pretrained and fine-tuned encoders (docs/design.md, "Purpose" and "Analysis outputs").

`nli-stability probe runs=PATH` (= `python -m probing`) mean-pools every hidden layer of each encoder (the
runs' saved weights, the pretrained encoder they started from, and a randomly initialised
control), labels pairs by the annotator (or by the diagnostic set's gold categories),
fits L2 logistic-regression probes for all layers, tasks and strengths at once, and
writes probing.csv, probing.md and one figure per task.

May import `stability.core`, `stability.data`, `stability.statistics` (bootstrap, correlation
and `figures.safe_name`) and `annotators`; `stability` never imports it. The command (`cli`)
runs through `stability.core.command` like every command; `recorded` takes the runs' own
settings (language, data, model) from their config.yaml.
"""
