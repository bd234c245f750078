"""Issue 72: the fast paths of a large run's bundle, each checked to give the answer of the
slow reading it stands in for, and guarded by what it does not do (counts, not time):
- a line's shape settled by counting colons (bundle_lines.shape) finds every key
  named twice and every nesting past the limit the exact reading finds;
- a stored record copied as its text only where it would be written the same (_plain);
- gzip through ISA-L where installed and zlib where not, each reading what the other wrote."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys

import msgspec
import pytest

from scope.store import bundle_lines, bundle_stream, gz
from scope.store.bundle_checks import DEPTH, repeated_key

LINE = {
    "row": "point",
    "record": {"type": "point", "test": "t", "params": {"size": 8}, "stats": {"median": 1.5, "p5": 1.0}},
    "launch": None,
    "windows": "AAAAAAAAAAA+/w==" * 50,  # base64: no key, bracket or colon in it
}


def _line(**record) -> bytes:
    return msgspec.json.encode(dict(LINE, record=dict(LINE["record"], **record)))


def _exact(text: bytes) -> str | None:
    """The slow reading: every object's keys by Python's parser, the nesting by a walk."""
    twice = repeated_key(text)
    if twice is not None:
        return f"an object names {twice!r} twice"

    def depth(v) -> int:
        if isinstance(v, dict):
            return 1 + max((depth(x) for x in v.values()), default=0)
        if isinstance(v, list):
            return 1 + max((depth(x) for x in v), default=0)
        return 0

    return f"nested past {DEPTH} levels" if depth(json.loads(text)) > DEPTH + 2 else None


def _deep(n: int):
    v: dict = {}
    for _ in range(n):
        v = {"a": v}
    return v


CASES = [
    _line(),
    _line().replace(b'"test":"t"', b'"test":"t","test":"u"'),  # nested key twice
    _line().replace(b'"median":1.5', b'"median":1.5,"median":9'),  # two levels down
    _line().replace(b'"launch":null', b'"launch":null,"launch":1'),  # the line's own
    _line(note="a:b:c").replace(b'"test":"t"', b'"test":"a:b:c:d","test":"u"'),  # colons in strings
    _line(note="\\u003a").replace(b'"test":"t"', b'"test":"t","test":"u"'),  # an escape: the slow path
    _line(note='[[{{"a":' * 40),  # brackets and a key in a string are text
    _line(extra=_deep(DEPTH - 1)),  # as deep as a record may be
    _line(extra=_deep(DEPTH)),  # one past
    _line().replace(b'"test":"t"', b'"test" : "t" , "test" :"u"'),  # JSON's spaces, a key twice
]


@pytest.mark.unit
@pytest.mark.parametrize("text", CASES, ids=range(len(CASES)))
def test_the_counted_shape_is_the_exact_one(text):
    assert bundle_lines.shape(text, msgspec.json.decode(text))[0] == _exact(text)


@pytest.mark.unit
def test_a_plain_line_is_settled_without_emptying_its_strings(monkeypatch):
    """The fast path: no string of a plain line emptied (the slow path's pass over all its
    bytes); a line with a backslash takes the slow one."""
    calls: list[int] = []
    real = bundle_lines._bare
    monkeypatch.setattr(bundle_lines, "_bare", lambda t: calls.append(len(t)) or real(t))
    record = msgspec.json.encode(LINE["record"])  # written once, kept as the stored record
    for _ in range(100):
        assert bundle_lines.shape(CASES[0], msgspec.json.decode(CASES[0])) == (None, record)
    assert calls == []
    bundle_lines.shape(CASES[5], msgspec.json.decode(CASES[5]))
    assert calls


@pytest.mark.unit
@pytest.mark.parametrize(
    "text, plain",
    [
        ('{"type":"point","a":[1,2]}', True),
        ('{"type": "point", "a": [1, 2]}', False),  # json.dumps's spacing: written again
        ('{"type":"point","a":NaN}', False),
        ('{"type":"point","a":-Infinity}', False),
        ('{"type":"point","note":"Nothing In"}', True),  # capitals alone are no NaN
        ('{"type":"point","note":"\\ud800"}', False),  # an escape: written again
        ('{"a:b":1,"c": 2}', True),  # the first key's colon decides the spacing
        ("[]", False),
    ],
)
def test_what_travels_as_its_text(text, plain):
    assert bundle_stream._plain(text) is plain


@pytest.mark.unit
def test_gzip_either_way_reads_the_other():
    text = b"".join(_line(index=i) + b"\n" for i in range(500))
    ours = gz.compress(text) + gz.compress(text)  # two members, as a large export writes
    assert gzip.decompress(ours) == text + text
    with gz.reader(io.BytesIO(gzip.compress(text, 9))) as f:
        assert f.read() == text


@pytest.mark.unit
def test_without_isal_the_standard_library_writes_and_reads_the_same_format():
    """A machine with no ISA-L wheel: zlib's gzip, the same text read back by either."""
    code = (
        "import sys, io, gzip; sys.modules['isal'] = None\n"
        "from scope.store import gz\n"
        "assert gz._zlib.__name__ == 'zlib'\n"
        't = b\'{"row":"point"}\\n\' * 1000\n'
        "d = gz.compress(t)\n"
        "assert gzip.decompress(d) == t and gz.reader(io.BytesIO(d)).read() == t\n"
        "try:\n"
        "    gz.reader(io.BytesIO(d[:len(d) // 2])).read()\n"
        "except gz.ERRORS:\n"
        "    print('cut refused')\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.strip() == "cut refused", p.stderr


@pytest.mark.unit
def test_a_cut_member_is_refused_as_an_error_of_gzip():
    d = gz.compress(b"x" * 100000)
    with pytest.raises(gz.ERRORS), gz.reader(io.BytesIO(d[: len(d) // 2])) as f:
        f.read()


@pytest.mark.unit
def test_an_imported_point_keeps_the_record_its_check_wrote(tmp_path, monkeypatch):
    """A stream's point line: its record written by msgspec once (checking its shape), that
    text stored; the store holds what writing the record again would give."""
    from scope.store import Store, bundle, encode
    from tests.conftest import replay

    src = tmp_path / "a.db"
    rid = replay("windows", src)
    data = bundle_stream.encoded(Store(src), rid)
    given: list[bool] = []
    real = bundle.point_row
    monkeypatch.setattr(bundle, "point_row", lambda *a: given.append(a[3] is not None) or real(*a))
    f = tmp_path / "a.bundle"
    f.write_bytes(data)
    store = Store(tmp_path / "b.db")
    bundle_stream.load_file(store, f)
    assert given and all(given)
    for text, part in store.db.execute("SELECT record, part FROM points"):
        rec = json.loads(text)
        assert text == msgspec.json.encode(rec).decode() and part == encode.part_text(rec)
