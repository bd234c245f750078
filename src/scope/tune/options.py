"""`scope tune`'s options, typed once where the command line enters (as run's RunOptions):
the rest of the tune layer reads this object, never the parser's namespace."""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class TuneOptions:
    collectives: list[str]
    ranks: int = 2
    sizes: str = "8-1M:x8"
    procs: str = "all"
    budget: str = "0.2"  # seconds per point, as the engine's plan reads it
    launches: int = 3  # per algorithm: the replicates
    timeout: float | None = None
    alpha: float = 0.05
    min_effect: float = 0.02
    algorithms: str | None = None  # comma-separated, or every one offered
    output: str | None = None  # MPICH's selection file
    report: str | None = None  # the HTML page
    apply: str | None = None  # a tuning file to measure against the default
    force: bool = False
    mpicc: str | None = None
    testbed: str | None = None
    ppn: str | None = None  # processes per host, comma-separated
    db: str | None = None

    @classmethod
    def of(cls, args) -> TuneOptions:
        """From the parser's namespace (cli/parser.py declares each, with its check)."""
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls)})
