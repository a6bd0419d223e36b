"""Reports of a :class:`~judged.comparison.Comparison` that people read.

* :func:`html` — one self-contained HTML page (inline CSS and SVG, no scripts, no
  network): the settings, the main table with significance marks, Judged@k, sorted
  per-query difference bars, score distributions and the regression list.
* :func:`table` — the main table for papers as Markdown, LaTeX or CSV.

Significance marks: ▲ (better) / ▼ (worse) than the baseline when the randomization
test's p-value, corrected across the runs of that measure, is below ``alpha`` (0.05).
"""

from __future__ import annotations

from .html import html
from .tables import main_table, table

__all__ = ["html", "table", "main_table", "ALPHA"]

ALPHA = 0.05
