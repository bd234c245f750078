"""scope sim platform: a SimGrid platform file for a described cluster, so a user need not write
SimGrid's XML by hand; `scope run --sim FILE` then runs on it (run/sim.py)."""

from __future__ import annotations

import sys

from scope.errors import ENVIRONMENT, USAGE, ScopeError
from scope.run.checks import writable_output
from scope.run.sim import platform_xml


def cmd_sim(args) -> int:
    if args.action != "platform":
        raise ScopeError("scope sim needs an action", "scope sim platform --hosts N -o FILE", USAGE)
    hosts = [h for h, _ in args.slow]
    twice = sorted({h for h in hosts if hosts.count(h) > 1})
    if twice:
        raise ScopeError(f"--slow names host {twice[0]} more than once", "give each host one --slow HOST:SHARE", USAGE)
    text = platform_xml(args.hosts, args.cores, args.rate, args.latency, args.topology, slow=dict(args.slow))
    out = writable_output(args.output)
    try:
        out.write_text(text)
    except OSError as e:
        raise ScopeError(f"cannot write {out}: {e.strerror}", "choose a writable -o", ENVIRONMENT) from None
    print(
        f"wrote {out}: {args.hosts} hosts x {args.cores} cores, {args.topology}, links {args.rate} and {args.latency}"
        + "".join(f", host {h}'s link at {s:g} of the rate" for h, s in args.slow)
        + ";"
        f" run on it with: scope run --sim {out} -n {args.hosts}",
        file=sys.stderr,
    )
    return 0
