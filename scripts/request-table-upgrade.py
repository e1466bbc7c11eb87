#!/usr/bin/env python3
"""How long the log's schema v8 upgrade takes: it rewrites the `request` table, keyed by request id before and by
each request's first sequence after (LogSchema.swift, migration "v8"). Builds a log's v7 `request` table with COUNT
random request ids (answers of 120 bytes) in a WAL database, then times the same SQL the migration runs.

    scripts/request-table-upgrade.py [COUNT]     (default 100000, the request ids a log keeps)
"""
import os
import sqlite3
import sys
import tempfile
import time
import uuid

count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
with tempfile.TemporaryDirectory() as directory:
    db = sqlite3.connect(os.path.join(directory, "log.sqlite"), isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE request (requestID TEXT PRIMARY KEY, sequence INTEGER NOT NULL, result BLOB, "
               "fingerprint INTEGER, actionType TEXT) WITHOUT ROWID")
    db.execute("CREATE INDEX request_by_sequence ON request(sequence)")
    db.execute("BEGIN")
    db.executemany("INSERT INTO request VALUES (?, ?, ?, ?, ?)",
                   ((str(uuid.uuid4()), n, b"r" * 120, n * 7, "counter.add") for n in range(1, count + 1)))
    db.execute("COMMIT")
    started = time.monotonic()
    db.executescript("""
        BEGIN;
        CREATE TABLE request_by_first (sequence INTEGER PRIMARY KEY, requestID TEXT NOT NULL, result BLOB,
            fingerprint INTEGER, actionType TEXT);
        INSERT INTO request_by_first (sequence, requestID, result, fingerprint, actionType)
            SELECT sequence, requestID, result, fingerprint, actionType FROM request;
        DROP TABLE request;
        ALTER TABLE request_by_first RENAME TO request;
        COMMIT;
        """)
    print(f"the v8 upgrade of {count:,} request ids: {time.monotonic() - started:.2f} s")
