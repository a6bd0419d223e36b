"""Progress bars (judged.core.progress, issue #19): on stderr, only on a terminal, only for a
phase still running after DELAY seconds; phases inside a phase share one display."""

import io
import threading

from rich.console import Console

from judged.core.progress import ByteProgress, progress


def _console():
    buf = io.StringIO()
    return buf, Console(file=buf, force_terminal=True, width=100)


def _wait(seconds: float) -> None:
    threading.Event().wait(seconds)


def test_a_short_phase_draws_nothing():
    buf, console = _console()
    with progress(3, "quick", enabled=True, delay=5.0, console=console) as advance:
        advance()
    assert buf.getvalue() == ""


def test_a_long_phase_draws_its_bar_and_nested_phases_share_it():
    buf, console = _console()
    with progress(2, "outer phase", enabled=True, delay=0.05, console=console) as advance:
        with progress(None, "short inner", enabled=True, delay=5.0):
            pass
        with progress(None, "long inner", enabled=True, delay=0.05):  # no second live display (Rich refuses one)
            _wait(0.4)
        advance(2)
    out = buf.getvalue()
    assert "outer phase" in out and "long inner" in out
    assert "short inner" not in out  # it ended before its delay


def test_no_bar_off_a_terminal(capsys):
    # enabled=None: stderr decides; under pytest it is not a terminal
    with progress(None, "phase", delay=0.0) as advance:
        advance()
        _wait(0.1)
    with ByteProgress(__file__, False) as read:
        read(10)
    assert capsys.readouterr().err == ""


def test_phases_in_threads_share_the_display_until_the_last_ends():
    # compare runs its holes' bounds in a thread while the paired tests run: the phase that
    # began first may end first, and the other's bar goes on being drawn
    from judged.core import progress as module

    buf, console = _console()
    started = threading.Event()

    def holes():
        with progress(None, "first phase", enabled=True, delay=0.0, console=console):
            started.set()
            _wait(0.1)

    t = threading.Thread(target=holes)
    t.start()
    started.wait()
    with progress(None, "second phase", enabled=True, delay=0.05):
        t.join()  # the first phase ends here
        assert module._SHARED["bar"] is not None and module._SHARED["bar"].live.is_started
        _wait(0.3)
    assert module._SHARED["bar"] is None
    assert "first phase" in buf.getvalue() and "second phase" in buf.getvalue()


class _Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self):
        return True


def test_output_stays_on_stdout_while_a_bar_is_drawn(capsys):
    """Issue 34: `judged holes ... > out.txt` on a terminal, past a second, wrote the report on
    the terminal (Rich's Live sent stdout to the bar's console, stderr) and left out.txt empty."""
    buf, console = _console()
    with progress(None, "phase", enabled=True, delay=0.0, console=console):
        _wait(0.2)
        print("the report")
        Console().print("a table row")  # a Rich console on stdout, as the commands make
    out = capsys.readouterr().out
    assert "the report" in out and "a table row" in out
    assert "the report" not in buf.getvalue() and "a table row" not in buf.getvalue()
    assert "phase" in buf.getvalue()  # the bar was drawn


def test_the_first_write_to_a_terminal_stdout_ends_the_bar(monkeypatch):
    """Issue 34: on a 120-column terminal `judged holes` printed its report while the bar was
    drawn: lines glued to the bar, the bar redrawn inside the table. The first write ends
    the bar (erased) and no later phase draws one again."""
    from judged.core import progress as module

    buf, console = _console()
    stdout = _Terminal()
    monkeypatch.setattr("sys.stdout", stdout)
    with progress(None, "phase", enabled=True, delay=0.0, console=console):
        _wait(0.2)
        bar = module._SHARED["bar"]
        assert bar.live.is_started
        Console(force_terminal=True, width=100).print("the report")
        assert not bar.live.is_started  # ended before the line was written
        drawn = buf.getvalue()
        with progress(None, "a later phase", enabled=True, delay=0.0):
            _wait(0.2)
        assert buf.getvalue() == drawn and not bar.live.is_started
    assert "the report" in stdout.getvalue() and "━" not in stdout.getvalue()
    import sys

    assert sys.stdout is stdout and module._SHARED == {"bar": None, "phases": 0, "output": False}
