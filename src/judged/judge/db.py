"""Engine and sessions: any SQLAlchemy URL; a plain path means a SQLite file.

SQLite runs in WAL mode with ``synchronous=FULL`` (a commit is on disk before the answer
goes out) and every transaction starts with ``BEGIN IMMEDIATE``, so concurrent writers
queue on the busy timeout instead of failing on a read-to-write lock upgrade.
PostgreSQL (``postgresql+psycopg://...``) keeps its defaults (fsync on, READ COMMITTED).
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager, nullcontext

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.orm import sessionmaker

from ..errors import JudgedError
from .models import Base

DEFAULT_DB = "judging.db"
SQLITE_BUSY_TIMEOUT_MS = 60_000
READ_ONLY = "judged_read_only"
# connections kept open: as many as the server has worker threads (anyio: 40), so none is
# opened (and set up) per request
POOL_SIZE, POOL_OVERFLOW = 40, 20


def normalise_url(db: str) -> str:
    """``judging.db`` -> ``sqlite:///judging.db``; ``postgresql://`` uses psycopg 3."""
    if "://" not in db:
        return "sqlite:///" + os.path.abspath(db)
    if db.startswith("postgresql://") or db.startswith("postgres://"):
        return "postgresql+psycopg://" + db.split("://", 1)[1]
    return db


def public_url(db: str) -> str:
    """The URL without its password, for messages and provenance."""
    return make_url(normalise_url(db)).render_as_string(hide_password=True)


def make_engine(db: str) -> Engine:
    url = normalise_url(db)
    if url.startswith("sqlite"):
        engine = create_engine(url, pool_size=POOL_SIZE, max_overflow=POOL_OVERFLOW,
                               connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record):
            dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=FULL")
            cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn):
            conn.exec_driver_sql("BEGIN" if conn.get_execution_options().get(READ_ONLY) else "BEGIN IMMEDIATE")
    else:
        try:
            engine = create_engine(url, pool_size=POOL_SIZE, max_overflow=POOL_OVERFLOW, pool_pre_ping=True)
        except ModuleNotFoundError as exc:
            raise JudgedError(f"database driver missing for {public_url(db)}: {exc.name} "
                              "(pip install 'judged[web]')") from exc
    return engine


def create_schema(engine: Engine) -> None:
    Base.metadata.create_all(engine)


class Database:
    """An engine with two kinds of transaction: :meth:`write` (SQLite: ``BEGIN IMMEDIATE``,
    and one writer at a time inside this process, so threads queue on a lock instead of
    SQLite's sleeping busy handler) and :meth:`read` (SQLite: a deferred ``BEGIN``, which
    in WAL mode reads a snapshot beside the writer)."""

    def __init__(self, db: str, create: bool = True):
        self.url = db
        self.cache: dict = {}  # facts that never change once written (the campaign)
        self.engine = make_engine(db)
        if create:
            create_schema(self.engine)
        self._writes = sessionmaker(self.engine, expire_on_commit=False)
        self._reads = sessionmaker(self.engine.execution_options(**{READ_ONLY: True}), expire_on_commit=False)
        self._lock = threading.Lock() if self.engine.dialect.name == "sqlite" else nullcontext()

    @contextmanager
    def write(self):
        """One unit of work: commit on success (on disk before this returns), roll back on error."""
        with self._lock, self._writes() as session, session.begin():
            yield session

    @contextmanager
    def read(self):
        with self._reads() as session, session.begin():
            yield session

    def dispose(self) -> None:
        self.engine.dispose()
