"""Natural order for identifiers: numbers inside them compare as numbers (``q2`` < ``q10``,
``9`` < ``10``), the rest as text. Shared by every place that lists qids to people."""

from __future__ import annotations

import re

_RUNS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple:
    """A sort key: digit runs by value (then by spelling, so ``1`` < ``01``), text runs as text.

    >>> sorted(["q10", "q2", "10", "9", "q1b", "q1a"], key=natural_key)
    ['9', '10', 'q1a', 'q1b', 'q2', 'q10']
    """
    return tuple((0, int(run), run) if i % 2 else (1, run) for i, run in enumerate(_RUNS.split(text)) if run)
