"""gzip as bundles travel: ISA-L's deflate (`isal`, Intel's storage acceleration library, a
dependency of scope), the standard library's zlib where it cannot be imported.  Both write and
read standard gzip (RFC 1952), so any reader takes what either writes; ISA-L compresses a large
run's text about 7x and inflates it about 2x as fast as zlib (bench/views_cost.py), which on a
10^5-point run was most of an export and of an import.

A bundle's bytes are the same for the same run on the same installation (mtime 0, no name);
the hub's digest is that of the text, not of these bytes, so two machines agree on a run."""

from __future__ import annotations

import gzip
import io
import zlib

try:
    from isal import igzip as _gzip
    from isal import isal_zlib as _zlib
except ImportError:  # an installation without it: the standard library's (same format, slower)
    _gzip, _zlib = gzip, zlib

# What a reader of damaged or cut-short gzip data raises (ISA-L's error is not an OSError).
ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, zlib.error, _zlib.error)

# ISA-L's levels are 0-3 and zlib's 0-9; 1 is each one's fast level, within 20 % of the best
# size on a run's text (per-rank windows as base64 are most of it and pack poorly at any level)
FAST = 1


def compress(data: bytes, level: int = FAST) -> bytes:
    """`data` as one gzip member (mtime 0, no name): the same data gives the same bytes; a large
    export writes one each 8 MiB of its text, a document or an upload one in all."""
    z = _zlib.compressobj(level, _zlib.DEFLATED, 31)
    return z.compress(data) + z.flush()


def reader(raw) -> io.BufferedIOBase:
    """The decompressed text of the gzip'd binary file `raw`, every member of it, read as a file."""
    return _gzip.GzipFile(fileobj=raw, mode="rb")
