"""What a killed scope leaves is removed by the next one.  A scope process killed outright
(SIGKILL, power) cannot clean up: its job dies with it (PR_SET_PDEATHSIG on the launcher, the
engine's watchdog), but the run's io directory and the MPI's shared-memory segments may stay.
The next writable open of the database closes such a run as interrupted (Store._close_stale);
this then removes the run's io directory (`runs.scratch`, written before launch) and every
shared-memory segment of this user's that no live process uses."""

from __future__ import annotations

from scope.run.iofiles import remove_run_dir
from scope.run.leftovers import clean_leftovers
from scope.store import Store


def reap(store: Store) -> list[str]:
    """What was removed for the runs this open closed as interrupted."""
    if not store.closed_stale:
        return []
    removed = []
    for rid in store.closed_stale:
        removed += [d for d in store.scratch_of(rid) if remove_run_dir(d)]
    return removed + clean_leftovers(None)
