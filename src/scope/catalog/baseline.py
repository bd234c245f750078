"""What `scope run` measures when no test is named (the point-to-point baseline), and how many
separate launches a run makes unless told: enough that its intervals cover launch-to-launch
variation (a single launch's interval missed 7.6x swings between launches here)."""

DEFAULT_TESTS = ["p2p.pingpong", "p2p.pingping", "p2p.stream", "p2p.bistream", "p2p.exchange"]
DEFAULT_LAUNCHES = 3  # SCOPE_LAUNCHES in the environment, or --launches, say otherwise
MAX_LAUNCHES = 100
