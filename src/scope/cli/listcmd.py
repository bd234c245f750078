"""scope list: the tests the engine has (its descriptors), their parameters and the OMB
programs each reproduces; the tests earlier runs stored where no engine can be built here."""

from __future__ import annotations

import sys

from scope.catalog.osu import osu_settings, peer_names
from scope.cli.common import stored_descriptors
from scope.errors import ScopeError
from scope.model import TestInfo
from scope.run.toolchain import engine_path, find_toolchain, list_tests
from scope.views.jsonout import dumps


def cmd_list(args) -> int:
    try:
        tests = list_tests(engine_path(find_toolchain(args.mpicc), quiet=True))
    except ScopeError as e:  # no MPI or compiler here: the tests earlier runs stored, if any
        stored = stored_descriptors(args)
        if not stored:
            raise
        print(f"scope: warning [engine]: {e.message}; the tests earlier runs stored are listed", file=sys.stderr)
        tests = stored
    if args.osu:
        return list_osu(tests, args.json)
    if args.json:
        print(dumps(tests))
        return 0
    for t in tests:
        print(f"{t['name']:<16} {t['summary']}")
        print(
            f"{'':<16} measures: {t['measures']}; at least {t['min_ranks']} ranks"
            + (f"; sizes {t['default_sizes']} unless --sizes" if t.get("default_sizes") else "")
            + ("; swept over --sizes" if t["sized"] and not t.get("default_sizes") else "")
        )
        for p in t["params"]:
            dom = (
                f"{p['min']}..{p['max']}"
                if p["type"] == "int"
                else "yes|no"
                if p["type"] == "bool"
                else "|".join(p["choices"])
            )
            print(f"{'':<18}{p['name']:<10} {dom:<30} default {p['default']}: {p['help']}")
    return 0


def list_osu(tests: list[dict], as_json: bool) -> int:
    """`scope list --osu`: every OMB 7.4 CPU program, the SCOPE test and setting with its
    definition, or why there is none."""
    rows = osu_settings(peer_names([TestInfo.of(t) for t in tests]))
    if as_json:
        print(dumps([r.as_dict() for r in rows]))
        return 0
    for r in rows:
        if r.test is None:
            print(f"{r.osu:<30} -  ({r.note})")
            continue
        setting = " ".join([r.test, *(f"-p {k}={v}" for k, v in r.params.items()),
                            *(f"--{k} {v}" for k, v in r.options.items())])  # fmt: skip
        print(f"{r.osu:<30} {setting}  ({r.note})")
    return 0
