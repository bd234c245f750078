"""What the front end does with each record of a launch, whether the records come from a live
engine (runner.py) or from a stream saved with `scope run --save-stream` and imported again
(`replay`): one path, so a replayed run is stored exactly as the measured one was.

A saved stream is a directory: `tests.jsonl` (the engine's descriptors of the tests the run
used) and `launch-K.jsonl` per launch, each line a record as the front end stored it (the
context carries what the runner added: testbed, module, pattern, I/O directory, Slurm)."""

from __future__ import annotations

import gzip
import json
import re
import time
from pathlib import Path
from typing import Callable

import msgspec

from scope import secrets
from scope.analysis.kernels import PHASED_LEVELS
from scope.errors import USAGE, ScopeError
from scope.records import problem
from scope.records.order import LaunchOrder
from scope.run.combine import combine_launches
from scope.run.freeze import freeze_predictions
from scope.run.slurm import allocation, world_mismatch
from scope.run.stream import parse_record
from scope.store import RECORD_SCHEMA, Store
from scope.store.importers import importable

COMMIT_EVERY_S = 0.5
LAUNCH_FILE = re.compile(r"launch-(\d+)\.jsonl(\.gz)?$")  # gzip-compressed launches read as well


class Recorder:
    """Stores one run's records as they arrive, launch by launch."""

    def __init__(
        self,
        store: Store,
        run_id: int,
        ranks: int,
        launcher: str = "mpiexec",
        annotate: Callable[[dict], dict] | None = None,
        save_dir: Path | None = None,
    ):
        self.store, self.run_id, self.ranks, self.launcher = store, run_id, ranks, launcher
        self.annotate = annotate  # what the context gains from the runner (testbed, module, ...)
        self.launch = 1
        self.points = 0  # points of the first launch: one per point of the run
        self.errors: list[dict] = []
        self.skips: list[dict] = []
        self.faults: list[dict] = []
        self.schema_error: list[str] = []
        self.earlier: dict[int, list[tuple[float, float]]] = {}  # index -> (median, CI) per launch so far
        self._seen: set[str] = set()  # events already stored: a warning each launch repeats is kept once
        self._last_commit = time.monotonic()
        self.save_dir = save_dir  # --save-stream: each launch's records go to save_dir/launch-K.jsonl
        self._saved = None  # the open launch file

    def start_launch(self, k: int) -> None:
        self.launch = k
        if self.save_dir is not None:
            self.close_saved()
            self._saved = open(self.save_dir / f"launch-{k}.jsonl", "x")  # never over a stream (save_stream)

    def close_saved(self) -> None:
        if self._saved is not None:
            self._saved.close()
            self._saved = None

    def __call__(self, rec: dict) -> None:
        wrong = problem(rec)  # checked against scope/records/ (its msgspec types) before anything is stored
        if wrong:
            if len(self.schema_error) < 3:
                self.schema_error.append(f"a record that does not match the schema: {wrong}")
            return
        kind, k = rec["type"], self.launch
        if kind == "context":
            rec = self._context(rec)
            if k == 1:
                self.store.set_context(self.run_id, rec, commit=False)
                self._commit_due()
        elif kind == "point":
            self.store.add_point(self.run_id, rec, commit=False, launch=k)
            self._commit_due()
            if k == 1:
                self.points += 1
            st = rec.get("stats") or {}
            if st.get("median") and st.get("ci_rel") is not None and "index" in rec:  # else it tells nothing
                self.earlier.setdefault(int(rec["index"]), []).append((float(st["median"]), float(st["ci_rel"])))
        elif kind == "pairs":  # a step of every pair: committed with the point that follows
            self.store.add_pairs(self.run_id, rec, launch=k)
        elif kind == "fault":  # the machine failed the run: kept at once, and the run is closed on it
            self.faults.append(rec)
            self.store.add_event(self.run_id, dict(rec, launch=k))
        elif kind in ("clock", "canary"):  # every synchronisation and probe of every launch counts
            self.store.add_event(self.run_id, dict(rec, launch=k), commit=False)
            self._commit_due()
        elif kind in ("skip", "error", "warning"):
            key = json.dumps(rec, sort_keys=True)
            if key not in self._seen:
                self._seen.add(key)
                self.store.add_event(self.run_id, dict(rec, launch=k) if kind == "error" else rec, commit=False)
                self._commit_due()
                if kind == "error":
                    self.errors.append(rec)
                elif kind == "skip":
                    self.skips.append(rec)
        if self._saved is not None:  # under secrets.py's rule, as the store keeps what it stores
            kept = secrets.record(rec)
            self._saved.write(msgspec.json.encode(kept).decode() + "\n")
            self._saved.flush()

    def _commit_due(self) -> None:
        """Commit what is stored when the last commit is COMMIT_EVERY_S old: a commit is an
        fsync (4-5 ms here, tens of ms on a cluster's network home), and the run's records come
        in bursts; after COMMIT_EVERY_S without a record the runner commits what is pending
        (run_records' on_quiet), and at each launch's end. So a record is committed about
        COMMIT_EVERY_S late at most, and what the engine measured is never lost with the engine."""
        if time.monotonic() - self._last_commit >= COMMIT_EVERY_S:
            self.store.commit()
            self._last_commit = time.monotonic()

    def _context(self, rec: dict) -> dict:
        if rec.get("ranks") != self.ranks:  # e.g. N singletons: the launcher's PMI is not the MPI's
            raise world_mismatch(rec.get("ranks"), self.ranks, self.launcher)
        if self.launcher == "srun":
            rec = dict(rec, slurm=allocation(rec.get("env") or {}))
        if int(rec.get("schema", 0)) > RECORD_SCHEMA:
            self.schema_error.append(f"engine records have schema {rec.get('schema')}, newer than this front end")
        return self.annotate(rec) if self.annotate else rec


def ended(errors: list[dict]) -> tuple[str, str | None]:
    """How a run that ran to its end is closed: `complete`, or `errors` when some point failed
    its check (its data, or NPB's verification), with the first failure as the reason: such a
    run is not listed as complete, and no later figure takes it as a reference."""
    if not errors:
        return "complete", None
    first = errors[0]
    return "errors", f"{len(errors)} point(s) failed their check; first {first.get('test')}: {first.get('message')}"


def free_stream_dir(directory: str | Path) -> Path:
    """The --save-stream folder, refused when it already holds a stream: one is never
    overwritten (issue 58: a run that failed at launch left an earlier 149 KB launch-1.jsonl
    empty, a run that succeeded replaced it without a word)."""
    d = Path(directory)
    held = [p.name for p in sorted(d.glob("*")) if p.name == "tests.jsonl" or LAUNCH_FILE.search(p.name)]
    if d.is_dir() and held:
        raise ScopeError(
            f"--save-stream {d} already holds a saved stream ({', '.join(held[:3])}{', ...' if len(held) > 3 else ''})",
            "name a new folder, or import that stream first and remove it",
            USAGE,
        )
    if d.exists() and not d.is_dir():
        raise ScopeError(f"--save-stream {d} is not a folder", "name a folder (it is made if missing)", USAGE)
    return d


def save_stream(directory: str | Path, registry: list[dict]) -> Path:
    """Prepare a --save-stream directory before anything is launched (refused when it cannot be written)."""
    d = free_stream_dir(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
        with open(d / "tests.jsonl", "x") as f:
            for t in registry:
                f.write(json.dumps(t) + "\n")
    except FileExistsError:  # another run took the folder since the look above
        raise ScopeError(f"--save-stream {d} already holds a saved stream", "name a new folder", USAGE) from None
    except OSError as e:
        raise ScopeError(f"cannot write the stream to {d}: {e.strerror}", "name a writable directory", USAGE) from None
    return d


def replay(store: Store, directory: str | Path, label: str | None = None) -> tuple[int, int]:
    """A saved stream stored as a run, through the same Recorder the live run used: (run id, points)."""
    d = Path(directory)
    launches = sorted((int(m.group(1)), p) for p in d.glob("launch-*") if (m := LAUNCH_FILE.search(p.name)))
    numbered = [k for k, _ in launches] == list(range(1, len(launches) + 1))
    if not (d / "tests.jsonl").is_file() or not launches or not numbered:
        raise ScopeError(
            f"{d} is not a saved stream (tests.jsonl and launch-1.jsonl, launch-2.jsonl, ...)",
            "save one with 'scope run --save-stream DIR'",
            USAGE,
        )
    registry = _records(d / "tests.jsonl")
    per_launch = [_records(p) for _, p in launches]
    ctx = next((r for r in per_launch[0] if r["type"] == "context"), None)
    if ctx is None:
        raise ScopeError(f"{launches[0][1]} has no context record", "save the stream again", USAGE)
    run_id = store.begin_run(
        ["scope", "import", str(d.resolve())], "import", int(ctx["ranks"]), label, len(launches), registry
    )
    rec = Recorder(store, run_id, int(ctx["ranks"]))
    all_ended = True
    for k, records in enumerate(per_launch, 1):
        rec.start_launch(k)
        for r in records:
            rec(r)
        all_ended &= any(r["type"] == "end" for r in records)
    store.commit()
    combine_launches(store, run_id, len(launches), commit=False)  # committed with the run's end
    why = rec.schema_error[0] if rec.schema_error else None if all_ended else "a saved launch has no end"
    store.finish_run(run_id, *(("incomplete", why) if why else ended(rec.errors)))
    if not why and any(t.get("level") in PHASED_LEVELS for t in registry):
        freeze_predictions(store, run_id)  # as a measured run's are when it is stored
    return run_id, rec.points


def _records(path: Path) -> list[dict]:
    """A saved launch's records, as strictly as a live run's (issue 44): the file is a regular
    file of bounded size (a FIFO waited for ever, /dev/zero filled the memory), gzip where it
    says so; every line is a whole record of its declared type, with its numbers in range; no
    point twice.  The first that is not says where, and nothing is stored."""
    importable(path, STREAM_HINT)
    opener = gzip.open if path.suffix == ".gz" else open
    out: list[dict] = []
    order = LaunchOrder()  # what the records must be together: no point twice, pairs that fit
    n = 0
    try:
        with opener(path, "rt", errors="replace") as f:
            for n, line in enumerate(f, 1):
                text = line.strip()
                if not text:
                    continue
                rec = parse_record(text)
                wrong = "not a whole record (cut short, or not JSON)" if rec is None else problem(rec) or order(rec)
                if wrong:
                    raise ScopeError(f"{path}, line {n}: {wrong}; nothing was imported", STREAM_HINT, USAGE)
                out.append(rec)
    except (OSError, EOFError, UnicodeError) as e:  # gzip.BadGzipFile is an OSError
        raise ScopeError(f"cannot read {path}: {e}", STREAM_HINT, USAGE) from None
    wrong = order.finish()
    if wrong:
        raise ScopeError(f"{path}, line {n}: {wrong}; nothing was imported", STREAM_HINT, USAGE)
    return out


STREAM_HINT = "import the directory 'scope run --save-stream' wrote, as it wrote it"
