"""Analyses over the core's results: holes and their bounds, estimates, pooling, sampling and
inference, machine labels (PPI), paired comparisons and their statistics, meta-evaluation.
They import the core, never a front end."""
