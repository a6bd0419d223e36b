"""Runs scored with their holes drawn from a grade distribution: each case (a run, a world,
a grade source, a number of draws) stacked as pseudo-queries and scored by the measure's
kernel, the ideal and R recomputed per draw (:func:`score_cases`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ...core.align import Judgments, Ranked, block_offsets
from ...core.errors import MeasureError
from ...core.kernels.draws import drawn_sums
from ...core.measures import BOUNDED, Measure
from ...core.measures.bounds import list_depth
from ...core.measures.dcg import dcg, ideal_dcg_of_counts
from .collection import HolePool, World
from .grade_model import HoleModel
from ..stats import median

# ---------------------------------------------------------------------------
# Scoring with holes filled by draws


@dataclass
class Case:
    """Run ``run`` scored in a world without unit ``minus``'s own judgments (-1: none),
    its holes drawn ``draws`` times from ``model`` (None: holes count as not relevant)."""

    run: int
    minus: int = -1
    model: HoleModel | None = None
    draws: int = 1
    measure: Measure | None = None  # None: the call's measure
    # pool rows of the other runs' holes (one per document) the run lacks in its list: drawn with
    # its own (from the same model), they enter only its ideal and R (judging the pool)
    ideal_rows: np.ndarray | None = None
    # per pool row, whether a hole there is drawn (None: every hole); the others count as not relevant
    drawn: np.ndarray | None = None


@dataclass
class CaseScore:
    per_query: np.ndarray  # mean over draws, per evaluated query of the run
    mean: float  # mean over queries
    sd: float  # standard deviation of the mean over queries under the model (0 without draws)
    holes: int  # holes filled
    median: float = 0.0  # median over draws of the mean over queries
    ideal_holes: int = 0  # the pool's other holes drawn into the ideal and R
    ends: tuple = ()  # points an interval around this score must hold (the midpoint's two estimates)
    relevant_holes: float = 0.0  # the holes filled that the grade source reads as relevant (grade > 0), expected


MAX_STACKED_ROWS = 8_000_000  # rows scored at once (draws are split to stay below)


def fill_depth(measure: Measure, pool: HolePool) -> int:
    """Holes estimated: those ranked above min(cutoff, max(k, depth)); deeper ones count as not relevant."""
    d = max(pool.k, pool.depth)
    return d if measure.cutoff is None else min(measure.cutoff, d)


def pool_hole_rows(measure, pool: HolePool, world: World, targets: list) -> dict:
    """Per target run: one pool row for each hole of the other targets' lists (ranked above
    :func:`fill_depth`, unjudged in ``world``) whose document the run does not rank above
    :func:`fill_depth` itself -- the row of its best rank. Drawn beside the run's own holes, they enter its
    ideal and R only: the estimate of what judging the pool of the targets gives."""
    depth = fill_depth(measure, pool)
    rows = np.concatenate([pool.list_rows(i, depth) for i in targets]) if targets else np.zeros(0, np.int64)
    holes = rows[world.row_level[rows] < 0]
    order = np.lexsort((pool.pos[holes], pool.pid[holes]))
    holes = holes[order]
    first = np.concatenate(([True], pool.pid[holes][1:] != pool.pid[holes][:-1])) if len(holes) else np.zeros(0, bool)
    best = holes[first]
    out = {}
    for i in targets:
        mine = np.isin(pool.pid[best], pool.pid[pool.list_rows(i, depth)])  # drawn as its own
        out[i] = best[~mine]
    return out


def score_cases(measure, pool: HolePool, world: World, cases: list, seed: int = 0,
                maxgrade: int | None = None) -> list:
    """Score every case; cases are stacked as pseudo-queries and scored by one call of
    the measure's kernel per group of at most :data:`MAX_STACKED_ROWS` rows. Only the
    queries with holes to fill are drawn more than once."""
    measure = Measure.parse(measure)
    preps = [_prepare(measure, pool, world, case, seed, maxgrade) for case in cases]
    batch, rows_in_batch = [], 0
    for prep in preps:
        for part in prep["parts"]:
            size = part["draws"] * len(part["q"])
            if batch and rows_in_batch + size > MAX_STACKED_ROWS:
                _score_batch(pool, batch)
                batch, rows_in_batch = [], 0
            batch.append((prep, part))
            rows_in_batch += size
    if batch:
        _score_batch(pool, batch)
    return [_finish(p) for p in preps]


def _prepare(measure, pool, world, case: Case, seed, maxgrade) -> dict:
    """A case's rows, grades in its world, judgments per query and level, the holes to
    fill and their grade distributions, split into parts: queries without holes to fill
    (scored once) and queries with some (scored once per draw, in chunks)."""
    m = holes_read_as_zero(case.measure or measure)
    i = case.run
    a = pool.aligned[i]
    rows = pool.list_rows(i, list_depth(m))
    lv = world.row_level[rows]
    if case.minus >= 0:
        lv = np.where(pool.owner[pool.pid[rows]] == case.minus, -1, lv)
    grade = np.where(lv >= 0, a.ranked.grade[pool.rrow[rows]], np.nan)
    local_q = a.ranked.q[pool.rrow[rows]]
    codes = np.asarray(a.qid_codes, np.int64)
    jc = world.jcount[codes]
    if case.minus >= 0:
        jc = jc - world.unit_removed[case.minus][codes]
    nq = a.n_queries
    prep = {"measure": m, "a": a, "nq": nq, "sum": np.zeros(nq), "sumsq": np.zeros(nq), "draws": 1, "holes": 0,
            "parts": [], "fixed": 0.0}
    fill = np.isnan(grade) & (pool.pos[rows] < fill_depth(m, pool))
    if case.drawn is not None:
        fill &= case.drawn[rows]
    extra = np.zeros(0, np.int64) if case.ideal_rows is None or case.model is None or \
        m.family.label_worth == "gain" and m.family.normaliser is None \
        else np.asarray(case.ideal_rows, np.int64)
    local = np.full(pool.jcount.shape[0], -1, np.int64)
    local[codes] = np.arange(len(codes))
    extra = extra[local[pool.qcode[extra]] >= 0]
    if case.drawn is not None:
        extra = extra[case.drawn[extra]]
    extra_q = local[pool.qcode[extra]]
    draws = max(1, int(case.draws)) if case.model is not None and (fill.any() or len(extra)) else 1
    with_holes = np.zeros(nq, bool)
    if case.model is not None:  # one draw fills the holes too (samples=1 scored them as zero)
        with_holes[local_q[fill]] = True
        with_holes[extra_q] = True
    values = pool.levels.astype(np.float64)
    if maxgrade is not None:
        values = np.minimum(values, maxgrade)
    for drawn in (False, True):
        queries = np.flatnonzero(with_holes == drawn)
        if not len(queries):
            continue
        sel = np.flatnonzero(with_holes[local_q] == drawn)
        remap = np.full(nq, -1, np.int64)
        remap[queries] = np.arange(len(queries))
        part = {"queries": queries, "q": remap[local_q[sel]], "pos": pool.pos[rows[sel]], "grade": grade[sel],
                "jc": jc[queries], "draws": 1, "fill": None, "probs": None, "values": values,
                "extra_q": np.zeros(0, np.int64)}
        if drawn:
            f = np.flatnonzero(fill[sel])
            probs = case.model.grade_probabilities(pool, world, np.concatenate((rows[sel][f], extra)),
                                                   np.full(len(f) + len(extra), case.minus))
            part.update(fill=f, probs=probs, draws=draws, extra_q=remap[extra_q],
                        rng=np.random.default_rng([seed, i, case.minus + 1, draws]))
            prep.update(draws=draws, holes=len(f), per_draw=np.zeros(draws), ideal_holes=len(extra),
                        relevant_holes=float(probs[:len(f)][:, values > 0].sum()))
        per_chunk = max(1, MAX_STACKED_ROWS // max(len(sel), 1))
        done = 0
        while done < part["draws"]:
            c = min(per_chunk, part["draws"] - done)
            prep["parts"].append({**part, "draws": c, "first": done})
            done += c
    return prep


def _needed_counts(m: Measure, jc: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Judgments per query and level the measure reads: for nDCG (ideal=judged) the
    cutoff largest positive gains (nERR's ideal: the cutoff largest positive grades), for AP
    and R every level >= rel, for Compat every level > 0, else none."""
    kind = m.family.normaliser
    if kind == "ideal-gains" and m.ideal == "judged" or kind == "ideal-grades":
        gains = m.gain(levels.astype(np.float64)) if kind == "ideal-gains" else levels.astype(np.float64)
        order = np.argsort(-gains, kind="stable")
        c = jc[:, order] * (gains[order] > 0)
        if m.cutoff is not None:
            before = np.cumsum(c, axis=1) - c
            c = np.clip(m.cutoff - before, 0, c)
        out = np.zeros_like(jc)
        out[:, order] = c
        return out
    if kind == "relevant":
        return jc * (levels >= m.rel)[None, :]
    if kind == "positive":  # Compat's ideal: every relevant judgment (grade > 0)
        return jc * (levels > 0)[None, :]
    return np.zeros_like(jc)


def _score_batch(pool: HolePool, batch: list) -> None:
    groups = {}
    for prep, part in batch:
        groups.setdefault(prep["measure"], []).append((prep, part))
    for m, items in groups.items():
        _score_group(m, pool, items)


def _score_group(m: Measure, pool: HolePool, items: list) -> None:
    """One measure's parts, stacked as pseudo-queries (part, draw, query) and scored by
    the measure's kernel; nDCG's ideal comes from the judgments' counts per grade.

    nDCG (ideal=judged) and DCG without condensing are sums over ranks: a drawn part's
    rows are scored once with its holes unjudged, and each draw adds its holes' gains
    times their discounts (the drawn grades change nothing else but nDCG's ideal, which
    comes from counts). Other measures score every draw's whole ranking."""
    L = len(pool.levels)
    by_counts = m.family.normaliser == "ideal-gains" and m.ideal == "judged"
    additive = m.family.label_worth == "gain" and m.ideal == "judged" and m.unjudged != "condensed"
    table = _ideal_table(m, pool, items) if by_counts and additive else None
    q_parts, pos_parts, g_parts, jq_parts, jg_parts, count_parts = [], [], [], [], [], []
    base, ibase, spans = 0, 0, []
    for prep, part in items:
        d, nq, n = part["draws"], len(part["queries"]), len(part["q"])
        drawn = added = drawn_keys = None
        if part["probs"] is not None and additive and (table is not None or not by_counts):
            # the draws only summed: the holes' gains per draw (and the ideal's keys), drawn
            # and summed in one pass
            added, drawn_keys = _drawn_sums(m, part, table)
        elif part["probs"] is not None:
            drawn = _draw(part["probs"], d, part["rng"])
        if additive and drawn is not None:  # the ranking once, the holes' gains per draw
            f = part["fill"]
            fpos, fq = part["pos"][f], part["q"][f]
            gain = m.gain(part["values"].astype(np.float64))
            inside = np.ones(len(f), bool) if m.cutoff is None else fpos < m.cutoff
            drawn_in, rank = drawn[:, :len(f)][:, inside], (fpos[inside] + 1)[None, :]
            added = _per_draw_sums(d, nq, fq[inside], lambda s, e: m.discount.divide(gain[drawn_in[s:e]], rank))
        rank_d = 1 if added is not None else d
        shift = base + np.arange(rank_d, dtype=np.int64)[:, None] * nq
        q = (shift + part["q"][None, :]).ravel()
        grade = np.tile(part["grade"], rank_d) if rank_d > 1 else part["grade"].copy()
        needed = _needed_counts(m, part["jc"], pool.levels)
        if table is not None:  # the ideal's key: the judgments' and the drawn holes' counts in radix
            key = np.tile(needed @ table[1], d)
            if drawn_keys is not None:
                key += drawn_keys.ravel().astype(np.int64)
            need = table[0][key]
        else:
            need = np.tile(needed, (d, 1))
        if drawn is not None:
            if by_counts and table is None:  # the run's holes and the pool's others alike enter the ideal
                hole_q = np.arange(d, dtype=np.int64)[:, None] * nq + np.concatenate(
                    (part["q"][part["fill"]], part["extra_q"]))[None, :]
                need += np.bincount((hole_q.ravel() * L + _capped_level(pool, part["values"])[drawn].ravel()),
                                    minlength=d * nq * L).reshape(d * nq, L)
            if not additive:
                nf = len(part["fill"])
                at = (np.arange(d, dtype=np.int64)[:, None] * n + part["fill"][None, :]).ravel()
                grade[at] = part["values"][drawn[:, :nf]].ravel()
                if not by_counts:  # judgments: the run's drawn holes, and the pool's others (R)
                    jq_parts.append(q[at])
                    jg_parts.append(part["values"][drawn[:, :nf]].ravel().astype(np.int64))
                    if len(part["extra_q"]):
                        jq_parts.append((base + np.arange(d, dtype=np.int64)[:, None] * nq
                                         + part["extra_q"][None, :]).ravel())
                        jg_parts.append(part["values"][drawn[:, nf:]].ravel().astype(np.int64))
        if by_counts:
            count_parts.append(need)
        elif not additive:
            cnt = need.ravel()
            jq_parts.append(np.repeat(np.repeat(base + np.arange(d * nq, dtype=np.int64), L), cnt))
            jg_parts.append(np.repeat(np.tile(pool.levels, d * nq), cnt))
        q_parts.append(q)
        pos_parts.append(np.tile(part["pos"], rank_d) if rank_d > 1 else part["pos"])
        g_parts.append(grade)
        spans.append((prep, part, base, ibase, d, nq, rank_d, added))
        base += rank_d * nq
        ibase += d * nq
    q = np.concatenate(q_parts)
    ranked = Ranked(base, q, np.concatenate(pos_parts), np.concatenate(g_parts), np.zeros(len(q), np.int64),
                    block_offsets(q, base))
    ideal = None
    if additive:
        numerator = dcg(m, ranked, base)
        if table is not None:
            ideal = np.concatenate(count_parts)
        elif by_counts:
            ideal = ideal_dcg_of_counts(m, np.concatenate(count_parts), pool.levels)
        values = numerator
    elif by_counts:
        numerator = dcg(m, ranked, base, condensed=m.unjudged == "condensed")
        ideal = ideal_dcg_of_counts(m, np.concatenate(count_parts), pool.levels)
        values = np.zeros(base)
        np.divide(numerator, ideal, out=values, where=ideal > 0)
    else:
        jq, jg = np.concatenate(jq_parts), np.concatenate(jg_parts)
        order = np.argsort(jq, kind="stable")
        jq, jg = jq[order], jg[order]
        judgments = Judgments(base, jq, jg, block_offsets(jq, base))
        stacked = replace(items[0][0]["a"], qids=np.arange(base), ranked=ranked, judgments=judgments)
        values = m.compute(stacked)
    for prep, part, start, istart, d, nq, rank_d, added in spans:
        v = values[start:start + rank_d * nq].reshape(rank_d, nq)
        if additive:
            if added is not None:
                v = v + added
            if ideal is not None:
                i = ideal[istart:istart + d * nq].reshape(d, nq)
                out = np.zeros(np.broadcast_shapes(v.shape, i.shape))
                np.divide(v, i, out=out, where=i > 0)
                v = out
        if part["probs"] is None:  # scored once: as if every draw gave this value
            prep["sum"][part["queries"]] += v[0] * prep["draws"]
            prep["sumsq"][part["queries"]] += v[0] * v[0] * prep["draws"]
            prep["fixed"] += float(v[0].sum())
        else:
            prep["sum"][part["queries"]] += v.sum(axis=0)
            prep["sumsq"][part["queries"]] += (v * v).sum(axis=0)
            prep["per_draw"][part["first"]:part["first"] + d] += v.sum(axis=1)


def _capped_level(pool: HolePool, values: np.ndarray) -> np.ndarray:
    """Per drawn level, the level its grade counts as in the ideal: the level of its value
    after ``maxgrade`` caps it (itself when uncapped; when a capped value is no grade of
    the qrels, the drawn level, as the counts have no column for it)."""
    at = np.minimum(np.searchsorted(pool.levels, values), len(pool.levels) - 1)
    return np.where(pool.levels[at] == values, at, np.arange(len(values)))


MAX_IDEAL_TABLE = 1 << 20  # count combinations tabulated at most


def _ideal_table(m: Measure, pool: HolePool, items: list):
    """(IDCG per key, radix per level) when nDCG's ideal can be read from a table: a
    query's counts per grade level, judged (at most the cutoff, :func:`_needed_counts`)
    plus drawn holes (at most the cutoff too: holes are filled above it), written in
    radix 2 x cutoff + 1 over the levels of positive gain, index every combination's
    IDCG, computed once by :func:`ideal_dcg_of_counts` (the same bits). None when the
    measure has no cutoff or the table would be large."""
    if m.cutoff is None:
        return None
    if any(not np.array_equal(p["values"], pool.levels) for _, p in items):
        return None  # maxgrade caps the drawn grades: the counts path decides
    for _, p in items:  # more holes to draw in a query than the cutoff (the pool's others): the counts path
        if p["probs"] is not None and len(p["probs"]) and np.bincount(
                np.concatenate((p["q"][p["fill"]], p["extra_q"]))).max() > m.cutoff:
            return None
    positive = np.flatnonzero(m.gain(pool.levels.astype(np.float64)) > 0)
    radix = 2 * m.cutoff + 1
    size = radix ** len(positive)
    if size > MAX_IDEAL_TABLE:
        return None
    memo_key = ("ideal-table", str(m))
    if memo_key not in pool._memo:
        L = len(pool.levels)
        place = np.zeros(L, np.int64)
        place[positive] = radix ** np.arange(len(positive), dtype=np.int64)
        keys = np.arange(size, dtype=np.int64)
        counts = np.zeros((size, L), np.int64)
        for j, lv in enumerate(positive):
            counts[:, lv] = keys // radix ** j % radix
        pool._memo[memo_key] = (ideal_dcg_of_counts(m, counts, pool.levels), place)
    return pool._memo[memo_key]


DRAW_CHUNK = 1 << 18  # (draw, hole) cells drawn or summed at once: a few MB, not (draws x holes) x 8 bytes


def _draw(probs: np.ndarray, draws: int, rng) -> np.ndarray:
    """(draws, holes) level indices drawn from each hole's distribution (bytes up to 256
    levels: indices for numpy, not numbers to add). Uniforms drawn a few draws at a time
    (:data:`DRAW_CHUNK`): the generator fills them in order, so the same numbers."""
    cum = np.cumsum(probs, axis=1)
    cum[:, -1] = 1.0
    n = len(probs)
    # the levels each draw passes, counted in bytes (up to 256 levels) through one buffer of
    # flags: the same integers as int64 sums of the comparisons, in half the time
    count = np.zeros((draws, n), np.uint8 if probs.shape[1] <= 256 else np.int64)
    step = max(1, DRAW_CHUNK // max(n, 1))
    above = np.empty((min(step, draws), n), bool)
    for s in range(0, draws, step):
        u = rng.random((min(draws, s + step) - s, n))
        for l in range(probs.shape[1] - 1):
            count[s:s + len(u)] += np.greater(u, cum[:, l], out=above[:len(u)])
    return count


def _drawn_sums(m: Measure, part: dict, table) -> tuple:
    """(d, nq) per draw and query of a drawn part: the sum of its holes' gains times their
    discounts (holes ranked below the cutoff add 0.0); with nDCG's ideal ``table``, also the
    sum of the drawn levels' radix places (the ideal's key; else None). The holes' levels
    drawn as :func:`_draw` draws them (the same uniforms, a few draws at a time) and summed
    as :func:`_per_draw_sums` sums them, in one pass (:func:`judged.core.kernels.draws.drawn_sums`)."""
    d, nq, f, probs = part["draws"], len(part["queries"]), part["fill"], part["probs"]
    fpos = part["pos"][f]
    gain = m.gain(part["values"].astype(np.float64))
    inside = np.zeros(len(probs), bool)  # the pool's other holes (after the run's own) enter no DCG
    inside[:len(f)] = True if m.cutoff is None else fpos < m.cutoff
    weights = np.zeros((1 if table is None else 2, len(probs), len(gain)))
    weights[0][inside] = m.discount.divide(gain[None, :], (fpos[inside[:len(f)]] + 1)[:, None])
    if table is not None:
        weights[1] = table[1][None, :]
    cum = np.cumsum(probs, axis=1)
    cum[:, -1] = 1.0
    out = np.empty((d, len(weights), nq))
    step = max(1, DRAW_CHUNK // max(len(probs), 1))
    hole_q = np.concatenate((part["q"][f], part["extra_q"]))
    for s in range(0, d, step):
        u = part["rng"].random((min(d, s + step) - s, len(probs)))
        out[s:s + len(u)] = drawn_sums(u, cum, hole_q, weights, nq)
    return out[:, 0], (out[:, 1] if table is not None else None)


def _per_draw_sums(d: int, nq: int, q: np.ndarray, weights_of) -> np.ndarray:
    """(d, nq): per draw and query, the sum of ``weights_of(s, e)`` ((e - s, len(q)): draws
    s..e-1 of the holes of queries ``q``), a few draws at a time (:data:`DRAW_CHUNK`); each
    sum adds its terms in np.bincount's order, so the same bits as all draws at once."""
    out = np.empty((d, nq))
    step = max(1, DRAW_CHUNK // max(len(q), 1))
    for s in range(0, d, step):
        e = min(d, s + step)
        at = (np.arange(e - s, dtype=np.int64)[:, None] * nq + q[None, :]).ravel()
        out[s:e] = np.bincount(at, weights=weights_of(s, e).ravel(), minlength=(e - s) * nq).reshape(e - s, nq)
    return out


def _finish(prep) -> CaseScore:
    d, nq = prep["draws"], prep["nq"]
    mean_q = prep["sum"] / d
    sd = 0.0
    if d > 1 and nq:
        var_q = np.maximum(prep["sumsq"] - d * mean_q * mean_q, 0.0) / (d - 1)
        sd = float(math.sqrt(var_q.sum())) / nq
    mean = float(mean_q.mean()) if nq else 0.0
    middle = median((prep["per_draw"] + prep["fixed"]) / nq) if d > 1 and nq else mean
    return CaseScore(mean_q, mean, sd, prep["holes"], middle, prep.get("ideal_holes", 0),
                     relevant_holes=prep.get("relevant_holes", 0.0))


def holes_read_as_zero(measure: Measure) -> Measure:
    """``measure`` as the estimate scores it: unjudged documents not relevant (what the draws
    then fill), no grade cap; refused for a measure without bounds (:data:`BOUNDED`)."""
    if not measure.family.boundable:
        raise MeasureError(f"the hole estimate is defined for {', '.join(BOUNDED)}, not {measure.name}")
    return replace(measure, unjudged="zero" if measure.unjudged in ("min", "max") else measure.unjudged,
                   maxgrade=None)


