"""What the engine's descriptor says about a test: its level, roles and parameter defaults."""

from __future__ import annotations

import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class TestInfo:
    """What the engine's descriptor says about a test (`scope-engine --list --json`)."""

    name: str
    level: str
    summary: str = ""
    measures: str = ""
    timing: str = "loop"
    roles: tuple[str, ...] = ()
    defaults: tuple[tuple[str, str], ...] = ()  # (parameter, default as the user writes it)

    @classmethod
    def of(cls, rec: dict) -> TestInfo:
        return cls(
            rec["name"],
            rec.get("level") or rec["name"].split(".", 1)[0],
            rec.get("summary", ""),
            rec.get("measures", ""),
            rec.get("timing", "loop"),
            tuple(rec.get("roles") or ()),
            tuple((p["name"], str(p.get("default"))) for p in rec.get("params") or ()),
        )

    @classmethod
    @functools.lru_cache(maxsize=256)  # asked once a point, for a million imported points
    def unknown(cls, name: str) -> TestInfo:
        # The registry test enforces name = level.operation, so the level is the name's prefix.
        return cls(name, name.split(".", 1)[0])

    def role(self, kind: str) -> str | None:
        """The value of role `kind:value` (e.g. role('latency') -> 'MPI'), or None."""
        for r in self.roles:
            k, _, v = r.partition(":")
            if k == kind:
                return v
        return None

    def off_default(self, params: dict) -> int:
        """How many of a point's parameters differ from the descriptor's defaults; unknown
        defaults (imports) never count."""
        return sum(1 for name, default in self.defaults if name in params and written(params[name]) != default)

    def changed(self, params: dict) -> dict:
        """The parameters not at their defaults: what tells one setting from the default."""
        defaults = dict(self.defaults)
        return {k: v for k, v in params.items() if k not in defaults or written(v) != defaults[k]}

    def nearest_default(self, points: list) -> list:
        """The points of the setting nearest the defaults (a layer row or a derived figure is
        quoted there): all at the defaults if any is, else those fewest parameters away (e.g.
        a target=idle get swept with a busy target's slice)."""
        if not points:
            return []
        best = min(self.off_default(p.params) for p in points)
        return [p for p in points if self.off_default(p.params) == best]


def written(v) -> str:
    """A parameter's value as the user writes it: booleans are yes/no."""
    return ("yes" if v else "no") if isinstance(v, bool) else str(v)
