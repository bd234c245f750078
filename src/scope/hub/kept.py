"""What the hub draws once and keeps: pages and documents in memory while what they show is
unchanged (Pages), and a run's HTML report, drawn by `scope report` in a process of its own."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from scope.errors import ScopeError
from scope.hub.runs import INFLATED_LIMIT
from scope.store import Store
from scope.store.bundle_stream import load_data

REPORT_TIMEOUT_S = 600


class Pages:
    """Pages and documents kept while what they show is unchanged (the version a cheap query
    reads, hub/db.py list_version and cluster_version): the cluster list and a cluster's page
    are drawn once a push, not once a reader.  Bounded, the least recently used dropped."""

    def __init__(self, most: int = 512):  # the list and 250 clusters' pages and JSON: ~20 MB
        self.most, self.kept, self.lock = most, collections.OrderedDict(), threading.Lock()

    def get(self, key, make):
        with self.lock:
            if key in self.kept:
                self.kept.move_to_end(key)
                return self.kept[key]
        value = make()
        with self.lock:
            self.kept[key] = value
            while len(self.kept) > self.most:
                self.kept.popitem(last=False)
        return value


def draw_report(data: bytes, rid: int, cluster: str | None = None) -> bytes:
    """A stored run's HTML report, drawn as `scope report` draws it, in a process of its own (its
    figures' memory goes with it, and the hub's threads never fork).  The run is stored there
    under the hub's id, so the page says one run id throughout (issue 70: its header said run 43
    and its body run 1), and the title names the cluster."""
    with tempfile.TemporaryDirectory(prefix="scope-hub-report-") as d:
        store, out = Path(d) / "r.db", Path(d) / "report.html"
        scratch = Store(store)
        try:
            load_data(scratch, data, INFLATED_LIMIT, rid)
        finally:
            scratch.close()
        title = f"SCOPE hub: run {rid}" + (f" of cluster {cluster}" if cluster else "")
        argv = ["report", str(rid), "-o", str(out), "--title", title]
        p = subprocess.run(
            [sys.executable, "-m", "scope", *argv],
            env=dict(os.environ, SCOPE_DB=str(store)),
            capture_output=True,
            text=True,
            timeout=REPORT_TIMEOUT_S,
        )
        if p.returncode != 0:
            raise ScopeError(f"the report of run {rid} could not be drawn: {p.stderr.strip()[-300:]}", "")
        return out.read_bytes()
