"""The application level: NAS EP and FT verified as NPB verifies them (the official values), at
1, 2 and 4 processes, with their phases and NPB's rates."""

import pytest

from scope.store import Store
from tests.conftest import run_scope

# NPB's verification values (ep.f) and its class S output (the pairs in each annulus)
EP_S = {"sx": -3.247834652034740e3, "sy": -6.958407078382297e3, "pairs": 13176389}


@pytest.fixture(scope="module")
def ep(tmp_path_factory, engine):
    db = tmp_path_factory.mktemp("ep") / "r.db"
    p = run_scope("run", "-n", "4", "app.ep", "--procs", "1,2,4", "--budget", "0.3", "--quiet", db=db, timeout=600)
    assert p.returncode == 0, p.stderr
    return Store(db).load_run(1)


def test_ep_class_s_gives_npb_sums_and_pair_count_at_every_process_count(ep):
    assert sorted(p.procs for p in ep.points) == [1, 2, 4]
    assert not [e for e in ep.events if e.type in ("error", "skip")]
    for p in ep.points:
        assert p.record["validated"] == 2  # NPB's check before and after measuring
        assert p.extra["sx"] == pytest.approx(EP_S["sx"], rel=1e-8)
        assert p.extra["sy"] == pytest.approx(EP_S["sy"], rel=1e-8)
        assert p.extra["pairs"] == EP_S["pairs"]
        assert p.extra["nas_ops"] == 2**25  # NPB's Mop/s counts the 2^(M+1) numbers generated


def test_ep_spends_its_time_computing_and_reduces_once(ep):
    for p in ep.points:
        ph = p.record["phases"]
        assert len(ph["comp"]) == p.procs
        # one reduction of 12 doubles against ~10^8 operations: communication is noise next to compute
        assert max(ph["comm"]) < 0.05 * min(ph["comp"])
    one, two = (next(p for p in ep.points if p.procs == n) for n in (1, 2))
    # the batches split evenly: each of 2 ranks computes about half of what one rank does
    assert max(two.record["phases"]["comp"]) == pytest.approx(one.record["phases"]["comp"][0] / 2, rel=0.35)
