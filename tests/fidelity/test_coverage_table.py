"""TESTING.md's OpInfo coverage table is generated from the suite's own data: this test
fails when it is out of date (rewrite it with ``python tests/fidelity/coverage_table.py``)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")  # op_db's import needs it

import coverage_table  # noqa: E402


def test_testing_md_holds_the_current_opinfo_coverage_table():
    assert coverage_table.current() == coverage_table.render(), (
        "TESTING.md's OpInfo coverage table is out of date: run "
        "python tests/fidelity/coverage_table.py"
    )
