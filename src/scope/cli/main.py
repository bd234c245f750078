"""The scope command."""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import signal
import sys
import threading

from scope.cli.parser import build_parser
from scope.envvars import TRUE
from scope.errors import ENVIRONMENT, SIGNALS_SEEN, USAGE, ScopeError, Terminated, interruption


def _on_signal(signum, frame):
    """Ctrl-C or an ending signal: its interruption raised, the signal seen as well
    (errors.SIGNALS_SEEN: where Python drops the exception, a launch still stops)."""
    SIGNALS_SEEN.append(signum)
    raise interruption(signum)


# Signals that end SCOPE as SIGTERM does: the run is closed, the job stopped, the exit code 128 + N.
ENDING = (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def main(argv: list[str] | None = None) -> int:
    for s in ENDING:
        # one its parent ignores stays ignored, as Python keeps an ignored SIGINT: `nohup scope
        # run` must outlive the terminal, and a shell's background job the Ctrl-\ of the foreground
        if signal.getsignal(s) is not signal.SIG_IGN:
            signal.signal(s, _on_signal)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # an ignored one stays ignored
        signal.signal(signal.SIGINT, _on_signal)
    try:
        parser = build_parser()
        args, _ = parser.parse_known_args(argv)
        if not args.cmd:
            parser.print_help()
            return USAGE
        module, name = args.handler.split(":")  # bound where the command is declared (cli/parser.py)
        commands = importlib.import_module(module)
        if args.cmd == "run":  # its options come from the engine built for this MPI
            try:
                table = commands.run_options(args)
            except ScopeError as unbuilt:
                if not {"-h", "--help"} & set(argv or sys.argv[1:]):
                    raise
                print(f"scope: the engine's options are left out of this help: {unbuilt.message}", file=sys.stderr)
                build_parser(run_help=True).parse_args(argv)  # prints the help without them and exits 0
                return 0
            args = build_parser(table, only_run=True).parse_args(argv)
            args.engine_table = table
        else:
            args = parser.parse_args(argv)
        code = getattr(commands, name)(args)
        sys.stdout.flush()  # a reader gone (| head -c1) is found here, in every command alike
        return code
    except ScopeError as e:
        print(e.line(), file=sys.stderr)
        return e.code
    except Terminated as t:
        print(f"scope: terminated ({t.name})", file=sys.stderr)
        return t.code
    except KeyboardInterrupt:
        print("scope: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (scope ... | head): as a shell's SIGPIPE, not success
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - so the interpreter's final flush is quiet
        return 128 + signal.SIGPIPE
    except OSError as e:  # the machine refused a read or write no check could foresee (a full disk, /dev/full)
        where = f" ({e.filename})" if e.filename else ""
        # the hint names the fault: a permission is not a full disk (issue 44)
        hint = (
            "check its permissions, or run as its owner"
            if isinstance(e, PermissionError)
            else ("free space, or choose another place")
        )
        print(f"scope: error: {e.strerror or e}{where} ({hint})", file=sys.stderr)
        return ENVIRONMENT
    except Exception as e:  # a bug: still one line, the traceback only on request
        if os.environ.get("SCOPE_DEBUG", "").strip().lower() in TRUE:  # SCOPE_DEBUG=0 is off
            raise
        print(
            f"scope: internal error: {type(e).__name__}: {e} (rerun with SCOPE_DEBUG=1 and report it)",
            file=sys.stderr,
        )
        return 70


def entry() -> None:
    """The `scope` command: main(), then the process ends without the interpreter's teardown.

    Freeing every module and object a command loaded is 20-30 ms that nothing reads (issue 52:
    a one-point run's engine job is 95), so once the command's output is flushed and the exit
    handlers have run (a worker pool's, a finaliser's), the process exits at once. A command
    commits what it stores before it returns, and a transaction left open is rolled back by the
    next open as by a closed connection. With another thread still running, the exit waits for
    it as usual."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # the reader went away after main's own flush: leave it to the normal exit
        raise SystemExit(code) from None
    if threading.active_count() > 1:
        raise SystemExit(code)
    atexit._run_exitfuncs()  # what the normal exit would run first
    os._exit(code)


if __name__ == "__main__":
    entry()
