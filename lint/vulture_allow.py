"""Names vulture cannot see used (make lint: `vulture src/scope lint/vulture_allow.py`), each
with why it is not dead.  vulture reads this file as code that uses them."""

# main.py's command table loads each command's module and calls its handler by name
cmd_compare, cmd_export, cmd_report, cmd_import, cmd_modules, cmd_predict  # noqa: B018
cmd_run, cmd_list, cmd_build, cmd_testbed, cmd_doctor, cmd_show, cmd_runs, cmd_layers  # noqa: B018
cmd_submit, cmd_tune, cmd_push, cmd_hub, cmd_history, cmd_sim  # noqa: B018
# SQLAlchemy calls the hub's connection hooks by the events they listen for (hub/db.py)
_sqlite, _begin  # noqa: B018
# PEP 562: the package's module-level __getattr__ answers scope.open (an earlier name)
__getattr__  # noqa: B018
# the Python API (docs/analysis.md): Results.tidy, Results.samples_frame, store.samples_of;
# a Hockney fit's prediction at a size (tests/test_hockney.py)
tidy, samples_frame, samples_of, predict_us  # noqa: B018
# the clock library's Python binding (docs/clock-library.md), used by mpi4py programs such as
# examples/clock/stamp.py (tests/test_clock_library.py runs it)
local_ns, global_ns, sync, sync_seconds, events_open, events_close  # noqa: B018
# the newest run's judgement of one series alone (analysis/history.py: what detect's alarm is,
# for a caller with one series; tests/test_history.py asks it)
newest  # noqa: B018
# the x tick labels a figure still has overlapping (views/figfit.py; the report's test asks it of
# every figure of the baseline report, after fit_labels)
label_clashes  # noqa: B018
# prometheus_client calls a registered collector's collect() at every scrape (hub/metrics.py)
collect  # noqa: B018
# the version-1 document a scope before bundle version 2 wrote (store/bundle.py): what the tests
# and benches make to show that a hub and `scope import` still read an older scope's push
dump  # noqa: B018
