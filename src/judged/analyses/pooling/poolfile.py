"""The pool file: what ``judged pool`` writes (:class:`Pool`) and the one reader of it
(:func:`read_pool_file`), for pooling, inference, PPI and the judging app.

One pair per line, ``qid docid priority best_rank runs [strategy columns] strategy stratum
inclusion ranks`` (priority 1 = judge first; ``strategy`` what drew the pair, ``stratum`` its
sampling stratum or ``-``, ``inclusion`` the probability that the strategy would include it:
1 for a deterministic choice, ``-`` where it is not known (an adaptive randomised strategy);
``ranks`` the pair's rank in each of ``runs``, comma-separated), after ``#`` header lines: the
first ``# judged pool: depth=... strategy=... budget=...: ...; runs: ...``, the line ``# qid
docid ...`` names the columns and the line before it the strategy's source. A sampling design
adds ``# stratum`` header lines and lists the pairs it did not draw as ``#~`` lines. Files
without the column line are read as ``qid docid priority best_rank runs [impact]`` (the first
versions); the judging app reads the first two fields of every pair line only
(``pairs_only``), whatever follows them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...core.errors import ParseError
from ...core.io.output import open_replacing
from ...core.io.text import read_raw, utf8_line
from ...core.words import counted
from ..holes.sampling import UNSAMPLED_PREFIX, parse_design

BASE_COLUMNS = ("qid", "docid", "priority", "best_rank", "runs")
DRAWN_COLUMNS = ("strategy", "stratum", "inclusion")  # what each pair was drawn with
RANK_COLUMNS = ("ranks",)  # the pair's rank in each of its runs (what an adaptive order needs)


@dataclass
class PoolPair:
    qid: str
    docid: str
    best_rank: int | None
    runs: list
    impact: float | None = None
    strategy: str | None = None  # the strategy that drew the pair
    stratum: str | None = None  # its sampling stratum (None: not drawn by a sampling design)
    inclusion: float | None = 1.0  # probability that the strategy includes it (1: deterministic; None: not known)
    fields: dict = field(default_factory=dict)  # strategy-specific columns, name -> value
    ranks: list = field(default_factory=list)  # the pair's rank in each of ``runs``


@dataclass
class Pool:
    """A pool to write: the pairs in judging order and what the header says of them."""

    pairs: list  # PoolPair, in judging order
    depth: int
    strategy: str
    budget: int | None
    unjudged: int  # unjudged pairs in the runs' top depth, before the budget
    runs: list = field(default_factory=list)
    label: str | None = None  # the strategy as the header names it
    columns: tuple = ()  # strategy-specific columns
    design: object = None  # judged.analyses.holes.sampling.SampleDesign, for a sample
    meta: dict = field(default_factory=dict)
    source: str = ""  # the strategy's source and what its columns mean (a header line)

    def __len__(self) -> int:
        return len(self.pairs)

    @property
    def all_columns(self) -> tuple:
        return BASE_COLUMNS + tuple(self.columns) + DRAWN_COLUMNS + RANK_COLUMNS

    def header(self) -> list[str]:
        strategy = self.label or self.strategy
        budget = "all" if self.budget is None else str(self.budget)
        meta = "".join(f" {k}={v}" for k, v in self.meta.items())
        out = [f"# judged pool: depth={self.depth} strategy={strategy} budget={budget}{meta}: "
               f"{len(self.pairs)} of {counted(self.unjudged, 'unjudged pair')}; runs: {' '.join(self.runs)}"]
        if self.source:
            out.append(f"# {self.strategy}: {self.source}")
        if self.design is not None:
            out += self.design.header_lines()
        out.append(f"# {' '.join(self.all_columns)}   (priority 1 = judge first)")
        return out

    def lines(self) -> list[str]:
        out = []
        for i, p in enumerate(self.pairs, 1):
            fields = [p.qid, p.docid, str(i), str(p.best_rank), ",".join(p.runs)]
            fields += [_cell(_column_value(p, c)) for c in self.columns]
            fields += [p.strategy or self.strategy, p.stratum or "-",
                       "-" if p.inclusion is None else f"{p.inclusion:.10g}", ",".join(map(str, p.ranks)) or "-"]
            out.append(" ".join(fields))
        return out

    def trailer(self) -> list[str]:
        """The design's pairs that were not drawn, as ``#~`` comment lines."""
        return self.design.unsampled_lines() if self.design is not None else []

    def text(self) -> str:
        return "\n".join(self.header() + self.lines() + self.trailer()) + "\n"

    def write(self, path) -> None:
        """Write the pool to ``path``, replacing it only once complete."""
        with open_replacing(path) as fh:
            fh.write(self.text())

    def to_pandas(self):
        """The pool as a DataFrame: the file's columns (:attr:`all_columns`) in its order, one
        row per pair in judging order; what the file writes as '-' is missing (None)."""
        import pandas as pd

        ps = self.pairs
        df = pd.DataFrame({"qid": [p.qid for p in ps], "docid": [p.docid for p in ps],
                           "priority": np.arange(1, len(ps) + 1), "best_rank": [p.best_rank for p in ps],
                           "runs": [",".join(p.runs) for p in ps]})
        for c in self.columns:
            df[c] = [_column_value(p, c) for p in ps]
        df["strategy"] = [p.strategy or self.strategy for p in ps]
        df["stratum"] = [p.stratum for p in ps]
        df["inclusion"] = [p.inclusion for p in ps]
        df["ranks"] = [",".join(map(str, p.ranks)) for p in ps]
        return df


def _column_value(p: PoolPair, column: str):
    return getattr(p, column) if column in ("impact",) else p.fields.get(column)


def _cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


@dataclass
class PoolFile:
    """A pool file read back: its header's settings, its columns, its pairs (with what
    each was drawn with, and the line each stands on) and, for a sample, the design."""

    path: str
    sha256: str  # of the file's bytes as stored
    meta: dict  # from the first header line: depth, strategy, budget, seed, runs
    columns: tuple
    pairs: list  # PoolPair in file order (priority order)
    design: object = None  # judged.analyses.holes.sampling.SampleDesign | None
    lines: list = field(default_factory=list)  # the line number of each pair

    @property
    def runs(self) -> list:
        return self.meta.get("runs", [])


def read_pool_file(path, *, pairs_only: bool = False) -> PoolFile:
    """Every version of the pool file: columns from its ``# qid docid ...`` line (files
    without one: ``qid docid priority best_rank runs [impact]``), pairs with their
    ``strategy``, ``stratum`` and ``inclusion`` (1 and no stratum when the file predates
    them), the ``# stratum`` and ``#~`` lines as a :class:`~judged.analyses.holes.sampling.SampleDesign`.
    ``pairs_only``: each pair's qid and docid only, whatever follows them on its line (no
    design). Compressed files are read as every reader reads them; a line that is not UTF-8
    is a ParseError naming it."""
    raw = read_raw(path)
    name = raw.name
    meta: dict = {}
    columns = None
    strata_lines, unsampled, body = [], [], []
    for lineno, line in enumerate(raw.data.split(b"\n"), 1):
        s = utf8_line(name, lineno, line).strip()
        if not s:
            continue
        if s.startswith(UNSAMPLED_PREFIX):
            unsampled.append((lineno, s[len(UNSAMPLED_PREFIX):].split()))
        elif s.startswith("# judged pool:"):
            meta = _pool_meta(s)
        elif s.startswith("# stratum "):
            strata_lines.append((lineno, s))
        elif s.startswith("# qid docid"):
            columns = tuple(s[1:].split("(")[0].split())
        elif not s.startswith("#"):
            body.append((lineno, s.split()))
    for lineno, f in body:
        if len(f) < 2:
            raise ParseError(name, lineno, "a pool line needs at least qid and docid")
    lines = [lineno for lineno, _ in body]
    if pairs_only:
        return PoolFile(name, raw.sha256, meta, ("qid", "docid"), [PoolPair(f[0], f[1], None, []) for _, f in body],
                        None, lines)
    if columns is None:
        columns = BASE_COLUMNS + ("impact",)
    pairs, drawn = [], []
    for lineno, f in body:
        p = _pair(name, lineno, dict(zip(columns, f)), columns, meta)
        pairs.append(p)
        if p.stratum is not None:
            drawn.append((lineno, p))
    design = parse_design(name, strata_lines, unsampled, drawn, meta.get("seed"))
    return PoolFile(name, raw.sha256, meta, columns, pairs, design, lines)


KNOWN_COLUMNS = BASE_COLUMNS + DRAWN_COLUMNS + RANK_COLUMNS + ("impact", "score")


def _pair(name: str, lineno: int, rec: dict, columns: tuple, meta: dict) -> PoolPair:
    """One pair line's fields (column -> text) as a :class:`PoolPair`."""
    try:
        best = None if rec.get("best_rank", "-") == "-" else int(rec["best_rank"])
        impact = None if rec.get("impact", "-") == "-" else float(rec["impact"])
        inclusion = None if rec.get("inclusion") == "-" else float(rec.get("inclusion", 1.0))
        score = None if rec.get("score", "-") == "-" else float(rec["score"])
    except ValueError:
        raise ParseError(name, lineno, "best_rank must be an integer, impact, score and inclusion numbers")
    if inclusion is not None and not 0.0 < inclusion <= 1.0:
        raise ParseError(name, lineno, f"inclusion must be a probability in (0, 1], got {inclusion}")
    runs = rec["runs"].split(",") if "runs" in rec else []
    ranks = [] if rec.get("ranks", "-") == "-" else rec["ranks"].split(",")
    try:
        ranks = [int(k) for k in ranks]
    except ValueError:
        raise ParseError(name, lineno, f"ranks must be comma-separated integers, got {rec['ranks']!r}") from None
    if ranks and len(ranks) != len(runs):
        raise ParseError(name, lineno, f"{counted(len(runs), 'run')} but {counted(len(ranks), 'rank')}")
    stratum = rec.get("stratum")
    extra = {c: rec[c] for c in columns if c not in KNOWN_COLUMNS and c in rec}
    if "score" in rec:
        extra["score"] = score
    return PoolPair(rec["qid"], rec["docid"], best, runs, impact, rec.get("strategy", meta.get("strategy")),
                    None if stratum in (None, "-") else stratum, inclusion, extra, ranks)


def _pool_meta(line: str) -> dict:
    """depth, strategy, budget, seed and runs from ``# judged pool: depth=10 strategy=... : ...; runs: a b``."""
    head, _, rest = line[len("# judged pool:"):].partition(":")
    meta: dict = {}
    for tok in head.split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            meta[k] = int(v) if v.isdigit() and k in ("depth", "budget", "seed") else v
    if "runs:" in rest:
        meta["runs"] = rest.split("runs:", 1)[1].split()
    return meta
