"""The command line's value checks and building blocks, shared by the parser modules
(cli/parser.py: the commands that measure; cli/parser_reads.py: those that read the store):
whole numbers with a range, fractions, seconds, values that may not be empty, the launch
count's one check, the arguments several commands share, and a command bound to its handler."""

from __future__ import annotations

import argparse
import urllib.parse

from scope.catalog.baseline import launches
from scope.errors import USAGE, ScopeError
from scope.records.bundle import SHORT_CHARS


def whole(least: int, what: str, most: int = 1 << 31):
    """An argparse type: a whole number (ASCII digits) from `least` to `most` (`what` says so
    when it is not): every number from the user has a range (issue 44)."""

    def parse(text: str) -> int:
        t = text.strip()
        digits = t[1:] if t.startswith("-") else t
        if not (digits.isascii() and digits.isdigit()) or len(digits) > 19:
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number")
        v = int(t)
        if not least <= v <= most:
            raise argparse.ArgumentTypeError(f"must be {what}, got {v}")
        return v

    return parse


MOST_RANKS = 1 << 24  # the engine's plan takes no more (--plan N)
positive_int = whole(1, "at least 1")
rank_count = whole(1, f"at least 1 and at most {MOST_RANKS}", MOST_RANKS)
WEEK_S = 7 * 86400
row_count = whole(0, "0 (all) or more")


def seconds_up_to_a_week(text: str) -> float:
    v = positive_float(text)
    if v > WEEK_S:
        raise argparse.ArgumentTypeError(f"must be at most {WEEK_S} s (a week), got {text}")
    return v


def positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return v


def fraction(top: float):
    """A number in (0, top]: a significance level or an effect size a regression gate can use."""

    def check(text: str) -> float:
        v = positive_float(text)
        if v > top:
            raise argparse.ArgumentTypeError(f"must be above 0 and at most {top:g}, got {text}")
        return v

    return check


def host_share(text: str) -> tuple[int, float]:
    """HOST:SHARE (`scope sim platform --slow`): a host's index and the share of the rate its
    link carries; the platform writer checks both against the platform."""
    host, _, share = text.partition(":")
    try:
        h, s = int(host.strip()), float(share)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not HOST:SHARE, e.g. 17:0.25") from None
    if not (s == s and abs(s) != float("inf")):  # NaN or infinite
        raise argparse.ArgumentTypeError(f"'{text}' is not HOST:SHARE, e.g. 17:0.25")
    return h, s


def pair_share(text: str) -> tuple[tuple[int, int], float]:
    """I-J:SHARE (`scope sim platform --slow-link`): two hosts' indices and the share of the rate
    the route between them carries; the platform writer checks them against the platform."""
    pair, _, share = text.partition(":")
    a, _, b = pair.partition("-")
    try:
        i, j, s = int(a.strip()), int(b.strip()), float(share)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not I-J:SHARE, e.g. 3-7:0.25") from None
    if not (s == s and abs(s) != float("inf")):  # NaN or infinite
        raise argparse.ArgumentTypeError(f"'{text}' is not I-J:SHARE, e.g. 3-7:0.25")
    return (i, j), s


LABEL_CHARS = SHORT_CHARS  # a label a bundle carries (records/bundle.py), so a run named here can be pushed


def given(what: str):
    """A value that must say something: an empty one is refused, never read as the default
    (issue 44: `--db ''` read the default database, `--osu ''` ran the whole baseline)."""

    def check(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"is empty: give {what}")
        return text

    return check


def label(text: str) -> str:
    """A run's name: something, at most LABEL_CHARS characters (what a bundle carries, so a run
    named here can be pushed), no control character."""
    text = given("a name, or leave --label out")(text)
    if len(text) > LABEL_CHARS:
        raise argparse.ArgumentTypeError(f"is {len(text):,} characters: give at most {LABEL_CHARS}")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        raise argparse.ArgumentTypeError("holds a control character: give a name of printable characters")
    return text


def public_url(text: str) -> str:
    """An address a hub's readers reach it at: http(s)://HOST[:PORT][/PATH], nothing after."""
    u = urllib.parse.urlsplit(text.strip())
    if u.scheme not in ("http", "https") or not u.hostname or u.query or u.fragment or u.username or not text.isascii():
        raise argparse.ArgumentTypeError(f"{text[:80]!r} is no address: give http(s)://HOST[:PORT][/PATH]")
    return text.strip().rstrip("/")


def launch_count(least: int):
    """An argparse type: a launch count from `least` to MAX_LAUNCHES (catalog/baseline.launches,
    the one check of it: scope run, tune, compare --rerun and $SCOPE_LAUNCHES alike)."""

    def check(text: str) -> int:
        try:
            return launches(text, least)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    return check


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line and exit 2, as every other error
        raise ScopeError(message, f"see '{self.prog} --help'", USAGE)


# The arguments several commands share, each defined once: a command adds it by name, with its
# own help where the plain one would say too little.
SHARED = {
    "--mpicc": dict(help="MPI compiler wrapper (default $MPICC, this venv's, PATH)"),
    "--json": dict(action="store_true", help="machine-readable (docs/json.md)"),
    "--label": dict(type=lambda t: label(t), help="a name for this run (at most 256 characters)"),
}


def shared(p: argparse.ArgumentParser, name: str, help: str | None = None) -> None:
    p.add_argument(name, **(SHARED[name] | ({"help": help} if help else {})))


def command(sub, name: str, handler: str, **kw) -> argparse.ArgumentParser:
    """A subcommand and its handler, "module:function", bound where the command is declared
    (main imports the module only when the command is chosen): adding a command touches this
    file and the handler's module, nothing else."""
    p = sub.add_parser(name, **kw)
    p.set_defaults(handler=handler)
    return p


def slowdown_of(text: str, flag: str = "--max-slowdown") -> float:
    """A relative slowdown as people write it: 5% or 0.05."""
    t = text.strip()
    try:
        v = float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        v = float("nan")
    if not 0 < v < 10:  # NaN fails too
        raise ScopeError(f"{flag} {text!r} is not a slowdown", f"e.g. {flag} 5% (or 0.05)", USAGE)
    return v
