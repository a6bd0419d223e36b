"""Rich progress bars for long work, quiet when stderr is not a terminal."""

from __future__ import annotations

import os
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


class ByteProgress:
    """A Rich progress bar over a file's bytes (on stderr), or nothing; ``label`` names the
    phase after the file's name (``run.txt (partitioning)``)."""

    def __init__(self, source: str, show: bool, label: str | None = None):
        self.source, self.show, self.bar, self.label = source, show, None, label

    def __enter__(self):
        if not self.show:
            return lambda n: None
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

        total = os.path.getsize(self.source)
        self.bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), DownloadColumn(),
                            TimeRemainingColumn(), console=Console(stderr=True), transient=True)
        self.bar.start()
        name = os.path.basename(self.source)
        task = self.bar.add_task(f"{name} ({self.label})" if self.label else name, total=total)
        return lambda n: self.bar.advance(task, min(n, total - self.bar.tasks[0].completed))

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.stop()
        return False
