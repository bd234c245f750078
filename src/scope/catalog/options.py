"""The run options the engine defines, offered by `scope run` under the same names.

The engine publishes its option table (`scope-engine --list --json`, `option` records): name,
kind, default, range, choices, help.  This module turns that table into argparse arguments
with the engine's help text, ranges and defaults; and it turns the values given back into the
engine's arguments.  Values are not checked here: the engine's plan (plan.py) checks them,
before anything is launched.  No default or range is written on this side."""

from __future__ import annotations

import argparse
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

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")


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
            parser.add_argument(*flags, dest=o.dest, metavar="V", help=help_text)


def given(args: argparse.Namespace, options: list[EngineOption]) -> dict[str, object]:
    """The engine options the user gave, by name."""
    out: dict[str, object] = {}
    for o in options:
        v = getattr(args, o.dest, None)
        if v is None or v is False or v == []:
            continue
        out[o.name] = v
    return out


def engine_argv(values: dict[str, object], options: list[EngineOption]) -> list[str]:
    """The engine's arguments for the given options; a path option is made absolute, since the
    engine may run in another directory."""
    argv: list[str] = []
    kinds = {o.name: o.kind for o in options}
    for name, v in values.items():
        kind = kinds.get(name, "text")  # a name the engine lacks: it refuses it, by name
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
