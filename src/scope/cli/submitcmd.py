"""`scope submit`: a module (or named tests) as a Slurm batch job.  SCOPE writes the batch
script, builds the engine for the cluster's MPI first (on this node, into the shared build
directory, so the compute nodes only run it), and submits with sbatch.  The job runs
`scope run --launcher srun` inside its allocation, writing into the same results database, so
the run is in the store when the job ends; --wait blocks until then and names the run."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from scope.catalog.baseline import DEFAULT_TESTS
from scope.catalog.options import engine_argv, from_records, given
from scope.cli.common import open_store, push_target
from scope.cli.parser import build_parser
from scope.errors import ENVIRONMENT, USAGE, ScopeError
from scope.run.checks import writable_output
from scope.run.plan import ask
from scope.run.toolchain import describe, engine_path, find_toolchain


def script(args, db: Path, mpicc: Path) -> str:
    run = [sys.executable, "-m", "scope", "--db", str(db), "run", "--launcher", "srun", "--mpicc", str(mpicc)]
    if args.module:
        run += ["--module", args.module]
    run += [*args.tests, "-n", str(args.ntasks), "--quiet"]
    run += ["--label", args.label] if args.label else []
    run += shlex.split(args.run_args) if args.run_args else []
    if getattr(args, "push", None):  # the job pushes its run when it ends (its token from the job's environment)
        run += ["--push", args.push]
        run += ["--token-file", str(Path(args.token_file).resolve())] if args.token_file else []
        run += ["--cluster", args.cluster] if args.cluster else []
    lines = [
        "#!/bin/bash",
        f"#SBATCH --job-name=scope-{args.module or 'run'}",
        f"#SBATCH --nodes={args.nodes}",
        f"#SBATCH --ntasks={args.ntasks}",
        f"#SBATCH --output={args.output_dir}/scope-%j.out",
    ]
    for name in ("partition", "time", "account", "qos", "constraint"):
        value = getattr(args, name, None)
        lines += [f"#SBATCH --{name}={value}"] if value else []
    lines += ["#SBATCH --exclusive"] if getattr(args, "exclusive", False) else []
    lines += [f"#SBATCH {a}" for a in getattr(args, "sbatch_arg", None) or []]
    lines += [
        "# written by scope submit: the run goes into the results database named below",
        "set -euo pipefail",
        f"cd {shlex.quote(str(Path.cwd()))}",
        shlex.join(run),
    ]
    return "\n".join(lines) + "\n"


# What Slurm's own grammar allows in the fields written into #SBATCH lines (sbatch(1)): a value
# that fails is refused before anything is written, so no value can end a directive and start
# another (a newline in --partition once wrote `#SBATCH --uid=0` into the script).
FIELDS = {
    "partition": (re.compile(r"[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*"), "a partition name, or names separated by commas"),
    # ASCII digits: Python's \d takes any script's ('٣٠' passed, and sbatch would misread it)
    "time": (
        re.compile(r"([0-9]+-[0-9]+(:[0-9]+){0,2}|[0-9]+(:[0-9]+){0,2}|UNLIMITED|INFINITE)", re.I | re.ASCII),
        "minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS",
    ),
    "account": (re.compile(r"[A-Za-z0-9_.-]+"), "an account name"),
    "qos": (re.compile(r"[A-Za-z0-9_.-]+"), "a QOS name"),
    # features joined by & | , * and grouped by [ ] ( ), as sbatch --constraint takes them
    "constraint": (re.compile(r"[A-Za-z0-9_.&|,*\[\]():-]+"), "node features joined by & or |"),
}
EXAMPLE = {"partition": "compute", "time": "30:00", "account": "proj123", "qos": "normal", "constraint": "avx512"}
# one sbatch option as its own #SBATCH line: --name or --name=value, nothing that could end the
# line or the directive (whitespace, quotes, shell characters)
SBATCH_ARG = re.compile(r"--[a-z][a-z0-9-]*(=[A-Za-z0-9_.,:=/@%+&|*\[\]()-]+)?", re.ASCII)
# the folder in `#SBATCH --output=DIR/scope-%j.out`: sbatch splits a directive at whitespace, so
# `--output-dir 'out --account=victim'` wrote an --account past its check; no whitespace, quote
# or shell character, as a path on a cluster's shared file system has
PATH_GRAMMAR = re.compile(r"[A-Za-z0-9_./@%+,:=~-]+", re.ASCII)
MAX_DAYS = 366  # a time limit longer than a year is a typo


def check_fields(args) -> None:
    """Every value that goes into the batch script, against Slurm's grammar (exit 2 otherwise)."""
    for name, (grammar, form) in FIELDS.items():
        value = getattr(args, name, None)
        if value is not None and not grammar.fullmatch(value):
            raise ScopeError(f"--{name} {value!r} is not {form}", f"e.g. --{name} {EXAMPLE[name]}", USAGE)
    days = _days(args.time) if getattr(args, "time", None) else 0
    if days > MAX_DAYS:
        raise ScopeError(
            f"--time {args.time} is {days:.0f} days", f"at most {MAX_DAYS} days, e.g. --time 1-00:00", USAGE
        )
    for a in getattr(args, "sbatch_arg", None) or []:
        if not SBATCH_ARG.fullmatch(a):
            raise ScopeError(
                f"--sbatch-arg {a!r} is not one sbatch option",
                "write --sbatch-arg=--name=value, one option a use, no spaces or quotes",
                USAGE,
            )
    for name in ("label", "run_args", "output_dir", "script"):
        value = getattr(args, name, None)
        if value is not None and any(ord(ch) < 32 or ord(ch) == 127 for ch in str(value)):
            raise ScopeError(
                f"--{name.replace('_', '-')} holds a control character", "give it on one line, printable", USAGE
            )
    if getattr(args, "output_dir", None) is not None and not PATH_GRAMMAR.fullmatch(args.output_dir):
        raise ScopeError(
            f"--output-dir {args.output_dir!r} cannot go into an #SBATCH line",
            "a path without spaces, quotes or shell characters",
            USAGE,
        )


def _days(text: str) -> float:
    """Days in a Slurm time (minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S); 0 for UNLIMITED."""
    if text.upper() in ("UNLIMITED", "INFINITE"):
        return 0.0
    days, _, rest = text.rpartition("-") if "-" in text else ("0", "", text)
    parts = [int(x) for x in rest.split(":")]
    if "-" in text:  # D-H, D-H:M, D-H:M:S
        hours = parts[0] + (parts[1] / 60 if len(parts) > 1 else 0)
    else:  # M, M:S, H:M:S
        hours = parts[0] / 60 if len(parts) <= 2 else parts[0] + parts[1] / 60
    return int(days) + hours / 24


def cmd_submit(args) -> int:
    check_fields(args)
    push_target(args, args.push)  # the hub's address and the token, checked here: the job would fail at its end
    if not args.module and not args.tests:
        raise ScopeError("nothing to submit", "name a module (--module baseline) or tests", USAGE)
    if args.module and args.tests:
        raise ScopeError(f"--module {args.module} chooses its own tests", "name a module or tests, not both", USAGE)
    if not shutil.which("sbatch"):
        raise ScopeError("sbatch is not on PATH", "run scope submit on a Slurm login node", ENVIRONMENT)
    tc = find_toolchain(args.mpicc)
    exe = engine_path(tc)  # built here, before the job: compute nodes may have no compiler
    check_run_args(args, exe)
    output_dir = str(Path(args.output_dir or ".").resolve())
    if not PATH_GRAMMAR.fullmatch(output_dir):  # here, the current folder's own name
        raise ScopeError(f"the job's output folder {output_dir!r} cannot go into an #SBATCH line",
                         "give --output-dir a path without spaces or quotes", USAGE)  # fmt: skip
    given_path = Path(args.script or f"scope-{args.module or 'run'}-{time.strftime('%Y%m%d-%H%M%S')}.sbatch")
    if given_path.is_symlink():  # writing and chmod would follow it: another file made executable
        raise ScopeError(f"--script {given_path} is a symbolic link", "name a new file or a regular one", USAGE)
    path = writable_output(str(given_path), "--script").resolve()
    store = open_store(args)
    db = Path(store.path).resolve()
    args.output_dir = output_dir
    text = script(args, db, tc.mpicc.resolve())
    path.write_text(text)
    path.chmod(0o755)
    print(f"wrote {path}")
    argv = ["sbatch", "--parsable", *(["--wait"] if args.wait else []), str(path)]
    p = subprocess.run(argv, capture_output=True, text=True)
    job = (p.stdout.strip().split(";") or [""])[0]
    if not job.isdigit():
        raise ScopeError(f"sbatch refused the job: {(p.stderr or p.stdout).strip()[:300]}", "check the #SBATCH lines")
    out = Path(args.output_dir) / f"scope-{job}.out"
    if not args.wait:
        print(f"submitted job {job}; its run goes into {db} (scope runs), its output into {out}")
        return 0
    run = job_run(store, job)
    if p.returncode != 0 or run is None:
        tail = out.read_text().strip().splitlines()[-1:] if out.is_file() else []
        raise ScopeError(f"job {job} ended without a complete run ({'; '.join(tail) or 'no output'})", f"see {out}")
    print(f"job {job} done: run {run} in {db} (scope show {run})")
    return 0


def check_run_args(args, exe: Path) -> None:
    """--run-args as `scope run` reads them: split as a shell would, parsed by run's own parser
    with the engine's option table, and their values checked by the engine's plan, all before a
    script is written or sbatch called (issue 44: an unclosed quote was exit 70, `--budget nan`
    was queued and failed on the cluster)."""
    if not args.run_args:
        return
    try:
        tokens = shlex.split(args.run_args)
    except ValueError as e:
        raise ScopeError(f"--run-args {args.run_args!r}: {e}", "quote as a shell would", USAGE) from None
    table = from_records(describe(exe))
    parsed = build_parser(table).parse_args(["run", *tokens])
    if parsed.tests:
        raise ScopeError(
            f"--run-args names tests ({' '.join(parsed.tests)})", "name tests as submit's own arguments", USAGE
        )
    ask(exe, ["--tests", ",".join(args.tests or DEFAULT_TESTS), *engine_argv(given(parsed, table), table)], args.ntasks)


def job_run(store, job: str) -> int | None:
    """The newest run made by Slurm job `job` (its engine saw SLURM_JOB_ID)."""
    for r in reversed(store.runs()):
        if r["status"] not in ("complete", "errors"):
            continue
        ctx = store.load_run(r["id"], samples=False).context_record or {}
        if (ctx.get("env") or {}).get("SLURM_JOB_ID") == job:
            return r["id"]
    return None
