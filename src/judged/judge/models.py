"""The campaign's tables (SQLAlchemy 2.0 ORM).

History is append-only: every grade, skip, undo and adjudication is one :class:`Judgment`
row, never updated. :class:`Assignment` caches the assessor's current state of a pair
(updated in the same transaction) so that ``/api/next`` need not replay history.
"""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

# the kinds of Judgment rows
GRADE, SKIP, UNDO, ADJUDICATE = "grade", "skip", "undo", "adjudicate"
# Assignment.state
OPEN, GRADED, SKIPPED = "open", "graded", "skipped"


def utcnow() -> datetime:
    """Naive UTC (SQLite keeps no time zone; every stored time is UTC)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


class Campaign(Base):
    __tablename__ = "campaign"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    scale: Mapped[dict] = mapped_column(JSON)
    evidence_required: Mapped[bool] = mapped_column(Boolean, default=True)
    overlap: Mapped[float] = mapped_column(Float, default=0.0)
    seed: Mapped[str] = mapped_column(String(64))
    pool_source: Mapped[str] = mapped_column(Text)
    pool_sha256: Mapped[str] = mapped_column(String(64))


class Query(Base):
    __tablename__ = "query"
    qid: Mapped[str] = mapped_column(String(200), primary_key=True)
    text: Mapped[str] = mapped_column(Text)


class Document(Base):
    __tablename__ = "document"
    docid: Mapped[str] = mapped_column(String(200), primary_key=True)
    title: Mapped[str] = mapped_column(Text, default="")
    text: Mapped[str] = mapped_column(Text, default="")


class Pair(Base):
    """One pooled (qid, docid) pair; ``copies_wanted`` is 2 for the overlap share, else 1."""
    __tablename__ = "pair"
    __table_args__ = (UniqueConstraint("qid", "docid"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    qid: Mapped[str] = mapped_column(ForeignKey("query.qid"), index=True)
    docid: Mapped[str] = mapped_column(ForeignKey("document.docid"))
    copies_wanted: Mapped[int] = mapped_column(Integer, default=1)
    copies_assigned: Mapped[int] = mapped_column(Integer, default=0)
    query: Mapped[Query] = relationship()        # loaded when shown (assign.open_assignment)
    document: Mapped[Document] = relationship()


class Assessor(Base):
    __tablename__ = "assessor"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    claims: Mapped[int] = mapped_column(Integer, default=0)


class LoginSession(Base):
    """A browser session: the cookie holds a random id, the table only its hash."""
    __tablename__ = "login_session"
    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    assessor_id: Mapped[int] = mapped_column(ForeignKey("assessor.id"))
    csrf: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime)
    assessor: Mapped[Assessor] = relationship(lazy="joined", innerjoin=True)


class Assignment(Base):
    __tablename__ = "assignment"
    __table_args__ = (UniqueConstraint("assessor_id", "pair_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    assessor_id: Mapped[int] = mapped_column(ForeignKey("assessor.id"), index=True)
    pair_id: Mapped[int] = mapped_column(ForeignKey("pair.id"), index=True)
    order_key: Mapped[str] = mapped_column(String(80))
    state: Mapped[str] = mapped_column(String(10), default=OPEN)
    pair: Mapped[Pair] = relationship(lazy="joined", innerjoin=True)


class Judgment(Base):
    """One appended event: a grade (a revision when the pair was graded before), a skip,
    an undo of the assessor's latest grade or skip, or an admin's adjudication."""
    __tablename__ = "judgment"
    __table_args__ = (UniqueConstraint("assessor_id", "request_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    assessor_id: Mapped[int] = mapped_column(ForeignKey("assessor.id"), index=True)
    pair_id: Mapped[int] = mapped_column(ForeignKey("pair.id"), index=True)
    kind: Mapped[str] = mapped_column(String(12))
    grade: Mapped[int | None] = mapped_column(Integer, nullable=True)
    evidence: Mapped[str] = mapped_column(Text, default="")
    request_id: Mapped[str] = mapped_column(String(200))
    revision: Mapped[int] = mapped_column(Integer, default=1)
    elapsed_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)  # since the assessor's previous event
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    assessor: Mapped[Assessor] = relationship(lazy="joined", innerjoin=True)
    pair: Mapped[Pair] = relationship(lazy="joined", innerjoin=True)


class CampaignOrder(Base):
    """How ``/api/next`` serves the pairs when not shuffled per assessor (no row: shuffled):
    ``pool`` (the pool file's priority order) or a pooling strategy's name (see
    :mod:`.ordering`)."""
    __tablename__ = "campaign_order"
    id: Mapped[int] = mapped_column(primary_key=True)
    strategy: Mapped[str] = mapped_column(String(40))
    seed: Mapped[int] = mapped_column(Integer, default=0)


class PairRank(Base):
    """A pooled pair's rank in one run (``run`` empty: its priority in the pool file), for
    the ordered campaigns; never shown to an assessor."""
    __tablename__ = "pair_rank"
    id: Mapped[int] = mapped_column(primary_key=True)
    pair_id: Mapped[int] = mapped_column(ForeignKey("pair.id"), index=True)
    run: Mapped[str] = mapped_column(Text)
    rank: Mapped[int] = mapped_column(Integer)
