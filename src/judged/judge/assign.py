"""Who judges what, in which order: blind, shuffled per assessor, a query's pairs together.

At ``init`` a share ``overlap`` of the pool's pairs (chosen with the campaign's secret seed)
is marked to be judged by two assessors; the rest by one. A campaign's practice pairs go to
every assessor first (their order key sorts before any real one). Work is claimed lazily,
one query at a time: when an assessor has nothing open, they claim every still-needed pair
of the next query in *their own* shuffled query order (:func:`query_order`: a keyed hash of
seed, assessor and qid), the pairs inside a query again in their own shuffled order. A claim
is one conditional ``UPDATE pair SET copies_assigned = copies_assigned + 1 WHERE qid = ? AND
copies_assigned < copies_wanted ... RETURNING id, docid``, atomic in SQLite (3.35+) and
PostgreSQL alike, so no pair is handed out more often than wanted and no assessor gets the
same pair twice (unique assessor-pair). Nothing the page shows says which run retrieved a
document, at what rank or score: the pool's extra fields are not read.

:func:`next_assignment` is the one place that decides what ``/api/next`` serves.
"""

from __future__ import annotations

import hashlib
import random

from sqlalchemy import select, update
from sqlalchemy.orm import Session, joinedload

from .models import OPEN, Assessor, Assignment, Pair

PRACTICE_KEY = "!"   # sorts before the digits of a real claim's block number


def overlap_pair_indices(n_pairs: int, overlap: float, seed: str) -> set[int]:
    """Indices of the ``round(overlap * n_pairs)`` pairs that get a second assessor."""
    k = min(n_pairs, round(overlap * n_pairs))
    return set(random.Random(seed).sample(range(n_pairs), k))


def shuffle_key(seed: str, assessor: str, *parts: str) -> str:
    """A per-assessor pseudo-random sort key: blind, reproducible, unguessable without the seed."""
    h = hashlib.sha256("\x1f".join((seed, assessor) + parts).encode("utf-8"))
    return h.hexdigest()[:16]


def open_assignment(session: Session, assessor) -> Assignment | None:
    """The assessor's first open pair in their order (practice pairs first)."""
    return session.scalar(
        select(Assignment).where(Assignment.assessor_id == assessor.id, Assignment.state == OPEN)
        .options(joinedload(Assignment.pair).joinedload(Pair.query, innerjoin=True),
                 joinedload(Assignment.pair).joinedload(Pair.document, innerjoin=True))
        .order_by(Assignment.order_key).limit(1))


def query_order(session: Session, assessor: Assessor, seed: str, qids: list[str]) -> list[str]:
    """The order in which this assessor claims the queries that still need judging: their
    own shuffle (blind: another assessor's order tells nothing about theirs)."""
    return sorted(qids, key=lambda q: shuffle_key(seed, assessor.name, q))


def claim_next_query(session: Session, assessor: Assessor, seed: str) -> int:
    """Claim the needed pairs of the next query in this assessor's order; the number claimed."""
    mine = select(Assignment.pair_id).where(Assignment.assessor_id == assessor.id)
    needed = ((Pair.campaign_id == assessor.campaign_id) & Pair.practice_grade.is_(None)
              & (Pair.copies_assigned < Pair.copies_wanted) & Pair.id.not_in(mine))
    qids = session.scalars(select(Pair.qid).where(needed).distinct()).all()
    for qid in query_order(session, assessor, seed, list(qids)):
        claimed = session.execute(
            update(Pair).where(needed, Pair.qid == qid)
            .values(copies_assigned=Pair.copies_assigned + 1).returning(Pair.id, Pair.docid)
            .execution_options(synchronize_session=False)).all()
        if claimed:
            block = f"{assessor.claims:08d}"
            session.add_all(Assignment(assessor_id=assessor.id, pair_id=pair_id,
                                       order_key=f"{block}:{shuffle_key(seed, assessor.name, qid, docid)}")
                            for pair_id, docid in claimed)
            assessor.claims += 1
            session.flush()
            return len(claimed)
    return 0


def assign_practice(session: Session, assessor: Assessor, seed: str) -> int:
    """Give the assessor every practice pair of their campaign (once); the number given."""
    have = select(Assignment.pair_id).where(Assignment.assessor_id == assessor.id)
    pairs = session.execute(select(Pair.id, Pair.qid, Pair.docid).where(
        Pair.campaign_id == assessor.campaign_id, Pair.practice_grade.is_not(None), Pair.id.not_in(have))).all()
    session.add_all(Assignment(assessor_id=assessor.id, pair_id=pid,
                               order_key=PRACTICE_KEY + shuffle_key(seed, assessor.name, "practice", qid, docid))
                    for pid, qid, docid in pairs)
    session.flush()
    return len(pairs)


class PracticeFinished(Exception):
    """The assessor graded every practice pair and has not yet read their result and started."""


def next_assignment(session: Session, assessor: Assessor, seed: str, practice_pairs: int = 0,
                    claim=None) -> Assignment | None:
    """What ``/api/next`` serves: the assessor's next open pair (practice pairs first, given
    on the first call when the campaign has them), claiming a new query when none is open;
    None when nothing is left. Raises :class:`PracticeFinished` between the practice round
    and the real work, until the assessor has started (``Assessor.practice_done_at``); admins
    skip the practice round. ``claim``: how new work is claimed (default: the next query in
    the assessor's shuffled order, :func:`claim_next_query`; an ordered campaign passes
    :func:`.ordering.claim_next`, one pair at a time in a pooling policy's order)."""
    current = open_assignment(session, assessor)
    if current is not None:
        return current
    if practice_pairs and assessor.practice_done_at is None and not assessor.is_admin:
        assign_practice(session, assessor, seed)
        current = open_assignment(session, assessor)   # (or the round another of their requests just gave)
        if current is None:
            raise PracticeFinished()
        return current
    if assessor.active:
        claim() if claim is not None else claim_next_query(session, assessor, seed)
    # what this claim gave, or what another request of theirs claimed a moment ago; None: all done
    return open_assignment(session, assessor)
