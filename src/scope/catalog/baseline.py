"""What `scope run` measures when no test is named: the point-to-point baseline, in enough
separate launches that its intervals cover launch-to-launch variation."""

DEFAULT_TESTS = ["p2p.pingpong", "p2p.pingping", "p2p.stream", "p2p.bistream", "p2p.exchange"]
BASELINE_LAUNCHES = 3
MAX_LAUNCHES = 100
