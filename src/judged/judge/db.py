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

from sqlalchemy import create_engine, event, inspect, select
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, DatabaseError, NoSuchModuleError
from sqlalchemy.orm import sessionmaker

from ..core.errors import JudgedError
from .models import SCHEMA_VERSION, Base, SchemaVersion

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


def sqlite_path(db: str) -> str | None:
    """The file of a SQLite database URL or path, None for another database or in memory."""
    url = make_url(normalise_url(db))
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:") \
            or url.database.startswith("file:") or url.query.get("mode") == "memory":
        return None
    return url.database


def create_private(path: str) -> None:
    """Create an empty SQLite file readable by its owner only (0600), unless it exists:
    it holds token hashes, evidence and each campaign's secret seed. SQLite gives its -wal
    and -shm files the database file's mode."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass


def check_sqlite_file(path: str, must_exist: bool) -> None:
    """Refuse, with one line, a directory, or with ``must_exist`` a missing file (only
    ``judged judge init`` makes a new one). A file that is not SQLite is SQLite's to refuse
    (:func:`unopenable`): opening it here and closing it would drop the POSIX locks this
    process's own connections hold on it."""
    if os.path.isdir(path):
        raise JudgedError(f"{path}: is a directory, not a database file")
    if must_exist and not os.path.exists(path):
        raise JudgedError(f"{path}: no such database (`judged judge init --db {path}` creates one)")


def unopenable(db: str, exc: Exception) -> JudgedError:
    """One line for a database that cannot be reached or read (the server refused, a file
    SQLite does not recognise), the password left out."""
    why = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return JudgedError(f"cannot open the database {public_url(db)}: {why[0] if why else type(exc).__name__}")


def make_engine(db: str, must_exist: bool = False) -> Engine:
    url = normalise_url(db)
    if url.startswith("sqlite"):
        path = sqlite_path(db)
        if path is not None:
            check_sqlite_file(path, must_exist)
            create_private(path)
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
        except (NoSuchModuleError, ArgumentError) as exc:
            raise JudgedError(f"{public_url(db)}: not a database URL judged can open ({exc}); give a SQLite "
                              "file path or a URL such as postgresql://user:pw@host/db") from exc
    return engine


def schema_version(engine: Engine) -> int | None:
    """The database's schema version: None when it holds no judged table yet, 1 for judged
    0.1's layout (a ``campaign`` table and no ``judged_schema``)."""
    tables = set(inspect(engine).get_table_names())
    if "judged_schema" in tables:
        with engine.connect() as conn:
            return conn.scalar(select(SchemaVersion.version).order_by(SchemaVersion.version.desc()).limit(1))
    return 1 if "campaign" in tables else None


def create_schema(engine: Engine, url: str = "") -> None:
    """Create the tables of a new database; refuse (nothing changed) one of another version."""
    version = schema_version(engine)
    if version is None:
        Base.metadata.create_all(engine)
        with engine.begin() as conn:
            if conn.scalar(select(SchemaVersion.version)) is None:
                conn.execute(SchemaVersion.__table__.insert().values(version=SCHEMA_VERSION))
    elif version < SCHEMA_VERSION:
        where = public_url(url) if url else "this database"
        raise JudgedError(f"{where} holds campaigns in an older layout (schema {version}, this judged reads "
                          f"{SCHEMA_VERSION}): upgrade it with `judged judge migrate --db {url or 'DB'}` "
                          "(nothing was changed; the upgrade keeps every campaign, judgment and token)")
    elif version > SCHEMA_VERSION:
        raise JudgedError(f"{public_url(url) if url else 'this database'} was written by a newer judged "
                          f"(schema {version}; this one reads {SCHEMA_VERSION}): upgrade judged")


class Database:
    """An engine with two kinds of transaction: :meth:`write` (SQLite: ``BEGIN IMMEDIATE``,
    and one writer at a time inside this process, so threads queue on a lock instead of
    SQLite's sleeping busy handler) and :meth:`read` (SQLite: a deferred ``BEGIN``, which
    in WAL mode reads a snapshot beside the writer)."""

    def __init__(self, db: str, create: bool = True, must_exist: bool = False):
        self.url = db
        self.cache: dict = {}  # facts that never change once written (the campaign)
        self.engine = make_engine(db, must_exist)
        if create:
            try:
                create_schema(self.engine, db)
            except DatabaseError as exc:
                self.engine.dispose()
                raise unopenable(db, exc) from exc
            except BaseException:
                self.engine.dispose()
                raise
        self._read_engine = self.engine.execution_options(**{READ_ONLY: True})
        self._writes = sessionmaker(self.engine, expire_on_commit=False)
        self._reads = sessionmaker(self._read_engine, expire_on_commit=False)
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

    def first_row(self, statement, params: dict):
        """The first row of a one-statement SELECT, run on a pooled DBAPI connection (the
        lookup every request makes: SQLAlchemy's Connection and transaction layers cost
        more than the query). The statement is compiled once per dialect."""
        compiled = self.cache.get(("compiled", statement))
        if compiled is None:
            compiled = self.cache[("compiled", statement)] = statement.compile(dialect=self.engine.dialect)
        bound = compiled.construct_params(params)
        args = [bound[k] for k in compiled.positiontup] if compiled.positional else bound
        connection = self.engine.raw_connection()
        try:
            cursor = connection.cursor()
            try:
                cursor.execute(str(compiled), args)
                return cursor.fetchone()
            finally:
                cursor.close()
        finally:
            connection.close()          # back to the pool, rolled back

    def dispose(self) -> None:
        self.engine.dispose()
