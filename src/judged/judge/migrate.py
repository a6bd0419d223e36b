"""``judged judge migrate``: upgrade a campaign database to :data:`~.models.SCHEMA_VERSION`.

Schema 1 (judged 0.1) held one campaign; its ``query`` and ``document`` tables were keyed
by qid and docid alone. Schema 2 scopes topics, documents, pairs and assessors to a
campaign. The upgrade reads every row, drops the old tables, creates the new ones and
writes the rows back with the campaign's id, keeping every id (so sessions, assignments
and judgments point where they did), in **one transaction**: it either happens whole or
leaves the database as it was. A SQLite file is first copied beside itself
(``<file>.schema1.bak``, with SQLite's online backup).
"""

from __future__ import annotations

import sqlite3

from sqlalchemy import (JSON, Boolean, Column, DateTime, Float, ForeignKey, Integer, MetaData, String, Table, Text,
                        UniqueConstraint, inspect, select)
from sqlalchemy.exc import DatabaseError

from ..core.errors import JudgedError
from .db import create_private, make_engine, normalise_url, public_url, schema_version, unopenable
from .models import (SCHEMA_VERSION, Assessor, Assignment, Base, Campaign, CampaignOrder, Document, Judgment,
                     LoginSession, Pair, PairRank, Query, SchemaVersion)

# schema 1: judged 0.1's tables, as its models declared them (read with their types)
V1 = MetaData()
Table("campaign", V1, Column("id", Integer, primary_key=True), Column("name", String(200)),
      Column("created_at", DateTime), Column("scale", JSON), Column("evidence_required", Boolean),
      Column("overlap", Float), Column("seed", String(64)), Column("pool_source", Text), Column("pool_sha256", String(64)))
Table("query", V1, Column("qid", String(200), primary_key=True), Column("text", Text))
Table("document", V1, Column("docid", String(200), primary_key=True), Column("title", Text), Column("text", Text))
Table("pair", V1, Column("id", Integer, primary_key=True), Column("qid", ForeignKey("query.qid"), index=True),
      Column("docid", ForeignKey("document.docid")), Column("copies_wanted", Integer), Column("copies_assigned", Integer),
      UniqueConstraint("qid", "docid"))
Table("assessor", V1, Column("id", Integer, primary_key=True), Column("name", String(200), unique=True),
      Column("token_hash", String(64), unique=True), Column("is_admin", Boolean), Column("created_at", DateTime),
      Column("claims", Integer))
Table("login_session", V1, Column("id_hash", String(64), primary_key=True), Column("assessor_id", ForeignKey("assessor.id")),
      Column("csrf", String(64)), Column("created_at", DateTime), Column("expires_at", DateTime))
Table("assignment", V1, Column("id", Integer, primary_key=True), Column("assessor_id", ForeignKey("assessor.id"), index=True),
      Column("pair_id", ForeignKey("pair.id"), index=True), Column("order_key", String(80)), Column("state", String(10)),
      UniqueConstraint("assessor_id", "pair_id"))
Table("judgment", V1, Column("id", Integer, primary_key=True), Column("assessor_id", ForeignKey("assessor.id"), index=True),
      Column("pair_id", ForeignKey("pair.id"), index=True), Column("kind", String(12)), Column("grade", Integer, nullable=True),
      Column("evidence", Text), Column("request_id", String(200)), Column("revision", Integer),
      Column("elapsed_ms", Integer, nullable=True), Column("created_at", DateTime), UniqueConstraint("assessor_id", "request_id"))

# children first (the order to drop them in)
V1_TABLES = ("login_session", "judgment", "assignment", "pair", "assessor", "query", "document", "campaign")


def _backup_sqlite(url: str) -> str:
    path = url.split("sqlite:///", 1)[1]
    target = path + ".schema1.bak"
    create_private(target)          # a copy of token hashes and seeds: the owner's only, like the database
    src, dst = sqlite3.connect(path), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()
    return target


def migrate(db: str) -> str:
    """Upgrade ``db`` in place; returns a sentence saying what was done."""
    engine = make_engine(db, must_exist=True)
    try:
        try:
            version = schema_version(engine)
        except DatabaseError as exc:
            raise unopenable(db, exc) from exc
        if version is None:
            raise JudgedError(f"{public_url(db)} holds no campaign: nothing to migrate (`judged judge init` creates one)")
        if version == SCHEMA_VERSION:
            return f"{public_url(db)} is already at schema {SCHEMA_VERSION}: nothing to do"
        if version > SCHEMA_VERSION:
            raise JudgedError(f"{public_url(db)} has schema {version}, newer than this judged's {SCHEMA_VERSION}")
        url = normalise_url(db)
        backup = _backup_sqlite(url) if url.startswith("sqlite") else None
        with engine.begin() as conn:
            rows = {t: [dict(r._mapping) for r in conn.execute(V1.tables[t].select())] for t in V1_TABLES}
            # the --order tables (judged between schema 1 and 2 had them without a campaign id)
            extra = set(inspect(conn).get_table_names()) & {"pair_rank", "campaign_order"}
            for t in ("pair_rank", "campaign_order"):
                rows[t] = [dict(r._mapping) for r in conn.exec_driver_sql(f'SELECT * FROM "{t}"')] if t in extra else []
                if t in extra:
                    conn.exec_driver_sql(f'DROP TABLE "{t}"')
            if len(rows["campaign"]) != 1:
                raise JudgedError(f"a schema 1 database holds one campaign; this one holds {len(rows['campaign'])}")
            cid = rows["campaign"][0]["id"]
            for t in V1_TABLES:
                V1.tables[t].drop(conn)
            Base.metadata.create_all(conn)
            c = rows["campaign"][0]
            conn.execute(Campaign.__table__.insert(), [{**c, "guidelines": ""}])
            inserts = [(Query, [{**r, "campaign_id": cid, "title": "", "description": "", "narrative": ""}
                                for r in rows["query"]]),
                       (Document, [{**r, "campaign_id": cid} for r in rows["document"]]),
                       (Pair, [{**r, "campaign_id": cid, "practice_grade": None} for r in rows["pair"]]),
                       (Assessor, [{**r, "campaign_id": cid, "active": True, "practice_done_at": None}
                                   for r in rows["assessor"]]),
                       (LoginSession, rows["login_session"]),
                       (Assignment, rows["assignment"]),
                       (Judgment, [{**r, "comment": "", "flag": None} for r in rows["judgment"]]),
                       (PairRank, rows["pair_rank"]),
                       (CampaignOrder, [{**r, "campaign_id": cid} for r in rows["campaign_order"]])]
            for model, values in inserts:
                if values:
                    conn.execute(model.__table__.insert(), values)
            conn.execute(SchemaVersion.__table__.insert().values(version=SCHEMA_VERSION))
            if conn.dialect.name == "postgresql":   # explicit ids were written: move the sequences past them
                for model in (Campaign, Query, Document, Pair, Assessor, Assignment, Judgment, PairRank, CampaignOrder):
                    t = model.__tablename__
                    conn.exec_driver_sql(f"SELECT setval(pg_get_serial_sequence('\"{t}\"', 'id'), "
                                      f"COALESCE((SELECT MAX(id) FROM \"{t}\"), 0) + 1, false)")
            name = conn.scalar(select(Campaign.name))
        counts = ", ".join(f"{len(rows[t])} {t.replace('_', ' ')} rows" for t in ("pair", "assessor", "judgment"))
        return (f"{public_url(db)}: schema {version} -> {SCHEMA_VERSION}; campaign {name!r} kept ({counts})"
                + (f"; the old file is kept as {backup}" if backup else ""))
    finally:
        engine.dispose()
