"""Estimates with their intervals as every command prints them
(judged.analyses.holes.estimates): a table of runs, one column per method, each cell the
estimate ± half its interval (``judged infer``; ``--sample`` and ``--machine`` with
``--sample`` in ``judged holes`` and ``judged compare``), and the interval cell of the
``judged holes`` table."""

from __future__ import annotations

from .plain import Table


def estimate_cell(e) -> str:
    """An :class:`~judged.analyses.holes.estimates.Estimate` as a table shows it: value ± half width."""
    x = e.scalar()
    return f"{x['estimate']:.4f} ± {(x['high'] - x['low']) / 2:.4f}"


def interval_cell(e) -> str:
    """The interval of a hole estimate (low-high), or what stands for it: ``exact`` (no hole
    to estimate), ``none (bounds)`` (too few runs to calibrate one: the bounds are no
    estimate interval), ``-`` (no estimate)."""
    if e is None:
        return "-"
    if e.interval in ("bounds", "exact"):
        return {"bounds": "none (bounds)", "exact": "exact"}[e.interval]
    return f"{float(e.low):.4f}-{float(e.high):.4f}"


def print_estimates(rows, heading, console, short=None, *, known=None, after=None, measure: bool = False,
                    title: str | None = None) -> None:
    """A table of :class:`~judged.analyses.holes.estimates.EstimateRow`: the run (named by
    ``short``), its measure (``measure``), the known scores (``known``: heading -> key of
    ``row.known``), one column per estimate (``heading(name)``; cells :func:`estimate_cell`),
    then ``after`` (heading -> the cell of a row)."""
    short = short or (lambda text: text)
    known, after = known or {}, after or {}
    names = list(dict.fromkeys(name for r in rows for name in r.estimates))
    t = Table(box="simple", pad_edge=False, collapse_padding=True, title=title)
    lead = ["run"] + (["measure"] if measure else [])
    for col in lead + list(known) + [heading(n) for n in names] + list(after):
        t.add_column(col, justify="left" if col in lead else "right", no_wrap=True)
    for r in rows:
        t.add_row(short(r.run), *([r.measure] if measure else []), *(f"{r.known[k]:.4f}" for k in known.values()),
                  *(estimate_cell(r.estimates[n]) for n in names), *(cell(r) for cell in after.values()))
    console.print(t)
