"""The hostile-but-fair corpus of issues 21, 29, 44, 58 and 69 in one go: every bad input, damaged database,
signal and fault-injection case the suite holds, run through pytest, counted case by case.
Prints held/total per group and overall, and writes bench/results/corpus.md and .json.

A case holds when SCOPE did what it promises there: a one-line error with the promised exit
code and nothing launched, stored or lost; a run closed with the reason; no process left.

    .venv/bin/python bench/corpus.py
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from common import ROOT, write

from scope.run.leftovers import LEFTOVERS

# (group, pytest node ids): whole files where the file is the corpus, else the functions
CORPUS = [
    ("bad input: run, patterns, imports, other commands", ["tests/test_bad_input.py"]),
    ("tune: options and signals", [
        "tests/test_tuning.py::test_tune_refuses_bad_options_before_anything_runs",
        "tests/test_tuning.py::test_tune_stops_at_once_on_a_signal_and_writes_nothing",
        "tests/test_tuning.py::test_tune_refuses_what_it_cannot_tune_before_launching",
        "tests/test_tuning.py::test_a_damaged_record_beside_a_tuning_file_is_refused_in_one_line",
    ]),
    ("submit and srun: what reaches Slurm", [
        "tests/test_slurm.py::test_what_goes_into_the_batch_script_is_checked_before_it_is_written",
        "tests/test_slurm.py::test_every_value_reaching_a_directive_has_one_grammar",
        "tests/test_slurm.py::test_run_args_are_read_by_run_s_parser_and_the_engine_s_plan_before_sbatch",
        "tests/test_slurm.py::test_a_script_path_that_is_a_link_is_refused_and_its_target_left_alone",
        "tests/test_slurm.py::test_srun_without_a_controller_is_refused_before_a_run_exists",
    ]),
    ("store faults, damaged rows, signals, a killed scope", ["tests/test_store_faults.py"]),
    ("hostile files and stored text (issue 44): FIFOs, devices, outputs onto the store, escapes, bad UTF-8, "
     "odd schema versions, closed pipes", ["tests/test_hostile_files.py"]),
    ("io: a full file system", ["tests/test_io.py::test_a_full_file_system_is_a_fault_of_the_machine_not_bad_data"]),
    ("the fourth round (issue 58): damaged pairs records, a saved stream kept, the screen's hosts, clock against "
     "--timeout, build paths, variables, predict, testbed values, show --ranks, what a stopped or killed run leaves",
     ["tests/test_reliability4.py",
      "tests/test_testbed.py::test_a_screen_groups_ranks_that_wrap_onto_a_host_with_that_host",
      "tests/test_store_faults.py::test_nothing_outlives_a_killed_scope_and_the_next_one_clears_its_scratch"]),
    ("every run option in every module, honoured or refused (issue 58)", ["tests/test_every_option.py"]),
    ("the fifth round (issue 69): simulated platforms and settings, the screen's weak flags, the clock library's "
     "arguments, events and bundles", ["tests/test_reliability5.py", "tests/test_clock_hostile.py",
                                       "tests/test_reliability5_store.py"]),
    ("hostile files the importers and the history read, and secrets in what a run keeps (issues 57, 67, 68)", [
        "tests/test_import.py::test_malformed_files",
        "tests/test_clock_library.py::test_hostile_events_files_are_refused_in_one_line_and_store_nothing",
        "tests/test_history.py::test_a_hostile_history_csv_is_refused_whole",
        "tests/test_secrets.py",
    ]),
    ("the command line", [
        "tests/test_cli.py::test_malformed_sizes", "tests/test_cli.py::test_bad_rank_counts",
        "tests/test_cli.py::test_bad_parameters", "tests/test_cli.py::test_unwritable_database",
        "tests/test_cli.py::test_corrupt_database", "tests/test_cli.py::test_no_mpi",
        "tests/test_cli.py::test_no_mpi_anywhere", "tests/test_cli.py::test_show_and_export_errors",
    ]),
]  # fmt: skip


def run_group(ids: list[str], xml: Path) -> dict[str, str]:
    """pytest over the ids: each case's outcome (passed, failed, skipped)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}", *ids]
    subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=3600)
    out = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        out[name] = "failed" if kinds & {"failure", "error"} else "skipped" if "skipped" in kinds else "passed"
    return out


LEFTOVER_GLOBS = LEFTOVERS  # what the front end removes after a failed job (run/leftovers.py)
TEMP_FOLDERS = os.path.join(tempfile.gettempdir(), "scope-sim-*")  # a simulated run's (issue 69)


def leftovers() -> tuple[set[str], set[str]]:
    """What a case could leave: shared-memory segments and hydra's files, and processes of the
    engine, its launcher or scope itself (issue 44: nothing in the corpus may leave any)."""
    files = {f for g in (*LEFTOVER_GLOBS, TEMP_FOLDERS) for f in glob.glob(g)}
    procs = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [c.decode(errors="replace") for c in cmd if c]
        if any(w.endswith(("scope-engine", "mpiexec", "hydra_pmi_proxy")) for w in words[:2]) or words[1:3] == [
            "-m",
            "scope",
        ]:
            procs.add(f"{pid} {' '.join(words)[:80]}")
    return files, procs


def main() -> int:
    rows, data, held, total, failed = [], {}, 0, 0, []
    files0, procs0 = leftovers()
    with tempfile.TemporaryDirectory() as tmp:
        for i, (group, ids) in enumerate(CORPUS):
            print(f"{group} ...", file=sys.stderr, flush=True)
            got = run_group(ids, Path(tmp) / f"{i}.xml")
            ok = sum(v == "passed" for v in got.values())
            ran = sum(v != "skipped" for v in got.values())
            skipped = len(got) - ran
            held, total = held + ok, total + ran
            failed += [k for k, v in got.items() if v == "failed"]
            rows.append(f"| {group} | {ok} | {ran} | {skipped} |")
            data[group] = got
    files1, procs1 = leftovers()
    left_files, left_procs = sorted(files1 - files0), sorted(procs1 - procs0)
    lines = [
        "Every case of the bad-input, damage, signal and fault corpus, run through pytest (`bench/corpus.py`).",
        "",
        "| group | held | total | skipped here |",
        "|---|---|---|---|",
        *rows,
        "",
        f"**Held: {held}/{total}.**",
        *([""] + [f"- failed: `{k}`" for k in failed] if failed else []),
        "",
        f"Left behind by the whole corpus: {len(left_files)} shared-memory segments or hydra files "
        f"({', '.join(f'`{x}`' for x in (*LEFTOVER_GLOBS, TEMP_FOLDERS))}) and {len(left_procs)} processes "
        "of scope, mpiexec or the "
        "engine that were not there before it." + "".join(f"\n- left: `{x}`" for x in left_files + left_procs),
        "",
        "Reproduce: .venv/bin/python bench/corpus.py",
    ]
    write("corpus", "The hostile-but-fair corpus (issues 21, 29, 44, 58, 69)", lines,
          {"held": held, "total": total, "cases": data, "left": left_files + left_procs})  # fmt: skip
    return 0 if not failed and not left_files and not left_procs else 1


if __name__ == "__main__":
    raise SystemExit(main())
