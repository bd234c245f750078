"""scope push: stored runs to a results hub (and `run --push`, `submit --push`).  It needs nothing
beyond what scope installs; the hub itself is cli/hubservecmd.py."""

from __future__ import annotations

from scope.cli.common import open_store, push_target
from scope.errors import USAGE, ScopeError
from scope.hub.client import push
from scope.model.run import kind_of
from scope.store import bundle_stream
from scope.store.store import sim_of
from scope.views.fmt import safe


def push_runs(store, ids: list[int], url: str, token: str, cluster: str | None, timeout: float = 120,
              samples: bool = True) -> None:  # fmt: skip
    for rid in ids:
        data = bundle_stream.encoded(store, rid, samples)
        answer = push(url, token, data, cluster, timeout)
        said = "stored" if answer.get("stored") else "already there: stored once"
        row = store.run(rid)
        if kind_of(row["origin"], sim_of(row["context"])).startswith("simulated"):
            said += "; simulated (SimGrid): marked so on the hub, a series of its own"
        print(
            f"run {rid} pushed to {url} as run {safe(answer.get('id'))} of cluster {safe(answer.get('cluster'))} "
            f"({said}; {len(data) / 1e6:.2f} MB): {safe(answer.get('url'))}"
        )


def cmd_push(args) -> int:
    url, token = push_target(args, args.hub)
    store = open_store(args, create=False)
    ids = list(dict.fromkeys(store.resolve_run(r) for r in args.runs))  # every name checked before a push
    for rid in ids:
        status = store.run(rid)["status"]
        if status == "running":
            raise ScopeError(f"run {rid} is still running", "push it when it has ended", USAGE)
    push_runs(store, ids, url, token, args.cluster, args.timeout, args.keep_samples)
    return 0
