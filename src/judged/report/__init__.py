"""Reports of a :class:`~judged.analyses.comparison.Comparison` that people read.

* :func:`html` — one self-contained HTML page (inline CSS and SVG, no scripts, no
  network): first the runs ranked with their intervals and holes' bounds and the flip
  matrix, then the main table with significance marks, Judged@k, the paired comparisons,
  each run's sorted per-query difference bars and regressions (folded beyond three runs),
  score distributions and the settings.
* :func:`table` — the main table for papers as Markdown, LaTeX or CSV.

Significance marks: ▲ (better) / ▼ (worse) than the baseline when the randomization
test's p-value, corrected across the runs of that measure, is below ``alpha`` (0.05).
"""

from __future__ import annotations

from .html import html
from .tables import main_table, table

__all__ = ["html", "table", "main_table", "ALPHA"]

ALPHA = 0.05
