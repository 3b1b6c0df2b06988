"""Fixtures for the Temporal tests: the dev server binary, and PostgreSQL schemas."""

from __future__ import annotations

from ..ledger.conftest import pg_schema_url

__all__ = ["pg_schema_url"]
