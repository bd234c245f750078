import random

import pytest

from scope.analysis.hockney import fit_hockney

pytestmark = pytest.mark.unit


def test_exact_data_recovers_parameters():
    sizes = [0] + [2**k for k in range(0, 23)]
    t0, rinf = 5.0, 1000.0  # us, MB/s
    fit = fit_hockney(sizes, [t0 + n / rinf for n in sizes])
    assert fit.t0_us == pytest.approx(t0, rel=1e-9)
    assert fit.rinf_MBps == pytest.approx(rinf, rel=1e-9)
    assert fit.nhalf_bytes == pytest.approx(5000, rel=1e-9)
    assert fit.max_abs_residual < 1e-9
    assert fit.predict_us(5000) == pytest.approx(10.0)


def test_noisy_data_within_two_percent():
    rng = random.Random(7)
    sizes = [2**k for k in range(0, 23)]
    t0, rinf = 1.3, 9000.0
    times = [(t0 + n / rinf) * (1 + rng.gauss(0, 0.01)) for n in sizes]
    fit = fit_hockney(sizes, times)
    assert fit.t0_us == pytest.approx(t0, rel=0.02)
    assert fit.rinf_MBps == pytest.approx(rinf, rel=0.02)
    assert 0.005 < fit.max_abs_residual < 0.05


def test_relative_weighting_keeps_latency():
    """An unweighted fit would let the 4 MiB point dominate; t0 must still come out right."""
    sizes = [0, 8, 64, 512, 4096, 32768, 262144, 4 << 20]
    times = [2.0 + n / 5000 for n in sizes]
    times[-1] *= 1.05  # a bump at the largest size
    fit = fit_hockney(sizes, times)
    assert fit.t0_us == pytest.approx(2.0, rel=0.03)


@pytest.mark.parametrize("sizes,times", [([8, 8, 8], [1, 1, 1]), ([1, 2], [1, 2]), ([1, 2, 4], [3, 2, 1]), ([], [])])
def test_undetermined_fits_are_none(sizes, times):
    assert fit_hockney(sizes, times) is None
