"""Fixtures for the judging app's tests (helpers live in judge_helpers.py, a name no other
test directory uses, so imports stay unambiguous)."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from judge_helpers import Server  # noqa: E402


@pytest.fixture
def sqlite_db(tmp_path) -> str:
    return str(tmp_path / "judging.db")


@pytest.fixture
def serve(tmp_path):
    servers = []

    def start(db: str) -> Server:
        s = Server(db, tmp_path / f"server{len(servers)}.log")
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.stop()
