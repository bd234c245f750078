"""What SCOPE keeps of the environment and of the text it records: one rule, defined here and
nowhere else (issue 67: every pushed run carried the cluster's push token).

- A variable whose name looks like a credential (token, secret, password, key, credential,
  cookie, auth) keeps its name, its value replaced by `<redacted>`: provenance still shows it
  was set, and nothing shows what it was.
- Of the rest, a run keeps the variables that shape a measurement (MPI, UCX, libfabric, Slurm,
  OpenMP, BLAS, SCOPE's own settings: MEASURED), less SCOPE's variables that only name this
  machine's things (LOCAL: the watchdog's process id, the store's and the hub's databases,
  build and scratch folders).
- Free text (a command line, a failed launch's stderr, a message) loses the value of every
  credential the environment holds, the password of a URL, and `NAME=value` of a credential name.
- What is private to the machine that ran a run (its scratch and I/O folders, an import's source
  folder) stays in its own store and is `<private>` in everything that leaves it (`leaving`).

The engine writes its context's `env` filtered by the same prefixes (engine/records.c; a test
holds the two lists equal); every record is stored through this rule (`record`: store/store.py,
store/bundle.py) and a saved stream is written under it (run/recorder.py), so a saved stream, an
export, a bundle and a report hold what it kept and no more."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping

REDACTED = "<redacted>"
PRIVATE = "<private>"

# Variables that shape a measurement (engine/records.c env_prefixes writes the same ones).
MEASURED = (
    "MPIR_CVAR_", "MPICH_", "UCX_", "FI_", "OMPI_MCA_", "I_MPI_", "HYDRA_", "SLURM_JOB", "SLURM_NTASKS",
    "SLURM_CPUS", "SLURM_TASKS", "OMP_", "SCOPE_", "OPENBLAS_",
)  # fmt: skip
# SCOPE's own variables that name this machine's things, not how it measured
LOCAL = re.compile(r"SCOPE_(?:WATCH_\w*|DB|DB_\w*|HUB_\w*|BUILD_DIR|ENGINE_SRC|TESTBED_DIR|CLOCK_LIB)")
CREDENTIAL = re.compile(r"TOKEN|SECRET|PASSW|PASSPHRASE|KEY|CREDENTIAL|COOKIE|AUTH", re.IGNORECASE)
SHORTEST = 6  # a credential's value shorter than this is not looked for in free text (it hits words)
# scheme://user:PASSWORD@host: the password, in any text
URL_PASSWORD = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*:)([^\s/@]+)@")
# NAME=value where NAME is a credential's (an assignment in a command line, a log line)
ASSIGNMENT = re.compile(r"(?<![\w.-])([A-Za-z_][A-Za-z0-9_]*)=(\S+)")


def credential(name: str) -> bool:
    """Whether a variable's (or an option's) name says it holds a credential."""
    return bool(CREDENTIAL.search(name))


def measured(name: str) -> bool:
    """Whether a run keeps a variable at all: it shapes a measurement and names nothing local."""
    return name.startswith(MEASURED) and not LOCAL.fullmatch(name)


def environment(env: Mapping[str, str], keep_all: bool = False) -> dict[str, str]:
    """What a run keeps of an environment: credentials named and redacted, the rest kept when it
    shapes a measurement (every variable with keep_all: what the user asked a launch to set)."""
    out = {}
    for name, value in env.items():
        if credential(name):
            out[name] = REDACTED
        elif keep_all or measured(name):
            out[name] = URL_PASSWORD.sub(rf"\1{REDACTED}@", value) if isinstance(value, str) else value
    return out


def known(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The credentials an environment holds (os.environ's by default): each credential-named
    variable's value and each URL's password, longest first, as free text is searched for them."""
    env = os.environ if env is None else env
    found = set()
    for name, value in env.items():
        if not isinstance(value, str):
            continue
        v = value.strip()
        # a credential's value, not a path that a credential-named variable points at
        # (SSH_AUTH_SOCK, XAUTHORITY, a key file): searching text for those would blank library paths
        if credential(name) and len(v) >= SHORTEST and not (v.startswith("/") and os.path.exists(v)):
            found.add(v)
        found.update(m.group(2) for m in URL_PASSWORD.finditer(value) if len(m.group(2)) >= SHORTEST)
    found.discard(REDACTED)
    return tuple(sorted(found, key=len, reverse=True))


class Scrubber:
    """Replaces values in text: each secret by `<redacted>`, each private value (a path) by
    `<private>`, and credentials written as NAME=value or in a URL, wherever they stand."""

    def __init__(self, secrets: Iterable[str] = (), private: Iterable[str] = ()):
        self.repl = {v: PRIVATE for v in private if v and len(v) >= 2}
        self.repl.update({v: REDACTED for v in secrets if v and len(v) >= SHORTEST})
        alts = sorted(self.repl, key=len, reverse=True)
        self.values = re.compile("|".join(map(re.escape, alts))) if alts else None

    def text(self, s: str) -> str:
        if self.values is not None:
            s = self.values.sub(lambda m: self.repl[m.group(0)], s)
        if "=" in s:
            s = ASSIGNMENT.sub(lambda m: f"{m.group(1)}={REDACTED}" if credential(m.group(1)) else m.group(0), s)
        if "://" in s:
            s = URL_PASSWORD.sub(rf"\1{REDACTED}@", s)
        return s

    def argv(self, args: list) -> list:
        """A command line: its text scrubbed, and the word after an option that names a
        credential (--password X, -genv MY_TOKEN X, -x MY_TOKEN=...) redacted."""
        out = [self.text(a) if isinstance(a, str) else a for a in args]
        for i in range(1, len(out)):
            prev = out[i - 1] if isinstance(out[i - 1], str) else ""
            before = out[i - 2] if i >= 2 and isinstance(out[i - 2], str) else ""
            if prev.startswith("-") and "=" not in prev and credential(prev) and not prev.endswith("-file"):
                out[i] = REDACTED
            elif before in ("-genv", "-env", "--env") and credential(prev):
                out[i] = REDACTED
        return out

    def walk(self, obj):
        """Every string in a JSON-like value scrubbed (a new value; bytes are left as they are);
        an `env` mapping's credentials redacted by name."""
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            out = {}
            for k, v in obj.items():
                if k in ("env", "launcher_args", "argv", "command") and isinstance(v, (dict, list)):
                    v = environment(v, keep_all=True) if isinstance(v, dict) else self.argv(v)
                out[self.text(k) if isinstance(k, str) else k] = self.walk(v)
            return out
        if isinstance(obj, list):
            return [self.walk(v) for v in obj]
        return obj

    def holds(self, encoded: bytes) -> bool:
        """Whether JSON bytes hold a secret or private value of this scrubber's (a quick test
        before walking many records: their patterns, NAME=value and URLs, are not looked for)."""
        return any(json.dumps(v)[1:-1].encode() in encoded for v in self.repl)


def scrubber(private: Iterable[str] = ()) -> Scrubber:
    """The scrubber for what this process writes: the environment's credentials, and `private`."""
    return Scrubber(known(), private)


def context(rec: dict, scrub: Scrubber | None = None) -> dict:
    """An engine's context record as a run keeps it: its strings scrubbed, its `env` reduced to
    what shapes a measurement with every credential redacted."""
    scrub = scrub or scrubber()
    out = scrub.walk(rec)
    if isinstance(rec.get("env"), dict):
        out["env"] = environment(rec["env"])
    return out


def record(rec: dict, scrub: Scrubber | None = None) -> dict:
    """An engine record as a run keeps it: a context by `context`, a point or a pairs step as it
    is (the engine's numbers and names), any other (a message, a fault) with its text scrubbed."""
    kind = rec.get("type")
    if kind in ("point", "pairs"):
        return rec
    return context(rec, scrub) if kind == "context" else (scrub or scrubber()).walk(rec)


def private_paths(run: Mapping, ctx: Mapping | None) -> list[str]:
    """The folders private to the machine that ran a run: its scratch and I/O folders, and the
    folder an import (a peer's file, a saved stream, events files) was read from, whose own
    name is kept."""
    found = []
    scratch = run.get("scratch")
    found += [p for p in scratch if isinstance(p, str)] if isinstance(scratch, list) else []
    command = run.get("command")
    imported = command[2] if isinstance(command, list) and command[:2] == ["scope", "import"] else None
    for source in (run.get("source"), imported):  # a file, a saved stream's folder, an events prefix
        if isinstance(source, str) and source:
            found.append(os.path.dirname(source.rstrip("/")))
    ctx = ctx if isinstance(ctx, Mapping) else {}
    io = ctx.get("io") if isinstance(ctx.get("io"), Mapping) else {}
    found += [io.get("dir"), io.get("run_dir")]
    req = ctx.get("request") if isinstance(ctx.get("request"), Mapping) else {}
    eng = req.get("engine") if isinstance(req.get("engine"), Mapping) else {}
    found += [eng.get("io-dir"), req.get("save_stream")]
    out = []
    for p in found:
        if isinstance(p, str) and p.startswith("/") and p.rstrip("/") and p.rstrip("/") not in out:
            out.append(p.rstrip("/"))
    return out
