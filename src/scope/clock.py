"""SCOPE's global clock from Python (issue 57): the clock library (engine/clock/scope_clock.h,
installed by `scope build --clock-lib`) through ctypes, for mpi4py programs.

    from mpi4py import MPI
    from scope.clock import Clock

    with Clock(MPI.COMM_WORLD) as clk:      # collective: timer chosen, clocks synchronised
        clk.events_open("run1")             # each rank writes run1.RANK.jsonl
        clk.event("halo")
        t, bound = clk.global_ns()          # rank 0's clock, ns, and this reading's error bound

The library is found at $SCOPE_CLOCK_LIB, else in this Python environment's lib/ (where
`scope build --clock-lib` puts it).  Nothing here imports mpi4py: a communicator's handle is
read from the mpi4py module its caller already loaded."""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from pathlib import Path

SONAME = "libscopeclock.so.1"
HINT = "build it with 'scope build --clock-lib' (or set $SCOPE_CLOCK_LIB to the library's path)"


class ClockError(RuntimeError):
    """The library refused a call (its words) or could not be loaded (with the fix)."""


class _Options(ctypes.Structure):
    _fields_ = [
        ("timer", ctypes.c_char_p),
        ("method", ctypes.c_char_p),
        ("per_rank", ctypes.c_int),
        ("span_s", ctypes.c_double),
        ("warm_s", ctypes.c_double),
    ]


def library_path() -> Path:
    given = os.environ.get("SCOPE_CLOCK_LIB")
    return Path(given) if given else Path(sys.prefix) / "lib" / SONAME


@functools.lru_cache(maxsize=2)
def _load(comm_type) -> ctypes.CDLL:
    """The library, loaded and its signatures declared once a process (per MPI_Comm's C type)."""
    path = library_path()
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as e:
        raise ClockError(f"cannot load SCOPE's clock library {path}: {e}; {HINT}") from None
    p, d, i = ctypes.c_void_p, ctypes.c_double, ctypes.c_int
    signatures = {
        "scope_clock_init": (i, [comm_type, ctypes.POINTER(_Options), ctypes.POINTER(p)]),
        "scope_clock_sync": (i, [p]),
        "scope_clock_keep": (i, [p, d, d]),
        "scope_clock_local_ns": (d, [p]),
        "scope_clock_global_ns": (d, [p, ctypes.POINTER(d)]),
        "scope_clock_to_global_ns": (d, [p, d]),
        "scope_clock_bound_ns": (d, [p, d]),
        "scope_clock_timer": (ctypes.c_char_p, [p]),
        "scope_clock_sync_seconds": (d, [p]),
        "scope_clock_events_open": (i, [p, ctypes.c_char_p]),
        "scope_clock_event": (i, [p, ctypes.c_char_p]),
        "scope_clock_events_close": (i, [p]),
        "scope_clock_finalize": (i, [ctypes.POINTER(p)]),
        "scope_clock_version": (ctypes.c_char_p, []),
        "scope_clock_strerror": (ctypes.c_char_p, [i]),
    }
    for name, (res, args) in signatures.items():
        f = getattr(lib, name, None)
        if f is None:  # a library that is not SCOPE's (or an older one without this call)
            raise ClockError(f"{path} is not SCOPE's clock library (it has no {name}); {HINT}")
        f.restype, f.argtypes = res, args
    return lib


def _handle(comm):
    """The communicator's C handle as ctypes passes it (an int for MPICH, a pointer for Open MPI)."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is None or not isinstance(comm, mpi.Comm):
        raise ClockError("Clock needs an mpi4py communicator (from mpi4py import MPI; Clock(MPI.COMM_WORLD))")
    if comm == mpi.COMM_NULL:
        raise ClockError("Clock needs a communicator, not MPI.COMM_NULL")
    size = mpi._sizeof(mpi.Comm)
    kind = {4: ctypes.c_int, 8: ctypes.c_void_p}.get(size)
    if kind is None:
        raise ClockError(f"an MPI_Comm of {size} bytes is not one this binding passes")
    return kind, kind(mpi._handleof(comm))


class Clock:
    """One rank's global clock (collective to make and to close, as the C library's)."""

    def __init__(self, comm, timer=None, method=None, per_rank=False, span_s=0.0, warm_s=0.0):
        kind, handle = _handle(comm)
        self._lib = _load(kind)
        self._c = ctypes.c_void_p()
        opts = _Options(timer and timer.encode(), method and method.encode(), int(per_rank), span_s, warm_s)
        self._check(self._lib.scope_clock_init(handle, ctypes.byref(opts), ctypes.byref(self._c)))

    @property
    def _live(self) -> ctypes.c_void_p:
        """The C clock, or ClockError once closed (the library's NULL clock reads NaN; a Python
        caller is told instead)."""
        if not getattr(self, "_c", None):
            raise ClockError("the clock is closed (close() or its with block ended): make another")
        return self._c

    def _check(self, code: int) -> int:
        """A call's return: 0, or an error code (negated by keep) raised with the library's words."""
        if code != 0:
            raise ClockError(self._lib.scope_clock_strerror(code).decode())
        return code

    def local_ns(self) -> float:
        return self._lib.scope_clock_local_ns(self._live)

    def global_ns(self) -> tuple[float, float]:
        """This rank's time on rank 0's clock (ns) and the bound on its error (ns)."""
        bound = ctypes.c_double()
        t = self._lib.scope_clock_global_ns(self._live, ctypes.byref(bound))
        return t, bound.value

    def sync(self) -> None:
        self._check(self._lib.scope_clock_sync(self._live))

    def keep(self, bound_ns: float, ahead_s: float) -> bool:
        """Collective: synchronise again only where the drift model needs it; True when it did."""
        done = self._lib.scope_clock_keep(self._live, bound_ns, ahead_s)
        if done < 0:
            self._check(done)
        return done == 1

    @property
    def timer(self) -> str:
        return self._lib.scope_clock_timer(self._live).decode()

    @property
    def sync_seconds(self) -> float:
        return self._lib.scope_clock_sync_seconds(self._live)

    def events_open(self, prefix: str) -> None:
        self._check(self._lib.scope_clock_events_open(self._live, os.fsencode(prefix)))

    def event(self, name: str) -> None:
        """Stamps an event: a name of 1 to 64 bytes of UTF-8, no control character (the library's rule)."""
        if "\0" in name:  # C would end the name there: refused, not cut
            raise ClockError("an event name holds a NUL character")
        self._check(self._lib.scope_clock_event(self._live, name.encode("utf-8", "surrogatepass")))

    def events_close(self) -> None:
        self._check(self._lib.scope_clock_events_close(self._live))

    def close(self) -> None:
        """Collective: closes the events and frees the clock."""
        if self._c:
            self._check(self._lib.scope_clock_finalize(ctypes.byref(self._c)))

    def __enter__(self) -> Clock:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @staticmethod
    def version() -> str:
        return _load(ctypes.c_int).scope_clock_version().decode()
