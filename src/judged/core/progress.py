"""Rich progress bars for long work: on stderr, only when it is a terminal, and only for a
phase still running after a second (``DELAY``), so short commands print nothing extra.

What a command prints goes to stdout, whatever the bar: Rich's own redirection would send
it to the bar's console, stderr (``judged holes ... > out.txt`` on a terminal wrote the
report on the terminal and left the file empty), and a Rich console writes past it to the
real stdout (lines glued to the bar). When stdout is the terminal too, the first write to
it ends the bar (transient: erased) and no bar is drawn again until the phases end."""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager

DELAY = 1.0  # seconds a phase runs before its bar appears


_SHARED = {"bar": None, "phases": 0, "output": False}  # the one Rich display of the phases running now (nested
# phases, and phases running at once in threads, share it; it stops when the last of them ends); output: stdout,
# the same terminal, was written to, so no bar is drawn again
_LOCK = threading.Lock()


@contextmanager
def progress(total: int | None, description: str, enabled: bool | None = None, delay: float | None = None,
             console=None, unit: str = ""):
    """Yield ``advance(n=1)`` for a phase of ``total`` steps (None: a phase without steps,
    drawn as a pulsing bar with the time elapsed). A transient bar is drawn on stderr if it
    is a terminal (``enabled=None``; ``True`` forces it, ``False`` turns it off) once the
    phase has run ``delay`` seconds (default :data:`DELAY`). Phases inside a phase are lines
    of the same display, as are phases running at once in threads; ``console``: a Rich
    console to draw on instead of stderr (the first phase's); ``unit="bytes"`` counts the steps as bytes."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled or total is not None and total <= 0:
        yield lambda n=1: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    delay = DELAY if delay is None else delay
    with _LOCK:
        if _SHARED["bar"] is None:
            _SHARED["bar"] = Progress(TextColumn("{task.description}"), BarColumn(), _count_column(),
                                      TimeElapsedColumn(), console=console or Console(stderr=True), transient=True,
                                      redirect_stdout=False)
        bar = _SHARED["bar"]
        _SHARED["phases"] += 1
        task = bar.add_task(description, total=total, visible=False, unit=unit)
    over = []

    def show():
        with _LOCK:
            if over or _SHARED["output"]:
                return
            bar.update(task, visible=True)
            if not bar.live.is_started:
                bar.start()
                if _isatty(sys.stdout) and not isinstance(sys.stdout, _EndsBarOnWrite):
                    sys.stdout = _EndsBarOnWrite(sys.stdout)

    timer = threading.Timer(delay, show)
    timer.daemon = True
    if delay > 0:
        timer.start()
    else:
        show()
    try:
        yield lambda n=1: bar.advance(task, n)
    finally:
        timer.cancel()
        with _LOCK:
            over.append(True)
            if bar.live.is_started and any(t.id == task and t.visible for t in bar.tasks):
                bar.refresh()  # its last state drawn once before it goes
            bar.remove_task(task)
            _SHARED["phases"] -= 1
            if not _SHARED["phases"]:
                if bar.live.is_started:
                    bar.stop()
                _restore_stdout()
                _SHARED["bar"], _SHARED["output"] = None, False


class _EndsBarOnWrite:
    """sys.stdout while a bar is drawn and stdout is the same terminal: the first write ends
    the bar, gives sys.stdout back, then writes, so output never lands inside the bar."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text):
        if text:
            with _LOCK:
                _SHARED["output"] = True
                bar = _SHARED["bar"]
                if bar is not None and bar.live.is_started:
                    bar.stop()
                _restore_stdout()
        return self.stream.write(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def __getattr__(self, name):
        return getattr(self.stream, name)


def _restore_stdout() -> None:
    if isinstance(sys.stdout, _EndsBarOnWrite):
        sys.stdout = sys.stdout.stream


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _count_column():
    """Steps done of the total (``12/40``), bytes for a file (``3.1/27.1 MB``), nothing
    for a phase without steps."""
    from rich import filesize
    from rich.progress import ProgressColumn
    from rich.text import Text

    class Count(ProgressColumn):
        def render(self, task):
            if task.total is None:
                return Text("")
            if task.fields.get("unit") == "bytes":
                total = filesize.decimal(int(task.total))
                return Text(f"{filesize.decimal(int(task.completed)).split()[0]}/{total}", style="progress.download")
            return Text(f"{int(task.completed)}/{int(task.total)}", style="progress.download")

    return Count()


class ByteProgress:
    """A progress bar over a file's bytes (a phase of :func:`progress`), or nothing; ``label``
    names the phase after the file's name (``run.txt (partitioning)``)."""

    def __init__(self, source: str, show: bool, label: str | None = None):
        self.source, self.show, self.label, self.phase = source, show, label, None

    def __enter__(self):
        if not self.show:
            return lambda n: None
        total = os.path.getsize(self.source)
        name = os.path.basename(self.source)
        self.phase = progress(total, f"{name} ({self.label})" if self.label else name, enabled=True, unit="bytes")
        advance, done = self.phase.__enter__(), [0]

        def read(n: int) -> None:
            n = min(n, total - done[0])
            done[0] += n
            advance(n)
        return read

    def __exit__(self, *exc):
        if self.phase is not None:
            return self.phase.__exit__(*exc)
        return False
