"""The run options the engine defines, offered by `scope run` under the same names.

The engine publishes its option table (`scope-engine --list --json`, `option` records): name,
kind, default, range, choices, help.  This module turns that table into argparse arguments
whose checks are the engine's own ranges, so an out-of-range value is refused here, before
anything is launched, with the range the engine enforces; and it turns the parsed values back
into the engine's arguments.  No default or range is written on this side."""

from __future__ import annotations

import argparse
import math
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class EngineOption:
    name: str
    kind: str  # flag, int, real, text, path, choice, counts, list, action
    default: str | None
    help: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()
    alias: str | None = None
    not_above: str | None = None

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")

    def domain(self) -> str:
        if self.kind in ("int", "real"):
            what = "a whole number" if self.kind == "int" else "a number"
            return f"{what} from {bound_text(self.min)} to {bound_text(self.max)}"
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind == "counts":
            return "all, pow2 or whole numbers >= 1 separated by commas"
        return "text"

    def parse(self, text: str):
        """The value of `text`, or ValueError naming the accepted domain (the engine's words)."""
        if self.kind in ("int", "real"):
            try:
                v = int(text) if self.kind == "int" else float(text)
            except ValueError:
                v = None
            if v is None or (isinstance(v, float) and math.isnan(v)) or not (self.min <= v <= self.max):
                raise ValueError(f"--{self.name} expects {self.domain()}, got '{text}'")
            return v
        if self.kind == "choice" and text not in self.choices:
            raise ValueError(f"--{self.name} expects {self.domain()}; got '{text}'")
        if self.kind == "counts" and not _COUNTS.fullmatch(text):
            raise ValueError(f"--{self.name} expects {self.domain()}, got '{text}'")
        return text


_COUNTS = re.compile(r"all|pow2|[1-9]\d{0,7}(,[1-9]\d{0,7})*")


def bound_text(v) -> str:
    """As the engine prints a bound: whole numbers in full, others to 15 digits."""
    return str(v) if isinstance(v, int) else f"{v:.15g}"


def from_records(records: list[dict]) -> list[EngineOption]:
    """The options `scope run` offers, from the engine's `option` records."""
    out = []
    for r in records:
        if r.get("type") != "option" or not r.get("run"):
            continue
        out.append(
            EngineOption(
                name=r["name"],
                kind=r["kind"],
                default=r.get("default"),
                help=r["help"],
                min=r.get("min"),
                max=r.get("max"),
                choices=tuple(r.get("choices") or ()),
                alias=r.get("alias"),
                not_above=r.get("not_above"),
            )
        )
    return out


def add_arguments(parser: argparse.ArgumentParser, options: list[EngineOption]) -> None:
    """One argparse argument per engine option; defaults stay the engine's (None here means
    'not given': the engine then applies its own)."""
    for o in options:
        flags = [f"--{o.name}"] + ([f"-{o.alias}"] if o.alias else [])
        extra = f" [{bound_text(o.min)}..{bound_text(o.max)}]" if o.kind in ("int", "real") else ""
        default = f" (default {o.default})" if o.default is not None else ""
        help_text = (o.help + extra + default).replace("%", "%%")
        if o.kind == "flag":
            parser.add_argument(*flags, dest=o.dest, action="store_true", help=help_text)
        elif o.kind == "list":
            parser.add_argument(*flags, dest=o.dest, action="append", default=[], metavar="V", help=help_text)
        else:
            parser.add_argument(*flags, dest=o.dest, type=_checker(o), metavar="V", help=help_text)


def _checker(o: EngineOption):
    def check(text: str):
        try:
            return o.parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e).split(" expects ", 1)[-1]) from None

    check.__name__ = o.name  # argparse names the option in its message
    return check


def given(args: argparse.Namespace, options: list[EngineOption]) -> dict[str, object]:
    """The engine options the user gave, by name."""
    out: dict[str, object] = {}
    for o in options:
        v = getattr(args, o.dest, None)
        if v is None or v is False or v == []:
            continue
        out[o.name] = v
    return out


def check_relations(values: dict[str, object], options: list[EngineOption]) -> str | None:
    """The cross-option rules of the table (min-count <= max-count), with defaults filled in;
    the engine's message when one is broken, else None."""
    by_name = {o.name: o for o in options}
    for o in options:
        if not o.not_above:
            continue
        top = by_name[o.not_above]
        lo = values.get(o.name, o.parse(o.default) if o.default is not None else None)
        hi = values.get(top.name, top.parse(top.default) if top.default is not None else None)
        if lo is not None and hi is not None and lo > hi:
            return f"--{o.name} ({lo}) is larger than --{top.name} ({hi})"
    return None


def engine_argv(values: dict[str, object], options: list[EngineOption]) -> list[str]:
    """The engine's arguments for the given options; a path option is made absolute, since the
    engine may run in another directory."""
    argv: list[str] = []
    kinds = {o.name: o.kind for o in options}
    for name, v in values.items():
        kind = kinds[name]
        if kind == "flag":
            argv.append(f"--{name}")
        elif kind == "list":
            for item in v:
                argv += [f"--{name}", str(item)]
        else:
            text = repr(v) if isinstance(v, float) else str(v)
            if kind == "path":
                text = str(Path(text).resolve())
            argv += [f"--{name}", text]
    return argv
