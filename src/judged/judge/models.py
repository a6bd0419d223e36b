"""The campaigns' tables (SQLAlchemy 2.0 ORM), schema version :data:`SCHEMA_VERSION`.

One database holds several campaigns; everything else belongs to one campaign: its topics
(queries), documents, pooled pairs, practice pairs and assessors (an assessor's token opens
exactly one campaign). History is append-only: every grade, skip, undo and adjudication is
one :class:`Judgment` row, never updated. :class:`Assignment` caches the assessor's current
state of a pair (updated in the same transaction) so that ``/api/next`` need not replay
history. :mod:`.db` checks the version and :mod:`.migrate` upgrades older databases.
"""

from __future__ import annotations

from datetime import datetime, timezone

from sqlalchemy import (JSON, Boolean, DateTime, Float, ForeignKey, ForeignKeyConstraint, Integer, String, Text,
                        UniqueConstraint)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

SCHEMA_VERSION = 2   # 1: judged 0.1 (one campaign per database); 2: campaigns, topics, practice, flags
# the kinds of Judgment rows
GRADE, SKIP, UNDO, ADJUDICATE = "grade", "skip", "undo", "adjudicate"
# Assignment.state
OPEN, GRADED, SKIPPED = "open", "graded", "skipped"
# what an assessor may flag a document as (stored with the grade or skip)
FLAGS = ("unreadable", "duplicate", "wrong-language")


def utcnow() -> datetime:
    """Naive UTC (SQLite keeps no time zone; every stored time is UTC)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


class SchemaVersion(Base):
    __tablename__ = "judged_schema"
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    migrated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class Campaign(Base):
    __tablename__ = "campaign"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    scale: Mapped[dict] = mapped_column(JSON)
    evidence_required: Mapped[bool] = mapped_column(Boolean, default=True)
    overlap: Mapped[float] = mapped_column(Float, default=0.0)
    seed: Mapped[str] = mapped_column(String(64))
    pool_source: Mapped[str] = mapped_column(Text)        # every pool merged in, one per line
    pool_sha256: Mapped[str] = mapped_column(String(64))  # the first pool's
    guidelines: Mapped[str] = mapped_column(Text, default="")   # Markdown, shown at /guidelines


class Query(Base):
    """A topic: ``text`` is the query the assessor reads first (a TREC title, a BEIR text);
    title, description and narrative are shown when the topic file has them."""
    __tablename__ = "query"
    __table_args__ = (UniqueConstraint("campaign_id", "qid"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaign.id"), index=True)
    qid: Mapped[str] = mapped_column(String(200))
    text: Mapped[str] = mapped_column(Text)
    title: Mapped[str] = mapped_column(Text, default="")
    description: Mapped[str] = mapped_column(Text, default="")
    narrative: Mapped[str] = mapped_column(Text, default="")


class Document(Base):
    __tablename__ = "document"
    __table_args__ = (UniqueConstraint("campaign_id", "docid"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaign.id"), index=True)
    docid: Mapped[str] = mapped_column(String(200))
    title: Mapped[str] = mapped_column(Text, default="")
    text: Mapped[str] = mapped_column(Text, default="")


class Pair(Base):
    """One pooled (qid, docid) pair; ``copies_wanted`` is 2 for the overlap share, else 1. A
    practice pair (``practice_grade`` set: its known answer) goes to every assessor before
    their first real pair and never into the qrels."""
    __tablename__ = "pair"
    __table_args__ = (UniqueConstraint("campaign_id", "qid", "docid"),
                      ForeignKeyConstraint(["campaign_id", "qid"], ["query.campaign_id", "query.qid"]),
                      ForeignKeyConstraint(["campaign_id", "docid"], ["document.campaign_id", "document.docid"]))
    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaign.id"), index=True)
    qid: Mapped[str] = mapped_column(String(200), index=True)
    docid: Mapped[str] = mapped_column(String(200))
    copies_wanted: Mapped[int] = mapped_column(Integer, default=1)
    copies_assigned: Mapped[int] = mapped_column(Integer, default=0)
    practice_grade: Mapped[int | None] = mapped_column(Integer, nullable=True)
    query: Mapped[Query] = relationship(viewonly=True, primaryjoin="and_(Pair.campaign_id == Query.campaign_id, "
                                                                   "Pair.qid == Query.qid)")
    document: Mapped[Document] = relationship(viewonly=True, primaryjoin="and_(Pair.campaign_id == Document.campaign_id, "
                                                                         "Pair.docid == Document.docid)")


class Assessor(Base):
    __tablename__ = "assessor"
    __table_args__ = (UniqueConstraint("campaign_id", "name"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaign.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    claims: Mapped[int] = mapped_column(Integer, default=0)
    active: Mapped[bool] = mapped_column(Boolean, default=True)       # claims new work
    practice_done_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)


class LoginSession(Base):
    """A browser session: the cookie holds a random id (signed by the server process), the
    table only its hash; ``csrf`` holds the SHA-256 of the session's page key, which the
    page sends with every API call (see :class:`~.auth.SessionKeys`)."""
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
    an undo of the assessor's latest grade or skip, or an admin's adjudication. A grade or
    skip may carry a comment and a flag (:data:`FLAGS`)."""
    __tablename__ = "judgment"
    __table_args__ = (UniqueConstraint("assessor_id", "request_id"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    assessor_id: Mapped[int] = mapped_column(ForeignKey("assessor.id"), index=True)
    pair_id: Mapped[int] = mapped_column(ForeignKey("pair.id"), index=True)
    kind: Mapped[str] = mapped_column(String(12))
    grade: Mapped[int | None] = mapped_column(Integer, nullable=True)
    evidence: Mapped[str] = mapped_column(Text, default="")
    comment: Mapped[str] = mapped_column(Text, default="")
    flag: Mapped[str | None] = mapped_column(String(20), nullable=True)
    request_id: Mapped[str] = mapped_column(String(200))
    revision: Mapped[int] = mapped_column(Integer, default=1)
    elapsed_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)  # since the assessor's previous event
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    assessor: Mapped[Assessor] = relationship(lazy="joined", innerjoin=True)
    pair: Mapped[Pair] = relationship(lazy="joined", innerjoin=True)


class CampaignOrder(Base):
    """How ``/api/next`` serves a campaign's pairs when not shuffled per assessor (no row:
    shuffled): ``pool`` (the pool file's priority order) or a pooling strategy's name (see
    :mod:`.ordering`)."""
    __tablename__ = "campaign_order"
    id: Mapped[int] = mapped_column(primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("campaign.id"), index=True)
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
