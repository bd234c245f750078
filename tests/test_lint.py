"""`make lint` can fail (issue 41): each of its five checks is shown failing on a planted case in a
copy of the tree, and passing on the same copy without it.  An unformatted C file (clang-format),
a C warning (-Werror), a sanitizer finding (AddressSanitizer on the unit tests), code that needs
a newer Python than pyproject.toml promises (vermin), a dead function (vulture).  `make lint`
itself runs every check over the whole tree in CI; here the C builds are the MPI-free unit tests,
so each case compiles in seconds.  The two that compile (the strict build, the sanitised unit
tests) are in the `build` tier (`make test-all`, which `.ci/run` runs)."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".venv" / "bin"


def run(argv, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.fixture
def engine(tmp_path):
    """A copy of engine/ beside the test vectors its unit tests read."""
    shutil.copytree(ROOT / "engine", tmp_path / "engine", ignore=shutil.ignore_patterns("build"))
    shutil.copytree(ROOT / "tests" / "data", tmp_path / "tests" / "data")
    return tmp_path / "engine"


def plant(path: Path, text: str, after: str) -> str:
    """Insert `text` after the first line matching `after`; returns the file as it was."""
    was = path.read_text()
    lines = was.splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if re.search(after, ln)) + 1
    path.write_text("".join(lines[:at] + [text] + lines[at:]))
    return was


def make(engine: Path, *targets: str) -> subprocess.CompletedProcess:
    return run(["make", "-s", "-C", engine, f"BUILD={engine / 'b'}", f"MPICC={BIN / 'mpicc'}", *targets])


@pytest.mark.system
@pytest.mark.skipif(not shutil.which("clang-format"), reason="clang-format is not installed (.ci/run installs it)")
def test_an_unformatted_c_file_fails_the_format_check(engine):
    was = plant(engine / "core" / "stats.c", "static  int   planted_badly = 1 ;\n", r"^#include")
    bad = make(engine, "format-check")
    assert bad.returncode != 0 and "stats.c" in bad.stderr + bad.stdout
    (engine / "core" / "stats.c").write_text(was)
    assert make(engine, "format-check").returncode == 0


@pytest.mark.build
def test_a_c_warning_fails_the_strict_build(engine):
    core = f"{engine / 'b'}/unit-core"
    was = plant(engine / "core" / "stats.c", "static int planted_unused(void) { return 1; }\n", r"^#include")
    bad = make(engine, "STRICT=-Werror", core)
    assert bad.returncode != 0 and "planted_unused" in bad.stderr
    (engine / "core" / "stats.c").write_text(was)
    assert make(engine, "STRICT=-Werror", core).returncode == 0


@pytest.mark.build
def test_a_sanitizer_finding_fails_the_sanitised_unit_tests(engine):
    test = engine / "unit" / "test_core.c"
    was = plant(test, "  { volatile char *p = malloc(4); p[4] = 1; free((void *)p); } /* planted */\n",
                r"^int main\(")  # fmt: skip
    bad = make(engine, "sanitize-core")
    # UBSan's object-size check or ASan's heap-buffer-overflow, whichever sees the write first
    assert bad.returncode != 0 and re.search(r"runtime error: store|heap-buffer-overflow", bad.stderr), bad.stderr
    test.write_text(was)
    ok = make(engine, "sanitize-core")
    assert ok.returncode == 0, ok.stderr[-2000:]


def vermin(src: Path) -> subprocess.CompletedProcess:
    promised = re.search(r'requires-python = ">=([0-9.]+)"', (ROOT / "pyproject.toml").read_text()).group(1)
    return run([BIN / "vermin", "-q", "--no-tips", "--violations", f"-t={promised}-", src])


def vulture(src: Path) -> list[str]:
    out = run([BIN / "vulture", src, ROOT / "lint" / "vulture_allow.py", "--min-confidence", "60"]).stdout
    return [ln for ln in out.splitlines() if re.search(r"unused (function|method|property)", ln)]


@pytest.fixture
def src(tmp_path):
    shutil.copytree(ROOT / "src" / "scope", tmp_path / "scope", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "scope"


@pytest.mark.system
def test_code_needing_a_newer_python_than_promised_fails(src):
    sizes = src / "sizes.py"
    was = sizes.read_text()
    sizes.write_text(was + "\n\ndef _planted(x):\n    match x:\n        case 1:\n            return 1\n")
    bad = vermin(src)
    assert bad.returncode != 0 and "pattern matching" in (bad.stdout + bad.stderr).lower()
    sizes.write_text(was)
    assert vermin(src).returncode == 0


@pytest.mark.system
def test_a_dead_function_fails(src):
    sizes = src / "sizes.py"
    was = sizes.read_text()
    sizes.write_text(was + "\n\ndef planted_nobody_calls():\n    return 1\n")
    assert any("planted_nobody_calls" in ln for ln in vulture(src))
    sizes.write_text(was)
    assert vulture(src) == []
