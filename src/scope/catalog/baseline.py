"""What `scope run` measures when no test is named (the point-to-point baseline), and how many
separate launches a run makes unless told: enough that its intervals cover launch-to-launch
variation (a single launch's interval missed 7.6x swings between launches here)."""

DEFAULT_TESTS = ["p2p.pingpong", "p2p.pingping", "p2p.stream", "p2p.bistream", "p2p.exchange"]
DEFAULT_LAUNCHES = 3  # SCOPE_LAUNCHES in the environment, or --launches, say otherwise
# A simulated run's host clocks (issue 55): SEED:MAX_OFFSET_US:MAX_DRIFT_PPM, each host's clock
# off SimGrid's one clock by an offset and a drift drawn uniformly within the maxima: real
# crystals are off by milliseconds and drift by tens of ppm (docs/clock.md)
SIM_HOST_CLOCKS = "1:1000:20"
MAX_LAUNCHES = 100


def launches(text: str | int, least: int = 1) -> int:
    """A launch count, the one check of it (scope run, tune, compare --rerun, $SCOPE_LAUNCHES and
    the run API alike): ASCII digits, from `least` to MAX_LAUNCHES; ValueError saying the range."""
    t = str(text).strip()
    if not (t.isascii() and t.isdigit()) or not least <= int(t) <= MAX_LAUNCHES:
        raise ValueError(f"must be a whole number from {least} to {MAX_LAUNCHES}, got '{text}'")
    return int(t)
