"""The main table (run x measure, means with significance marks) as rows, Markdown, LaTeX, CSV."""

from __future__ import annotations

import csv
import io

from ..core.words import counted, md_cell
from ..analyses.comparison import MARK_TEST, is_coverage_measure, significance_mark
from ..core.runnames import shortener as names_shortener


def main_table(c, alpha: float = 0.05) -> list[dict]:
    """One dict per run (baseline first): run, and per measure (mean, delta, p_adjusted, mark)."""
    leaks = {name: len(found) for name, found in c.leaks().items()}
    rows = [{"run": c.baseline, "baseline": True, "cells": {}, "leaks": leaks.get(c.baseline)}]
    rows += [{"run": r, "baseline": False, "cells": {}, "leaks": leaks.get(r)} for r in c.runs]
    by_run = {row["run"]: row for row in rows}
    for x in c.comparisons:
        p = x.p_adjusted[MARK_TEST]
        flip = c.flip(x)
        by_run[x.run]["cells"][x.measure] = {"mean": x.mean_run, "delta": x.test.mean_delta,
                                              "p_adjusted": None if p != p else p,  # None: not tested (Judged@k)
                                              "mark": significance_mark(p, x.test.mean_delta, alpha),
                                              "flip": bool(flip is not None and flip.can_flip)}
        by_run[c.baseline]["cells"][x.measure] = {"mean": x.mean_baseline, "delta": 0.0, "p_adjusted": None,
                                                  "mark": ""}
    return rows


def legend(c, alpha: float = 0.05, flips: bool = False) -> str:
    """The significance legend; with ``flips`` (the HTML table) also the ⇄ mark's."""
    flips = " ⇄: judging the holes could reverse the order (see Holes)." if flips and c.holes is not None else ""
    coverage = [m for m in c.measures if is_coverage_measure(m)]
    untested = (f" {', '.join(coverage)}: the share of the top k judged (coverage, not quality), never tested."
                if coverage else "")
    queries = f" {c.query_set.describe()}." if c.query_set is not None else ""
    return (f"▲/▼: better/worse than the baseline {c.baseline}, {MARK_TEST} test p < {alpha} after "
            f"{c.correction} correction across runs ({counted(c.permutations, 'draw')}, seed {c.seed}).{flips}{untested}"
            f"{queries}")


def shortener(c):
    """(name -> shown name, a function shortening every run name in a text): reports show a
    run given by its path by its file name, with the folders it takes to tell runs apart
    (:func:`judged.core.runnames.shortener`); the settings keep the paths."""
    return names_shortener([c.baseline, *c.runs])


def machine_cells(c, rows) -> list:
    """With machine labels: the machine-filled columns' names, each row's cells added under
    them (mean; never a significance mark: they are not judged scores)."""
    mf = getattr(c, "machine", None)
    if mf is None:
        return []
    names = []
    for g in mf.measures:
        if g not in c.measures:
            continue
        names.append(mf.name(g))
        for row in rows:
            row["cells"][mf.name(g)] = {"mean": mf.mean(row["run"], g), "delta": mf.mean(row["run"], g)
                                        - mf.mean(c.baseline, g), "p_adjusted": None, "mark": ""}
    return names


def machine_legend(c) -> str:
    mf = getattr(c, "machine", None)
    if mf is None:
        return ""
    return (f" {FILLED_NOTE}: the holes labelled by the machine judge {mf.machine.source} (not judgments; "
            "no significance test).")


FILLED_NOTE = "machine-filled"


def table(c, fmt: str = "md", alpha: float = 0.05) -> str:
    """The main table as ``md``, ``latex`` or ``csv`` (machine-filled columns, when there are
    machine labels, after the judged ones and named as such)."""
    rows = main_table(c, alpha)
    measures = list(c.measures) + machine_cells(c, rows)
    shown, short = shortener(c)
    for row in rows:
        row["run"] = shown[row["run"]]
    if fmt == "csv":
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["run", "measure", "mean", "mean_delta", f"p_{MARK_TEST}_{c.correction}", "significant"])
        for row in rows:
            for m in measures:
                cell = row["cells"][m]
                w.writerow([row["run"], m, repr(cell["mean"]), repr(cell["delta"]),
                            "" if cell["p_adjusted"] is None else repr(cell["p_adjusted"]),
                            {"▲": "better", "▼": "worse"}.get(cell["mark"], "")])
        return out.getvalue()
    if fmt == "md":
        lines = ["| run | " + " | ".join(map(md_cell, measures)) + " |", "|---|" + "---:|" * len(measures)]
        for row in rows:
            name = md_cell(row["run"] + (" (baseline)" if row["baseline"] else "") + _leaks(row))
            lines.append(f"| {name} | " + " | ".join(f"{row['cells'][m]['mean']:.4f}{row['cells'][m]['mark']}"
                                                     for m in measures) + " |")
        return "\n".join(lines) + "\n\n" + short(legend(c, alpha)) + machine_legend(c) + "\n"
    if fmt == "latex":
        marks = {"▲": r"$^{\blacktriangle}$", "▼": r"$^{\blacktriangledown}$", "": ""}
        lines = [r"\begin{tabular}{l" + "r" * len(measures) + "}", r"\toprule",
                 "Run & " + " & ".join(_tex(m) for m in measures) + r" \\", r"\midrule"]
        for row in rows:
            name = _tex(row["run"] + (" (baseline)" if row["baseline"] else "") + _leaks(row))
            lines.append(name + " & " + " & ".join(f"{row['cells'][m]['mean']:.4f}{marks[row['cells'][m]['mark']]}"
                                                  for m in measures) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}",
                  "% " + (short(legend(c, alpha)) + machine_legend(c)).replace("▲/▼", "up/down triangles")]
        return "\n".join(lines) + "\n"
    raise ValueError(f"unknown table format {fmt!r}")


def _leaks(row) -> str:
    return f" ({counted(row['leaks'], 'leak')})" if row.get("leaks") else ""


def _tex(s: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                 ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"), ("^", r"\^{}")):
        s = s.replace(a, b)
    return s
