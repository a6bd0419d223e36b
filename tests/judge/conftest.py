"""Fixtures for the judging app's tests (helpers live in judge_helpers.py, a name no other
test directory uses, so imports stay unambiguous)."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from judge_helpers import Server, postgres_url, reset_postgres  # noqa: E402


@pytest.fixture
def sqlite_db(tmp_path) -> str:
    return str(tmp_path / "judging.db")


@pytest.fixture
def postgres_db():
    """An empty schema in the PostgreSQL of $JUDGED_TEST_POSTGRES_URL (skips without one)."""
    url = postgres_url()
    reset_postgres(url)
    yield url
    reset_postgres(url)


@pytest.fixture
def serve(tmp_path):
    servers = []

    def start(db: str, *args: str) -> Server:
        s = Server(db, tmp_path / f"server{len(servers)}.log", *args)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.stop()
