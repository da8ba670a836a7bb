"""Fixtures shared by the integration tests."""

from tests.postgres import postgres_server, postgres_url

__all__ = ["postgres_server", "postgres_url"]
