# A Spack recipe for SCOPE (`spack install scope-bench`), checked by tests/test_contrib.py against
# pyproject.toml: the same version and the same dependencies with the same lowest versions.
# SCOPE builds its engine at first use against the MPI it finds (run/toolchain.py), so the
# recipe depends on an MPI at run time and installs the Python package, which carries the
# engine's C sources.  Until SCOPE is published, point Spack at a checkout:
#     spack develop --path /path/to/scope scope-bench@0.1.0 && spack install scope-bench

from spack.package import *  # noqa: F403 (Spack's recipe API)


class ScopeBench(PythonPackage):  # noqa: F405
    """SCOPE: performance evaluation of message-passing clusters, from the wire to applications:
    the network, MPI point-to-point, collectives, one-sided, parallel I/O, kernels and NAS
    codes, measured with launches as replicates and explained with models."""

    homepage = "https://github.com/scope-bench/scope"
    git = "https://github.com/scope-bench/scope.git"

    version("0.1.0", branch="main")  # noqa: F405

    variant("parquet", default=False, description="scope export --format parquet (pyarrow)")  # noqa: F405

    depends_on("python@3.9:", type=("build", "run"))  # noqa: F405
    depends_on("py-setuptools@64:", type="build")  # noqa: F405
    depends_on("py-numpy@1.22:", type=("build", "run"))  # noqa: F405
    depends_on("py-matplotlib@3.5:", type=("build", "run"))  # noqa: F405
    depends_on("py-pandas@1.4:", type=("build", "run"))  # noqa: F405
    depends_on("py-scipy@1.9:", type=("build", "run"))  # noqa: F405
    depends_on("py-rich@12:", type=("build", "run"))  # noqa: F405
    depends_on("py-jinja2@3:", type=("build", "run"))  # noqa: F405
    depends_on("py-msgspec@0.18:", type=("build", "run"))  # noqa: F405
    depends_on("py-isal@1.6:", type=("build", "run"))  # noqa: F405
    depends_on("py-lazy-loader@0.4:", type=("build", "run"))  # noqa: F405
    depends_on("py-scipy-openblas32@0.3.27:", type=("build", "run"))  # noqa: F405
    depends_on("py-pyarrow@8:", type=("build", "run"), when="+parquet")  # noqa: F405
    # the engine is compiled at first use with the MPI's wrapper and make
    depends_on("mpi", type="run")  # noqa: F405
    depends_on("gmake", type="run")  # noqa: F405

    def setup_run_environment(self, env):
        # the MPI this package was concretised with is the one SCOPE measures
        env.set("MPICC", self.spec["mpi"].mpicc)
