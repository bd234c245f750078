"""Errors the user can act on: one line, a hint naming the fix, a distinct exit code."""

from __future__ import annotations

import signal

# Exit codes: 1 data check failed, 2 bad input, 3 environment (MPI, database, build),
# 4 the run stopped early, 5 compare: the machine changed between the runs, 130 interrupted.
USAGE = 2
ENVIRONMENT = 3
RUN_FAILED = 4
MACHINE_MOVED = 5  # compare: the runs' canaries differ, so a difference cannot be laid on the configuration
INTERRUPTED = 130
TERMINATED = 143  # 128 + SIGTERM, what a scheduler sends at the time limit


# Every signal the CLI's handlers took (cli/main.py), in order: a KeyboardInterrupt raised where
# Python only reports it (the hooks a fork runs, as subprocess.Popen starts a launch, print and
# drop it) is still seen here, and the launch it fell in stops (run/launcher.py).
SIGNALS_SEEN: list[int] = []


class Terminated(KeyboardInterrupt):
    """SIGTERM (or SIGHUP, SIGQUIT: a closed terminal, a quit key), raised where the CLI is, so
    a run is closed as it is on Ctrl-C; the exit code is 128 + the signal's number."""

    def __init__(self, signum: int = 15):
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def code(self) -> int:
        return 128 + self.signum


class ScopeError(Exception):
    def __init__(self, message: str, hint: str | None = None, code: int = USAGE):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.code = code

    def line(self) -> str:
        return f"scope: error: {self.message}" + (f" ({self.hint})" if self.hint else "")


def interruption(signum: int) -> KeyboardInterrupt:
    """What a signal the CLI takes raises: Python's KeyboardInterrupt for Ctrl-C, Terminated
    for an ending signal (the exit code 128 + its number)."""
    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)
