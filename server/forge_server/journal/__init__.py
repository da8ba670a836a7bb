"""Run journals (base.py): SQLite embedded, PostgreSQL shared, or none."""

from __future__ import annotations

from pathlib import Path

from forge_core.cache import cache_dir
from forge_server.journal.base import Journal, JournaledRun

__all__ = ["Journal", "JournaledRun", "default_url", "open_journal"]


def default_url() -> str:
    return f"sqlite:///{cache_dir() / 'journal.db'}"


def open_journal(url: str) -> Journal | None:
    """The journal `url` names (not opened yet); None for "none"."""
    if url in ("", "none"):
        return None
    if url.startswith("sqlite:///"):
        from forge_server.journal.sqlite import SqliteJournal

        return SqliteJournal(Path(url[len("sqlite:///") :]))
    if url.startswith(("postgresql://", "postgres://")):
        from forge_server.journal.postgres import PostgresJournal

        return PostgresJournal(url)
    raise ValueError(
        f"--journal {url!r}: expected none, sqlite:///PATH or postgresql://USER@HOST/DB"
    )
