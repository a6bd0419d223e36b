"""Who judges what, in which order: blind, shuffled per assessor, a query's pairs together.

At ``init`` a share ``overlap`` of the pool's pairs (chosen with the campaign's secret seed)
is marked to be judged by two assessors; the rest by one. Work is claimed lazily, one query
at a time: when an assessor has nothing open, they claim every still-needed pair of the next
query in *their own* shuffled query order (a keyed hash of seed, assessor and qid), the
pairs inside a query again in their own shuffled order. A claim is one conditional
``UPDATE pair SET copies_assigned = copies_assigned + 1 WHERE qid = ? AND copies_assigned <
copies_wanted ... RETURNING id, docid``, atomic in SQLite (3.35+) and PostgreSQL alike, so no pair is handed out more often than wanted and
no assessor gets the same pair twice (unique assessor-pair). Nothing the page shows says
which run retrieved a document, at what rank or score: the pool's extra fields are not read.
"""

from __future__ import annotations

import hashlib
import random

from sqlalchemy import select, update
from sqlalchemy.orm import Session, joinedload

from .models import OPEN, Assessor, Assignment, Pair


def overlap_pair_indices(n_pairs: int, overlap: float, seed: str) -> set[int]:
    """Indices of the ``round(overlap * n_pairs)`` pairs that get a second assessor."""
    k = min(n_pairs, round(overlap * n_pairs))
    return set(random.Random(seed).sample(range(n_pairs), k))


def shuffle_key(seed: str, assessor: str, *parts: str) -> str:
    """A per-assessor pseudo-random sort key: blind, reproducible, unguessable without the seed."""
    h = hashlib.sha256("\x1f".join((seed, assessor) + parts).encode("utf-8"))
    return h.hexdigest()[:16]


def open_assignment(session: Session, assessor) -> Assignment | None:
    return session.scalar(
        select(Assignment).where(Assignment.assessor_id == assessor.id, Assignment.state == OPEN)
        .options(joinedload(Assignment.pair).joinedload(Pair.query, innerjoin=True),
                 joinedload(Assignment.pair).joinedload(Pair.document, innerjoin=True))
        .order_by(Assignment.order_key).limit(1))


def claim_next_query(session: Session, assessor: Assessor, seed: str) -> int:
    """Claim the needed pairs of the next query in this assessor's order; the number claimed."""
    mine = select(Assignment.pair_id).where(Assignment.assessor_id == assessor.id)
    qids = session.scalars(
        select(Pair.qid).where(Pair.copies_assigned < Pair.copies_wanted, Pair.id.not_in(mine)).distinct()).all()
    for qid in sorted(qids, key=lambda q: shuffle_key(seed, assessor.name, q)):
        claimed = session.execute(
            update(Pair).where(Pair.qid == qid, Pair.copies_assigned < Pair.copies_wanted, Pair.id.not_in(mine))
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


def next_assignment(session: Session, assessor: Assessor, seed: str) -> Assignment | None:
    """The assessor's next open pair, claiming a new query when none is open; None: all done."""
    current = open_assignment(session, assessor)
    if current is None and claim_next_query(session, assessor, seed):
        current = open_assignment(session, assessor)
    return current
