"""SQLite storage: schema, migrations, transactions and the event log."""

from engine.store.db import DB_FILENAME, Event, Store, StoreError, dumps, loads, now_iso, open_store

__all__ = ["DB_FILENAME", "Event", "Store", "StoreError", "dumps", "loads", "now_iso", "open_store"]
