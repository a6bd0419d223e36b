"""Serving a campaign's pairs in a pooling policy's order (``judged judge init --order``).

``shuffled`` (the default, no row here): each assessor claims a whole query at a time in
their own shuffled order (:mod:`.assign`). With ``--order pool`` the pairs go out one at
a time in the pool file's priority order; with an adaptive strategy (``mtf``, ``mm``,
``hedge``, ... of :mod:`judged.analyses.pooling.policies`) one at a time in the order the policy
proposes given every label the assessors have given so far: the policy is rebuilt from
the pool's runs and ranks (kept in ``pair_rank``) and the campaign's labels (a pair's
adjudication, else its first current grade) on each claim. Second copies of overlap
pairs go out first (oldest first), to an assessor who has not seen the pair.

Assessors still see nothing of the runs or ranks, but an adaptive order follows the
runs' rankings, so an assessor may sense that early documents were ranked high.
"""

from __future__ import annotations

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from ..core.errors import JudgedError
from .models import ADJUDICATE, GRADE, UNDO, Assessor, Assignment, CampaignOrder, Judgment, Pair, PairRank
from ..analyses.pooling.strategies import STRATEGIES, make_policy
from ..analyses.pooling.poolfile import PoolPair
from ..analyses.pooling.candidates import PoolRows

SHUFFLED, POOL = "shuffled", "pool"


def order_choices() -> list[str]:
    return [SHUFFLED, POOL] + [n for n, s in STRATEGIES.items() if s.adaptive]


def set_order(session: Session, order: str, pool_pairs, seed: int, campaign_id: int) -> None:
    """Store campaign ``campaign_id``'s serving order; for ``pool`` and the adaptive strategies, each
    pair's priority and its runs and ranks (``pool_pairs``: :class:`judged.analyses.pooling.poolfile.PoolPair`
    in file order, as :func:`judged.analyses.pooling.poolfile.read_pool_file` reads them)."""
    if order == SHUFFLED:
        return
    if order not in order_choices():
        raise JudgedError(f"unknown --order {order!r} (choose from {', '.join(order_choices())})")
    if order != POOL and not any(p.ranks for p in pool_pairs):
        raise JudgedError(f"--order {order} needs the runs and ranks of each pair: write the pool with "
                          "`judged pool` (its runs and ranks columns)")
    ids = {(q, d): i for i, q, d in session.execute(select(Pair.id, Pair.qid, Pair.docid).where(
        Pair.campaign_id == campaign_id, Pair.practice_grade.is_(None))).all()}
    rows, seen = [], set()
    for priority, p in enumerate(pool_pairs, 1):
        pid = ids.get((p.qid, p.docid))
        if pid is None or pid in seen:
            continue
        seen.add(pid)
        rows.append(PairRank(pair_id=pid, run="", rank=priority))  # run "": the pool file's priority
        rows.extend(PairRank(pair_id=pid, run=r, rank=k) for r, k in zip(p.runs, p.ranks))
    session.add_all(rows)
    session.add(CampaignOrder(campaign_id=campaign_id, strategy=order, seed=seed))


def campaign_order(database, campaign_id: int) -> str:
    """The serving order of a campaign of a :class:`~.db.Database` (read once, kept)."""
    order = database.cache.get(("order", campaign_id))
    if order is None:
        with database.read() as s:
            row = s.scalar(select(CampaignOrder).where(CampaignOrder.campaign_id == campaign_id).limit(1))
            order = database.cache[("order", campaign_id)] = SHUFFLED if row is None else row.strategy
            database.cache[("order_seed", campaign_id)] = 0 if row is None else row.seed
    return order


def _candidates(session: Session, database, campaign_id: int):
    """(pair ids in candidate order, Candidates, priority order) from pair_rank, built once."""
    got = database.cache.get(("order_candidates", campaign_id))
    if got is None:
        rows = session.execute(select(PairRank.pair_id, PairRank.run, PairRank.rank, Pair.qid, Pair.docid)
                               .join(Pair, Pair.id == PairRank.pair_id).where(Pair.campaign_id == campaign_id)
                               .order_by(PairRank.id)).all()
        pairs, priority = {}, {}
        for pair_id, run, rank, qid, docid in rows:
            p = pairs.setdefault(pair_id, PoolPair(qid, docid, 0, [], ranks=[]))
            if run == "":
                priority[pair_id] = rank
            else:
                p.runs.append(run)
                p.ranks.append(rank)
        ordered = sorted(pairs, key=lambda i: priority.get(i, 0))
        ranked = any(p.runs for p in pairs.values())
        cands = PoolRows.of_pairs([pairs[i] for i in ordered]).candidates()[0] if ranked else None
        index = cands.index() if cands is not None else {}
        pid_of = {i: index.get((pairs[i].qid, pairs[i].docid)) for i in ordered}
        got = database.cache[("order_candidates", campaign_id)] = (ordered, cands, pid_of)
    return got


def _labels(session: Session, campaign_id: int) -> dict[int, int]:
    """pair id -> the grade a policy learns from: the adjudication, else the first current
    grade (folded from the append-only history in id order, as :func:`.campaign.current_labels`)."""
    latest: dict = {}
    adjudicated: dict = {}
    for pair_id, assessor_id, kind, grade in session.execute(
            select(Judgment.pair_id, Judgment.assessor_id, Judgment.kind, Judgment.grade).join(Pair)
            .where(Pair.campaign_id == campaign_id, Pair.practice_grade.is_(None)).order_by(Judgment.id)):
        if kind == ADJUDICATE:
            adjudicated[pair_id] = grade
        elif kind == UNDO:
            latest.pop((assessor_id, pair_id), None)
        else:
            latest.pop((assessor_id, pair_id), None)
            latest[(assessor_id, pair_id)] = (kind, grade)
    out: dict = {}
    for (_, pair_id), (kind, grade) in latest.items():  # insertion order: time order of the current events
        if kind == GRADE:
            out.setdefault(pair_id, grade)
    out.update(adjudicated)
    return out


def next_pair_id(session: Session, database, assessor: Assessor, maxgrade: int) -> int | None:
    """The pair this assessor should judge next in the campaign's order (None: nothing
    left for them; ``maxgrade``: the top of the campaign's scale, for the policy). Does not claim it."""
    mine = select(Assignment.pair_id).where(Assignment.assessor_id == assessor.id)
    cid = assessor.campaign_id
    second = session.scalar(select(Pair.id).where(Pair.campaign_id == cid, Pair.practice_grade.is_(None),
                                                  Pair.copies_assigned >= 1, Pair.copies_assigned < Pair.copies_wanted,
                                                  Pair.id.not_in(mine))
                            .order_by(select(func.min(Assignment.id)).where(Assignment.pair_id == Pair.id)
                                      .scalar_subquery(), Pair.id).limit(1))
    if second is not None:
        return second
    ordered, cands, pid_of = _candidates(session, database, cid)
    handed = set(session.scalars(select(Pair.id).where(Pair.campaign_id == cid, Pair.copies_assigned >= 1)))
    order = campaign_order(database, cid)
    if order == POOL or cands is None:
        return next((i for i in ordered if i not in handed), None)
    policy = make_policy(order, cands, seed=database.cache.get(("order_seed", cid), 0), maxgrade=max(maxgrade, 1))
    policy.start()
    for pair_id, grade in _labels(session, cid).items():
        pid = pid_of.get(pair_id)
        if pid is not None:
            policy.observe(pid, float(grade))
    for pair_id in handed:
        pid = pid_of.get(pair_id)
        if pid is not None and not policy.labelled(pid):
            policy.pending[pid] = True
    by_pid = {pid: i for i, pid in pid_of.items() if pid is not None}
    while (pid := policy.select()) is not None:
        pair_id = by_pid[pid]
        if pair_id not in handed:
            return pair_id
    return next((i for i in ordered if i not in handed and pid_of.get(i) is None), None)


def claim_next(session: Session, database, assessor: Assessor, maxgrade: int) -> bool:
    """Claim the next pair in the campaign's order for this assessor; False: none left."""
    for _ in range(1000):
        pair_id = next_pair_id(session, database, assessor, maxgrade)
        if pair_id is None:
            return False
        claimed = session.execute(
            update(Pair).where(Pair.id == pair_id, Pair.copies_assigned < Pair.copies_wanted)
            .values(copies_assigned=Pair.copies_assigned + 1).returning(Pair.id)
            .execution_options(synchronize_session=False)).all()
        if claimed:
            session.add(Assignment(assessor_id=assessor.id, pair_id=pair_id, order_key=f"{assessor.claims:08d}"))
            assessor.claims += 1
            session.flush()
            return True
    raise JudgedError("could not claim a pair in the campaign's order")  # pragma: no cover
