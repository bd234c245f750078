import pytest

from scope.sizes import format_size

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "n,text",
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1 KiB"),
        (1536, "1.5 KiB"),
        (4 << 20, "4 MiB"),
        (1 << 30, "1 GiB"),
        ((1 << 30) - 1000, "1024 MiB"),  # not "1.02e+03 MiB"
        (150 * (1 << 20) + 300, "150 MiB"),
    ],
)
def test_format_size(n, text):
    assert format_size(n) == text
