"""The results database's schema: ordered migrations (append only; never edit a shipped one),
versioned with PRAGMA user_version."""

from __future__ import annotations

import sqlite3
from typing import Callable

from scope.store import windows
from scope.store.scrub import scrub_store

# Each entry takes the schema from version i to i + 1: SQL, or a function of the connection that
# rewrites rows (run inside the same transaction).  Append only; never edit a shipped one.
MIGRATIONS: list[str | Callable[[sqlite3.Connection], None]] = [
    # 1: runs and their measured points
    """
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        started_utc TEXT NOT NULL,
        finished_utc TEXT,
        status TEXT NOT NULL,            -- running | complete | incomplete
        reason TEXT,                     -- why a run is incomplete
        command TEXT,                    -- JSON argv of the launch
        launcher TEXT,
        ranks INTEGER,
        hosts TEXT,                      -- JSON list
        mpi_library TEXT,
        engine_version TEXT,
        record_schema INTEGER,
        timer TEXT,
        oversubscribed INTEGER,
        context TEXT,                    -- the engine's context record, JSON
        stderr TEXT                      -- the launch's stderr, kept on failure
    );
    CREATE TABLE points (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        test TEXT NOT NULL,
        params TEXT NOT NULL,            -- JSON of the parameters other than size, keys sorted
        size INTEGER,
        unit TEXT NOT NULL,
        count INTEGER, batch INTEGER, ops_per_iter REAL, bytes_per_op REAL,
        min REAL, median REAL, mean REAL, sd REAL, max REAL,
        p5 REAL, p25 REAL, p75 REAL, p95 REAL, p99 REAL,
        ci_lo REAL, ci_hi REAL, ci_rel REAL,
        bw_median REAL,
        warmup_iterations INTEGER, warmup_s REAL, warmup_converged INTEGER,
        stop TEXT, seconds REAL, note TEXT,
        samples BLOB,                    -- float64 little-endian, in `unit`
        record TEXT                      -- the engine record without samples, JSON
    );
    CREATE INDEX points_by_run ON points(run_id, test, seq);
    """,
    # 2: skips, errors and warnings as data; a label to tell runs apart
    """
    CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        type TEXT NOT NULL,              -- skip | error | warning
        kind TEXT,
        test TEXT,
        params TEXT,
        message TEXT,
        hint TEXT,
        record TEXT
    );
    CREATE INDEX events_by_run ON events(run_id);
    ALTER TABLE runs ADD COLUMN label TEXT;
    """,
    # 3: runs imported from other tools
    """
    ALTER TABLE runs ADD COLUMN origin TEXT NOT NULL DEFAULT 'scope';  -- scope | osu | imb | csv
    ALTER TABLE runs ADD COLUMN source TEXT;                           -- the imported file
    """,
    # 4: the engine's test descriptors (level, measures, roles), kept current by each run, so
    # views know what a test is for without hard-coding names
    """
    CREATE TABLE tests (
        name TEXT PRIMARY KEY,
        descriptor TEXT NOT NULL         -- the engine's `test` record, JSON
    );
    """,
    # 5: who is running a run, so a run whose process is gone is closed as interrupted
    """
    ALTER TABLE runs ADD COLUMN pid INTEGER;
    ALTER TABLE runs ADD COLUMN host TEXT;
    """,
    # 6: launches as replicates: each launch's own measurement of a point is kept (launch = k),
    # beside the point the run reports, which combines them (launch NULL)
    """
    ALTER TABLE points ADD COLUMN launch INTEGER;
    ALTER TABLE runs ADD COLUMN launches INTEGER;
    CREATE INDEX points_by_launch ON points(run_id, seq, launch);
    """,
    # 7: imported benchmarks by columns: a row per benchmark, its sizes, times and counts as
    # arrays, so a million imported rows take about their CSV's size (a points row each took 26x)
    """
    CREATE TABLE imported (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        first_seq INTEGER NOT NULL,      -- row i is the point seq first_seq + i
        test TEXT NOT NULL,
        n INTEGER NOT NULL,
        measures TEXT NOT NULL,
        credit REAL NOT NULL,            -- bytes moved per operation, in message sizes
        statistic TEXT NOT NULL,         -- what the tool's number is (a mean, as given ...)
        sizes BLOB NOT NULL,             -- int64 little-endian, bytes, ascending
        times BLOB NOT NULL,             -- float64 little-endian, us
        counts BLOB                      -- int64 little-endian, repetitions, or NULL
    );
    CREATE INDEX imported_by_run ON imported(run_id);
    """,
    # 8: predictions frozen when made, with their inputs (the runs and fitted parameters they
    # drew on), so a stored prediction never changes when later runs are added
    """
    CREATE TABLE predictions (
        id INTEGER PRIMARY KEY,
        made_utc TEXT NOT NULL,
        run_id INTEGER REFERENCES runs(id) ON DELETE CASCADE,  -- the measured run it predicts, or NULL
        test TEXT,                       -- the kernel of `scope predict KERNEL`; NULL for a run's
        inputs TEXT NOT NULL,            -- JSON: analysis/predict.py Inputs, each figure with its run
        predicted TEXT NOT NULL          -- JSON: the predictions, one per kernel point or process count
    );
    CREATE INDEX predictions_by_run ON predictions(run_id);
    """,
    # 9: what a run's job may leave on disk (its fresh io directory), written before launch, so
    # the next scope removes it when the scope that ran it was killed
    """
    ALTER TABLE runs ADD COLUMN scratch TEXT;  -- JSON list of paths
    """,
    # 10: every column a peer tool printed beside its main figure (OSU -f: min, max, iterations;
    # osu_mbw_mr: messages per second), kept with the imported points
    """
    ALTER TABLE imported ADD COLUMN extra TEXT;  -- JSON {column: [value per row, in size order]}
    """,
    # 11: every pair a pairs-timed test measured (p2p.allpairs): a row per launch and step, its
    # pairs as columns of little-endian arrays (store/pairs.py), a 1,024-host sweep in 1,023 rows
    """
    CREATE TABLE pairs (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        launch INTEGER NOT NULL,
        seq INTEGER NOT NULL,            -- the point's index
        test TEXT NOT NULL,
        params TEXT NOT NULL,            -- JSON, the point's parameters (size, mode)
        step INTEGER NOT NULL,
        steps INTEGER NOT NULL,
        mode TEXT NOT NULL,
        a BLOB NOT NULL, b BLOB NOT NULL, n BLOB NOT NULL,   -- int64: ranks a < b, round trips
        median_us BLOB NOT NULL, ci_lo_us BLOB NOT NULL,     -- float64, one-way time, us
        ci_hi_us BLOB NOT NULL, min_us BLOB NOT NULL
    );
    CREATE INDEX pairs_by_run ON pairs(run_id, seq, launch, step);
    """,
    # 12: a program's own events on the global clock (the clock library's events files, issue
    # 57): a row per rank, its events as columns of little-endian arrays (store/timeline.py)
    """
    CREATE TABLE timeline (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        rank INTEGER NOT NULL,
        header TEXT NOT NULL,            -- the rank's `events` record, JSON
        names TEXT NOT NULL,             -- JSON list: the distinct event names
        name_of BLOB NOT NULL,           -- int64: each event's index into names
        t_ns BLOB NOT NULL,              -- float64: global time, ns
        bound_ns BLOB NOT NULL,          -- float64: its error bound, ns
        ticks BLOB NOT NULL              -- int64: the counter's value at the stamp
    );
    CREATE INDEX timeline_by_run ON timeline(run_id, rank);
    """,
    # 13: no credential in what older runs stored, and no variable of the machine's own (issue 67)
    scrub_store,
    # 14: a window-timed point's per-rank times as a binary column beside its record, not in its
    # JSON (store/windows.py): 80 % of such a record, read only by the views that draw them
    windows.migrate,
    # 15: the record's keys a whole run's views read of every point (model/point.py PART_KEYS),
    # as a column of their own: a large run's show read them from each 2 KB record.  Rows
    # stored before have none and are read from their record, as before (store/decode.py);
    # a record changed after (by hand, or a later scrub) has its part dropped with it, so a
    # part never says other than its record.  And the launches that kept samples indexed by
    # themselves: a run without samples answers which points pooled some from the index alone
    # (it read every launch's row, 10^5 at 3 launches of a large run)
    """
    ALTER TABLE points ADD COLUMN part TEXT;
    CREATE INDEX points_with_samples ON points(run_id, seq) WHERE launch IS NOT NULL AND samples IS NOT NULL;
    CREATE TRIGGER points_part_follows_record AFTER UPDATE OF record ON points
        WHEN NEW.part IS NOT NULL BEGIN UPDATE points SET part = NULL WHERE id = NEW.id; END;
    """,
]
SCHEMA_VERSION = len(MIGRATIONS)


def statements(script: str):
    """The statements of a migration, one at a time, so a migration runs inside the caller's
    transaction (sqlite3's executescript would commit it)."""
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            yield buf
            buf = ""
    if buf.strip():
        yield buf
