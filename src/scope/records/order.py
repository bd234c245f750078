"""What one launch's records must be together, beyond each record's own type: a saved stream is
read with these checks (run/recorder.py `_records`), so a hand-edited one is refused at its line
before anything is stored (issues 44 and 58).  The engine writes a launch as: its context
first, then per point the `pairs` records of its steps (pairs-timed tests) before the point."""

from __future__ import annotations


class LaunchOrder:
    """Fed one launch's records in order; each call answers why the record cannot stand where
    it is, or None."""

    def __init__(self) -> None:
        self.ranks: int | None = None
        self.points: set[tuple[str, int]] = set()
        self.steps: dict[int, dict] = {}  # point index -> its pairs so far: test, params, steps, seen
        self.ended = False

    def __call__(self, rec: dict) -> str | None:
        kind = rec["type"]
        if kind == "context":
            self.ranks = int(rec["ranks"])
        elif kind == "point":
            return self._point(rec)
        elif kind == "pairs":
            return self._pairs(rec)
        elif kind in ("error", "skip") and rec.get("index") is not None:
            self.steps.pop(rec["index"], None)  # a point that failed or was skipped mid-sweep
        elif kind == "end":
            self.ended = True
        return None

    def _point(self, rec: dict) -> str | None:
        key = (rec["test"], rec["index"])
        if key in self.points:
            return f"point {rec['index']} of {rec['test']} a second time"
        self.points.add(key)
        got = self.steps.pop(rec["index"], None)
        if got is None:
            return None
        if got["test"] != rec["test"]:
            return f"the pairs before point {rec['index']} are of {got['test']}, the point of {rec['test']}"
        if got["params"] != rec["params"]:
            return f"the pairs before point {rec['index']} have parameters {got['params']}, the point {rec['params']}"
        if len(got["seen"]) != got["steps"]:
            return f"point {rec['index']} follows {len(got['seen'])} of its sweep's {got['steps']} steps"
        return None

    def _pairs(self, rec: dict) -> str | None:
        if self.ranks is None:
            return "a pairs record before the launch's context"
        top = max(max(rec["a"], default=0), max(rec["b"], default=0))
        if top >= self.ranks:
            return f"rank {top} in a launch of {self.ranks} ranks"
        if (rec["test"], rec["index"]) in self.points:
            return f"a pairs record of point {rec['index']} of {rec['test']} after that point"
        got = self.steps.setdefault(
            rec["index"], {"test": rec["test"], "params": rec["params"], "steps": rec["steps"], "seen": set()}
        )
        if (got["test"], got["params"], got["steps"]) != (rec["test"], rec["params"], rec["steps"]):
            return f"the steps of point {rec['index']} disagree on its test, parameters or step count"
        if rec["step"] in got["seen"]:
            return f"step {rec['step']} of point {rec['index']} a second time"
        got["seen"].add(rec["step"])
        return None

    def finish(self) -> str | None:
        """At the launch's last line: a launch that ended (an `end` record) left no sweep without
        its point (a launch cut short may have)."""
        if self.ended and self.steps:
            index = min(self.steps)
            return f"the pairs of point {index} ({self.steps[index]['test']}) have no point after them"
        return None
