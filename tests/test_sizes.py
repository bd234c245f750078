from pathlib import Path

import pytest

from scope.errors import ScopeError
from scope.sizes import format_size, parse_sizes

pytestmark = pytest.mark.unit

VECTORS = Path(__file__).parent / "data" / "sizes_vectors.txt"


def vectors():
    for line in VECTORS.read_text().splitlines():
        if line.startswith("#") or "\t" not in line:
            continue
        spec, want = line.split("\t", 1)
        yield spec, want


@pytest.mark.parametrize("spec,want", list(vectors()))
def test_shared_vectors(spec, want):
    """The same vectors the engine's C parser is tested with."""
    if want == "error":
        with pytest.raises(ScopeError):
            parse_sizes(spec)
    else:
        assert parse_sizes(spec) == [int(x) for x in want.split(",")]


def test_vector_file_is_substantial():
    assert len(list(vectors())) >= 20


def test_error_names_the_bad_part():
    with pytest.raises(ScopeError) as e:
        parse_sizes("8,1KB")
    assert "1KB" in e.value.message and "ambiguous" in e.value.message


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
