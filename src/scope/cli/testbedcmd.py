"""scope testbed up|down|status: test hosts in network namespaces with shaped links (root)."""

from __future__ import annotations

from scope.errors import ScopeError
from scope.run import testbed


def cmd_testbed(args) -> int:
    if args.action == "up":
        st = testbed.up(args.name, args.hosts, args.rate, args.burst, args.mtu, args.link_rate, args.throttle)
        print(testbed.status(st["name"]))
        print(f"run across it with: scope run --testbed {st['name']} -n {len(st['hosts'])}")
    elif args.action == "down":
        removed = testbed.down(args.name)
        print(
            f"removed {len(removed)} objects of testbed '{args.name}'" + (f": {', '.join(removed)}" if removed else "")
        )
    elif args.action == "status":
        print(testbed.status(args.name))
    else:
        raise ScopeError("scope testbed needs an action", "up, down or status")
    return 0
