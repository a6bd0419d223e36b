"""Rich progress bars for long work, quiet when stderr is not a terminal."""

from __future__ import annotations

import sys
from contextlib import contextmanager


@contextmanager
def progress(total: int, description: str, enabled: bool | None = None):
    """Yield ``advance(n=1)``; draw a transient bar on stderr only if it is a terminal
    (``enabled=None``) or when forced with ``enabled=True``."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled or total <= 0:
        yield lambda n=1: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n=1: bar.advance(task, n)
