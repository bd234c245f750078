"""The layer table (SCOPE §6.5.1, ParaStation2 Table 3): latency, r_inf and n_half per layer,
and what each layer adds over the one below it.

Layers, from the hardware up: the cache line (node.c2c), the user-level shared-memory channel
(shm.*), MPI within a node (p2p.* with ranks 0 and 1 on one node and MPI's shared memory
allowed), TCP sockets (net.tcp.*), and MPI over the network (p2p.* across nodes, or with
MPICH's local path disabled by MPIR_CVAR_NOLOCAL=1)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from scope.analysis.hockney import fit_hockney

ORDER = ["cache line", "shared-memory channel", "MPI within a node", "TCP sockets", "MPI over the network"]


@dataclass
class Layer:
    name: str
    run: int
    latency_us: float  # the latency test's median at its smallest size
    latency_size: int
    min_us: float  # SCOPE's own definition (§6.5.1): the minimum RTT/2 at the smallest size
    rinf_MBps: float | None  # Hockney fit of the streaming test (else of the latency test)
    nhalf_bytes: float | None
    source: str


def _mpi_layer(ctx: dict) -> str:
    place = {p["rank"]: p for p in ctx.get("placement", [])}
    env = ctx.get("env", {})
    same = 0 in place and 1 in place and place[0]["node"] == place[1]["node"]
    if same and env.get("MPIR_CVAR_NOLOCAL") != "1":
        return "MPI within a node"
    return "MPI over the network"


def _series(pts, test: str) -> list:
    return sorted((p for p in pts if p["test"] == test and p["median"]), key=lambda p: p["size"] or 0)


def layers_of(store, run_ids: list[int]) -> list[Layer]:
    found: dict[str, Layer] = {}
    for rid in run_ids:
        run = store.run(rid)
        if run["origin"] not in (None, "scope"):
            continue  # imported averages: no placement, no minimum, no layer
        ctx = json.loads(run["context"]) if run["context"] else {}
        pts = store.points(rid)

        mpi = _mpi_layer(ctx)
        table = [
            ("cache line", "node.c2c", None),
            ("shared-memory channel", "shm.pingpong", "shm.stream"),
            (mpi, "p2p.pingpong", "p2p.stream"),
            ("TCP sockets", "net.tcp.pingpong", "net.tcp.stream"),
        ]
        for name, lat_test, bw_test in table:
            lat = _series(pts, lat_test)
            if not lat or name in found:
                continue
            first = lat[0]
            bw = _series(pts, bw_test) if bw_test else []
            fit_pts = bw if len(bw) >= 3 else lat
            fit = fit_hockney([p["size"] for p in fit_pts], [p["median"] for p in fit_pts])
            src = lat_test + (f" + {bw_test}" if bw else "")
            found[name] = Layer(
                name,
                rid,
                first["median"],
                first["size"],
                first["min"],
                fit.rinf_MBps if fit else None,
                fit.nhalf_bytes if fit else None,
                src,
            )
    return [found[n] for n in ORDER if n in found]


def render(layers: list[Layer]) -> str:
    from scope.show import num, table
    from scope.sizes import format_size

    rows, below = [], None
    for ly in layers:
        adds = "-"
        if below is not None:
            # SCOPE's latency (§6.5.1) is the minimum RTT/2: each layer's floor.  Medians of
            # two layers that cross the same link differ by less than their noise.
            d = ly.min_us - below.min_us
            adds = f"{'+' if d >= 0 else ''}{num(d)} us"
            if d < 0:
                adds += " (faster than below!)"
        bw_vs = "-"
        if below is not None and ly.rinf_MBps and below.rinf_MBps:
            bw_vs = f"{ly.rinf_MBps / below.rinf_MBps:.2f}x"
        rows.append(
            [
                ly.name,
                f"{num(ly.latency_us)} @ {format_size(ly.latency_size)}",
                num(ly.min_us),
                num(ly.rinf_MBps) if ly.rinf_MBps else "-",
                format_size(max(ly.nhalf_bytes, 0)) if ly.nhalf_bytes is not None else "-",
                adds,
                bw_vs,
                f"run {ly.run}: {ly.source}",
            ]
        )
        below = ly
    return table(
        [
            "layer",
            "median us",
            "min us (SCOPE latency)",
            "r_inf MB/s",
            "n_half",
            "min adds over below",
            "r_inf vs below",
            "from",
        ],
        rows,
        "lrrrrrrl",
    )
