"""Slurm for real (clusters of Debian's daemons, tests/slurm_cluster.py): srun as the launcher,
the allocation read and recorded, the singletons a mismatched PMI starts caught, a run
through srun and through sbatch (scope submit), a module's batch script, and a two-node
cluster of testbed namespaces."""

import json
import os
import shlex
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import pytest

from scope.cli.submitcmd import script
from scope.run.slurm import allocation, expand_hostlist, srun_args
from scope.store import Store
from tests.conftest import run_scope, until_stored
from tests.slurm_cluster import TESTBED, slurm, slurm_testbed  # noqa: F401  (the fixtures)

QUICK = ["--sizes", "8", "--budget", "0.2", "--quiet"]


@pytest.mark.unit
def test_a_hostlist_expands_as_slurm_writes_it(monkeypatch):
    monkeypatch.setattr("scope.run.slurm.shutil.which", lambda _: None)  # SCOPE's own expansion
    assert expand_hostlist("node[01-03,07],login1") == ["node01", "node02", "node03", "node07", "login1"]
    assert expand_hostlist("gpu[8-10]x") == ["gpu8x", "gpu9x", "gpu10x"]
    env = {"SLURM_JOB_ID": "42", "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_NTASKS": "8", "SLURM_TASKS_PER_NODE": "4(x2)"}
    assert allocation(env) == {
        "job_id": "42", "nodelist": ["n1", "n2"], "nodes": 2, "ntasks": 8, "tasks_per_node": "4(x2)",
        "partition": None,
    }  # fmt: skip
    assert allocation({}) is None
    assert srun_args("mpich", []) == ["--mpi=pmi2"] and srun_args("mpich", ["--mpi=pmix"]) == []


@pytest.mark.system
def test_srun_runs_the_engine_and_the_job_is_recorded(engine, db, slurm):  # noqa: F811
    p = run_scope("run", "--launcher", "srun", "-n", "2", "p2p.pingpong", *QUICK, db=db, env=slurm)
    assert p.returncode == 0, p.stderr
    run = Store(db).load_run(1)
    assert run.launcher == "srun" and run.status == "complete" and run.points
    ctx = json.loads(Store(db).run(1)["context"])
    assert ctx["ranks"] == 2 and ctx["slurm"]["job_id"].isdigit() and ctx["slurm"]["ntasks"] == 2
    assert len(ctx["slurm"]["nodelist"]) == 1 and "--mpi=pmi2" in run.command


@pytest.mark.system
def test_singletons_from_a_mismatched_pmi_are_caught(engine, db, slurm):  # noqa: F811
    p = run_scope(
        "run", "--launcher", "srun", "-n", "2", "--launcher-args=--mpi=none", "p2p.pingpong", *QUICK, db=db, env=slurm
    )
    assert p.returncode != 0 and "worlds of 1, not one world of 2" in p.stderr and "--mpi=pmi2" in p.stderr
    assert Store(db).load_run(1).status == "incomplete"


@pytest.mark.system
def test_inside_an_allocation_srun_takes_the_job_s_tasks(engine, db, slurm, tmp_path):  # noqa: F811
    cmd = ["salloc", "-n", "2", sys.executable, "-m", "scope", "--db", str(db), "run", "--launcher", "srun",
           "p2p.pingpong", *QUICK]  # fmt: skip
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **slurm}, timeout=600)
    assert p.returncode == 0, p.stderr
    assert Store(db).load_run(1).ranks == 2  # no -n: SLURM_NTASKS


@pytest.mark.unit
def test_a_job_that_pushes_its_run(tmp_path):
    """submit --push: the job's run line pushes when the run ends, with the token's file by its
    absolute path (the job may start elsewhere) and never the token itself."""
    (tmp_path / "tok").write_text("scope_secret\n")
    args = Namespace(
        module="baseline",
        tests=[],
        ntasks=2,
        nodes=1,
        label=None,
        run_args=None,
        output_dir="/o",
        partition=None,
        time=None,
        push="https://hub.example.org",
        token_file="tok",
        cluster="alpha",
    )
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        run = shlex.split(script(args, Path("/r.db"), Path("/usr/bin/mpicc")).splitlines()[-1])
    finally:
        os.chdir(cwd)
    assert run[run.index("--push") + 1] == "https://hub.example.org" and run[run.index("--cluster") + 1] == "alpha"
    assert run[run.index("--token-file") + 1] == str(tmp_path / "tok") and "scope_secret" not in " ".join(run)


@pytest.mark.unit
@pytest.mark.parametrize(
    "args,word",
    [
        (["--push", "https://hub.example.org"], "no hub token"),
        (["--push", "ftp://hub"], "not a hub's address"),
        (["--push", "http://hub\n#SBATCH --uid=0"], "not a hub's address"),
        (["--cluster", "alpha"], "no hub is named"),
    ],
)
def test_a_push_that_could_not_happen_is_refused_before_the_script(db, tmp_path, args, word):
    job = tmp_path / "job.sbatch"
    p = run_scope("submit", "p2p.pingpong", *args, "--script", job, db=db, env={"SCOPE_HUB_TOKEN": ""})
    assert p.returncode == 2 and word in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert not job.exists() and not db.exists()


@pytest.mark.system
@pytest.mark.parametrize("how", ["srun", "sbatch"])
def test_a_run_goes_through_srun_and_sbatch(engine, db, slurm, tmp_path, how):  # noqa: F811
    # two levels and the I/O directory, short: the module's own content is tested in
    # test_modules, and its batch script below
    tests, io = ["p2p.pingpong", "coll.allreduce", "io.write"], ["--io-dir", str(tmp_path)]
    quick = ["--sizes", "8,64K", "--budget", "0.1"]
    if how == "srun":
        p = run_scope("run", *tests, "--launcher", "srun", *quick, *io, "--quiet", db=db, env=slurm, timeout=900)
    else:
        job = ["--output-dir", tmp_path, "--script", tmp_path / "job.sbatch"]
        more = " ".join([*quick, *io])
        p = run_scope("submit", *tests, "--wait", "--run-args", more, *job, db=db, env=slurm, timeout=900)
        assert "#SBATCH --ntasks=2" in (tmp_path / "job.sbatch").read_text()
    assert p.returncode == 0, p.stderr + p.stdout
    run = Store(db).load_run(1)
    assert run.status == "complete" and {pt.test for pt in run.points} == set(tests)
    assert all(pt.record["validated"] == 2 for pt in run.points)
    ctx = json.loads(Store(db).run(1)["context"])
    assert ctx["slurm"]["job_id"].isdigit()
    if how == "sbatch":
        assert f"job {ctx['slurm']['job_id']} done: run 1" in p.stdout


@pytest.mark.unit
@pytest.mark.parametrize("module", ["baseline", "screen"])
def test_the_batch_script_of_a_module(module):
    args = Namespace(module=module, tests=[], ntasks=4, nodes=2, label=None, run_args="--launches 1",
                     output_dir="/scratch/out", partition=None, time="30:00")  # fmt: skip
    text = script(args, Path("/home/u/results.db"), Path("/opt/mpi/bin/mpicc"))
    lines = text.splitlines()
    assert lines[0] == "#!/bin/bash" and f"#SBATCH --job-name=scope-{module}" in lines
    assert "#SBATCH --nodes=2" in lines and "#SBATCH --ntasks=4" in lines and "#SBATCH --time=30:00" in lines
    run = shlex.split(lines[-1])
    assert run[run.index("--module") + 1] == module and run[run.index("--mpicc") + 1] == "/opt/mpi/bin/mpicc"
    assert run[run.index("--launcher") + 1] == "srun" and run[-2:] == ["--launches", "1"]


@pytest.mark.system
@pytest.mark.parametrize("how", ["srun", "sbatch"])
def test_two_nodes_in_two_testbed_namespaces(engine, db, slurm_testbed, tmp_path, how):  # noqa: F811
    """Each slurmd is a node in its own network namespace: the ranks land on both, and MPI
    crosses the testbed's link (TCP; MPICH knows them apart from Slurm's node map)."""
    env, ns = slurm_testbed
    scope = ["nsenter", f"--net=/run/netns/{ns}", sys.executable, "-m", "scope", "--db", str(db)]
    if how == "srun":
        cmd = [*scope, "run", "--launcher", "srun", "-n", "2", "--launcher-args=-N 2", "p2p.pingpong", *QUICK]
    else:  # without --wait (tested above): sbatch's own wait polls at 2 and 10 s, the job takes 3
        cmd = [*scope, "submit", "p2p.pingpong", "-N", "2", "-n", "2", "--run-args", " ".join(QUICK),
               "--output-dir", str(tmp_path), "--script", str(tmp_path / "job.sbatch")]  # fmt: skip
    # env has MPICH on OFI's tcp, not UCX as on the testbed (tests/slurm_cluster.py says why)
    p = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **env}, timeout=600)
    assert p.returncode == 0, p.stderr + p.stdout
    if how == "sbatch":
        ended = until_stored(db, 300, lambda s: (st := s.run(1)["status"]) != "running" and st)
        assert ended == "complete", list(tmp_path.glob("*.out"))
    ctx = json.loads(Store(db).run(1)["context"])
    place = sorted(ctx["placement"], key=lambda r: r["rank"])
    assert place[0]["netns"] != place[1]["netns"] and place[0]["node"] != place[1]["node"]
    assert ctx["slurm"]["nodelist"] == [f"{TESTBED}0", f"{TESTBED}1"]
    # the ranks ran on two nodes in two namespaces (above): MPI had no shared memory between them
    assert all(p["rank"] in (0, 1) for p in place) and len(place) == 2


SUBMIT_BAD = [
    (["--partition", "x\n#SBATCH --uid=0"], "--partition"),  # a directive injected by a newline
    (["--partition", "a b"], "--partition"),
    (["--partition", "debug;rm"], "--partition"),
    (["--time", "30:00\n#SBATCH --uid=0"], "--time"),
    (["--time", "soon"], "--time"),
    (["--time", "1-2-3"], "--time"),
    (["--label", "x\ny"], "control character"),
    (["--run-args", "--budget 1\n#SBATCH --uid=0"], "control character"),
    (["--output-dir", "/tmp/x\n#SBATCH --uid=0"], "control character"),
    (["--account", "a b"], "--account"),
    (["--account", "x\n#SBATCH --uid=0"], "--account"),
    (["--qos", "high;id"], "--qos"),
    (["--constraint", "ib avx"], "--constraint"),
    (["--constraint", "$(id)"], "--constraint"),
    (["--sbatch-arg=--mem 8G"], "is not one sbatch option"),
    (["--sbatch-arg=--comment='x y'"], "is not one sbatch option"),
    (["--sbatch-arg=mem=8G"], "is not one sbatch option"),
    (["--sbatch-arg=--x=$(id)"], "is not one sbatch option"),
    (["--sbatch-arg=--mem=8G\n#SBATCH --uid=0"], "is not one sbatch option"),
    (["--time", "400-00"], "at most 366 days"),
    (["--time", "999999"], "at most 366 days"),
    (["-n", "0"], "at least 1"),
    (["-N", "0"], "at least 1"),
]


@pytest.mark.unit
@pytest.mark.parametrize("args,word", SUBMIT_BAD)
def test_what_goes_into_the_batch_script_is_checked_before_it_is_written(db, tmp_path, args, word):
    job = tmp_path / "job.sbatch"
    p = run_scope("submit", "p2p.pingpong", *args, "--script", job, db=db)
    assert p.returncode == 2 and word in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert not job.exists() and not db.exists()


@pytest.mark.unit
def test_the_site_options_become_one_sbatch_line_each(tmp_path):
    from scope.cli.submitcmd import check_fields

    site = dict(partition="compute", time="1-00:00", account="proj123", qos="normal", constraint="ib&avx512")
    more = ["--mem=8G", "--mail-type=END"]
    a = Namespace(module=None, tests=["p2p.pingpong"], ntasks=2, nodes=1, label=None, run_args=None, script=None,
                  output_dir=str(tmp_path), exclusive=True, sbatch_arg=more, **site)  # fmt: skip
    check_fields(a)
    lines = script(a, tmp_path / "r.db", Path("/usr/bin/mpicc")).splitlines()
    for want in ("--partition=compute", "--time=1-00:00", "--account=proj123", "--qos=normal",
                 "--constraint=ib&avx512", "--exclusive", "--mem=8G", "--mail-type=END"):  # fmt: skip
        assert f"#SBATCH {want}" in lines
    directives = [ln for ln in lines if ln.startswith("#SBATCH")]
    assert lines[: len(directives) + 1][1:] == directives  # every directive before the first command


@pytest.mark.unit
@pytest.mark.parametrize("value", ["30", "30:00", "1:30:00", "2-12", "2-12:30", "2-12:30:15", "UNLIMITED"])
def test_every_time_form_sbatch_takes_is_accepted(value):
    from scope.cli.submitcmd import check_fields

    check_fields(Namespace(partition="compute,debug", time=value, label=None, run_args=None, output_dir=None))


@pytest.mark.mpi
def test_srun_without_a_controller_is_refused_before_a_run_exists(engine, db, tmp_path):
    """Outside an allocation, with no controller answering (a configuration that points
    nowhere), `--launcher srun` is exit 3 in Slurm's words and stores nothing."""
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=none\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\n")  # refused at once
    env = {"SLURM_CONF": str(conf), "SLURM_JOB_ID": ""}
    p = run_scope("run", "p2p.pingpong", "--launcher", "srun", "--sizes", "8", db=db, env=env, timeout=120)
    assert p.returncode == 3, p.stderr
    said = "no Slurm controller answers" in p.stderr or "srun is not on PATH" in p.stderr
    assert said and p.stderr.count("\n") == 1
    assert not db.exists() or not Store(db).runs()


# Issue 44: every value that reaches a directive by one grammar (ASCII digits, no whitespace)
SUBMIT_BAD_44 = [
    (["--time", "٣٠"], "--time"),  # Arabic-Indic digits passed Python's \d
    (["--time", "1-٢"], "--time"),
    (["--time", "３０"], "--time"),  # fullwidth
    (["--output-dir", "out --account=victim --qos=high"], "--output-dir"),
    (["--output-dir", "/tmp/a b"], "--output-dir"),
    (["--output-dir", "/tmp/'x'"], "--output-dir"),
    (["--output-dir", "$(id)"], "--output-dir"),
    (["--output-dir", "/tmp/x;id"], "--output-dir"),
    (["--sbatch-arg=--mem=８G"], "is not one sbatch option"),
    (["--partition", "débug"], "--partition"),
]


@pytest.mark.unit
@pytest.mark.parametrize("args,word", SUBMIT_BAD_44, ids=lambda x: " ".join(x) if isinstance(x, list) else None)
def test_every_value_reaching_a_directive_has_one_grammar(db, tmp_path, args, word):
    job = tmp_path / "job.sbatch"
    p = run_scope("submit", "p2p.pingpong", *args, "--script", job, db=db)
    assert p.returncode == 2 and word in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert not job.exists() and not db.exists()


def fake_sbatch(tmp_path: Path, called: Path) -> dict:
    """An sbatch first on PATH that appends each call's arguments to `called`: the environment
    that puts it there."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "sbatch"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {called}\necho 1;cluster\n')
    fake.chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}"}


RUN_ARGS_BAD = [
    ("--label 'unclosed", "No closing quotation"),
    ("--budget nan", "budget"),
    ("--budget -1", "budget"),
    ("--sizes 1KB", "1KB"),
    ("--no-such-option", "unrecognized arguments"),
    ("--launches 0", "--launches"),
    ("-p mode=standard,,sync", "empty"),
    ("p2p.pingpong", "names tests"),
]


@pytest.mark.mpi
@pytest.mark.parametrize("run_args,word", RUN_ARGS_BAD, ids=[r[0] for r in RUN_ARGS_BAD])
def test_run_args_are_read_by_run_s_parser_and_the_engine_s_plan_before_sbatch(engine, db, tmp_path, run_args, word):
    """A fake sbatch on PATH that records each call: none may come."""
    called = tmp_path / "called"
    env = fake_sbatch(tmp_path, called)
    job = tmp_path / "job.sbatch"
    p = run_scope("submit", "p2p.pingpong", f"--run-args={run_args}", "--script", job, db=db, env=env)
    assert p.returncode == 2 and word in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert not called.exists() and not job.exists()


@pytest.mark.mpi
def test_a_script_path_that_is_a_link_is_refused_and_its_target_left_alone(engine, db, tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("mine\n")
    target.chmod(0o644)
    link = tmp_path / "job.sbatch"
    link.symlink_to(target)
    p = run_scope("submit", "p2p.pingpong", "--script", link, db=db, env=fake_sbatch(tmp_path, tmp_path / "called"))
    assert p.returncode == 2 and "is a symbolic link" in p.stderr, p.stderr
    assert target.read_text() == "mine\n" and target.stat().st_mode & 0o777 == 0o644
