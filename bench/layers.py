"""The layers below MPI against established tools, on one testbed path, alternated in rounds:

  TCP latency    SCOPE net.tcp.pingpong (64 B, median RTT/2) vs sockperf ping-pong --tcp
                 (64 B, p50 of RTT/2), receive modes matched: recv=block vs sockperf's default,
                 recv=poll vs sockperf --nonblocked.           target: SCOPE / sockperf <= 1.05
  TCP bandwidth  SCOPE net.tcp.stream (128 KiB messages, iperf3's default write length, window
                 16, median) vs iperf3 (one stream, 3 s), on an unshaped and on a 1 Gbit/s-shaped
                 link.                                        target: SCOPE / iperf3 >= 0.95
                 (With 1 MiB messages SCOPE receives a window into 16 distinct 1 MiB slots, a
                 16 MiB footprint past the L2, while iperf3 reuses one 128 KiB buffer: SCOPE is
                 then memory-bound and slower on an unshaped veth.  Same size, same footprint.)
  shm floor      shm.pingpong one-way latency vs node.c2c in the same engine run.
                                                              target: shm / c2c <= 3

Needs root (the testbed), sockperf and iperf3 (Debian packages).

    .venv/bin/python bench/layers.py [--rounds 5]"""

import argparse
import json
import re
import subprocess
import time

from common import median, mpirun, toolchain, write

from scope.run import testbed

NAME = "scbench"


def ns(i):
    return f"{NAME}-h{i}"


def engine_across(tc, engine, args):
    argv = [str(tc.mpiexec), *testbed.launch_segments(testbed.load(NAME), 2, str(engine), [str(a) for a in args])]
    env = dict(__import__("os").environ, **testbed.testbed_env(testbed.load(NAME), 2))
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600, check=True)
    return [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]


def point(recs, test, size):
    return next(r for r in recs if r["type"] == "point" and r["test"] == test and r["params"]["size"] == size)


def sockperf(nonblocked: bool) -> float:
    srv = subprocess.Popen(
        ["ip", "netns", "exec", ns(1), "sockperf", "server", "--tcp", "-i", "198.18.0.2", "-p", "11111"]
        + (["--nonblocked"] if nonblocked else []),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)
        out = subprocess.run(
            [
                "ip",
                "netns",
                "exec",
                ns(0),
                "sockperf",
                "ping-pong",
                "--tcp",
                "-i",
                "198.18.0.2",
                "-p",
                "11111",
                "-m",
                "64",
                "-t",
                "2",
            ]
            + (["--nonblocked"] if nonblocked else []),
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    finally:
        srv.kill()
        srv.wait()
    return float(re.search(r"percentile 50\.000 =\s+([\d.]+)", out).group(1))


def iperf3() -> float:
    srv = subprocess.Popen(
        ["ip", "netns", "exec", ns(1), "iperf3", "-s", "-1", "-B", "198.18.0.2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        time.sleep(0.5)
        out = subprocess.run(
            ["ip", "netns", "exec", ns(0), "iperf3", "-c", "198.18.0.2", "-t", "3", "-J"],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    finally:
        srv.wait(timeout=10)
    return json.loads(out)["end"]["sum_received"]["bits_per_second"] / 8 / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    tc, engine = toolchain()
    rows = {
        k: []
        for k in (
            "scope_block",
            "sock_block",
            "scope_poll",
            "sock_poll",
            "scope_bw",
            "iperf_bw",
            "scope_bw_1g",
            "iperf_bw_1g",
            "shm",
            "c2c",
        )
    }
    testbed.down(NAME) if testbed.state_path(NAME).exists() else None
    try:
        for shaped in (False, True):
            testbed.up(NAME, 2, "1gbit" if shaped else None)
            for r in range(a.rounds):
                order = (0, 1) if r % 2 == 0 else (1, 0)
                for who in order:
                    if who == 0:
                        if not shaped:
                            recs = engine_across(
                                tc,
                                engine,
                                [
                                    "--tests",
                                    "net.tcp.pingpong",
                                    "--sizes",
                                    "64",
                                    "--param",
                                    "recv=block,poll",
                                    "--no-samples",
                                    "--budget",
                                    "2",
                                ],
                            )
                            pts = [x for x in recs if x["type"] == "point"]
                            rows["scope_block"].append(
                                next(p for p in pts if p["params"]["recv"] == "block")["stats"]["median"]
                            )
                            rows["scope_poll"].append(
                                next(p for p in pts if p["params"]["recv"] == "poll")["stats"]["median"]
                            )
                        recs = engine_across(
                            tc,
                            engine,
                            [
                                "--tests",
                                "net.tcp.stream",
                                "--sizes",
                                "128K",
                                "--param",
                                "window=16",
                                "--param",
                                "recv=block",
                                "--no-samples",
                                "--budget",
                                "3",
                            ],
                        )
                        rows["scope_bw_1g" if shaped else "scope_bw"].append(
                            point(recs, "net.tcp.stream", 128 << 10)["bandwidth_MBps"]["median"]
                        )
                    else:
                        if not shaped:
                            rows["sock_block"].append(sockperf(False))
                            rows["sock_poll"].append(sockperf(True))
                        rows["iperf_bw_1g" if shaped else "iperf_bw"].append(iperf3())
            testbed.down(NAME)
        for _ in range(a.rounds):
            recs, _ = mpirun(tc, 2, [engine, "--tests", "node.c2c,shm.pingpong", "--sizes", "0", "--no-samples"])
            rows["c2c"].append(
                next(x for x in recs if x["type"] == "point" and x["test"] == "node.c2c")["stats"]["median"]
            )
            rows["shm"].append(point(recs, "shm.pingpong", 0)["stats"]["median"])
    finally:
        if testbed.state_path(NAME).exists():
            testbed.down(NAME)
    m = {k: median(v) for k, v in rows.items()}
    lat_b, lat_p = m["scope_block"] / m["sock_block"], m["scope_poll"] / m["sock_poll"]
    bw, bw1 = m["scope_bw"] / m["iperf_bw"], m["scope_bw_1g"] / m["iperf_bw_1g"]
    floor = m["shm"] / m["c2c"]
    truth = testbed.payload_rate_MBps(1e9, 1500)

    def ok(v, good):
        return "met" if good else "NOT met"

    lines = [
        f"{a.rounds} alternating rounds per row; 2-host testbed (namespaces, veth, bridge); medians over rounds",
        "",
        "| what | SCOPE | reference | ratio | target |",
        "|---|---:|---:|---:|---|",
        f"| TCP latency 64 B, blocking recv (µs, RTT/2) | {m['scope_block']:.2f} | sockperf {m['sock_block']:.2f} | "
        f"{lat_b:.3f} | <= 1.05 {ok(lat_b, lat_b <= 1.05)} |",
        f"| TCP latency 64 B, polling recv (µs, RTT/2) | {m['scope_poll']:.2f} | sockperf --nonblocked "
        f"{m['sock_poll']:.2f} | {lat_p:.3f} | <= 1.05 {ok(lat_p, lat_p <= 1.05)} |",
        f"| TCP bandwidth 128 KiB, blocking recv, unshaped veth (MB/s) | {m['scope_bw']:,.0f} | "
        f"iperf3 {m['iperf_bw']:,.0f} | {bw:.3f} | >= 0.95 {ok(bw, bw >= 0.95)} |",
        f"| TCP bandwidth 128 KiB, blocking recv, 1 Gbit/s tbf (MB/s; payload truth {truth:.2f}) | "
        f"{m['scope_bw_1g']:.2f} | iperf3 {m['iperf_bw_1g']:.2f} | {bw1:.3f} | >= 0.95 {ok(bw1, bw1 >= 0.95)} |",
        f"| shared-memory ring one-way vs cache-line floor (µs) | {m['shm']:.3f} | c2c {m['c2c']:.3f} | {floor:.2f} | "
        f"<= 3 {ok(floor, floor <= 3)} |",
    ]
    write("layers", "Layers below MPI against sockperf, iperf3 and the cache-line floor", lines, rows)


if __name__ == "__main__":
    main()
