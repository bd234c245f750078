"""The pages a site reads (issue 70): what the report and compare say at a glance."""

from __future__ import annotations

import pytest

from tests.conftest import replay, run_scope


@pytest.mark.unit
def test_a_report_without_o_names_a_new_file_and_overwrites_no_other(tmp_path, monkeypatch):
    db = tmp_path / "r.db"
    replay("launches", db)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scope-report.html").write_text("the baseline's report")
    p = run_scope("report", "last", db=db)
    assert p.returncode == 0 and "wrote scope-report-run-1.html" in p.stdout, p.stderr
    assert (tmp_path / "scope-report.html").read_text() == "the baseline's report"
    assert "<html" in (tmp_path / "scope-report-run-1.html").read_text()[:500].lower()
