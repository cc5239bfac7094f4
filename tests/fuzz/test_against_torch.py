"""Differential fuzzing against PyTorch: the oracle for values, gradients and second derivatives.

Every random program (see ``random_programs``) runs in torch (float64), in naivegraph's
dynamic mode and as a compiled static graph; all must agree to rtol 1e-9.
Raise the example count with ``NAIVEGRAPH_FUZZ_EXAMPLES=2000``.
"""

import pytest
from hypothesis import given

torch = pytest.importorskip("torch")

from random_programs import FUZZ, assert_same_results, programs, run_dynamic, run_static, run_torch  # noqa: E402


@FUZZ
@given(program=programs())
def test_fuzz_dynamic_matches_torch(program):
    want = run_torch(program)
    assert_same_results(run_dynamic(program), want, "dynamic vs torch")


@FUZZ
@given(program=programs())
def test_fuzz_static_matches_torch(program):
    want = run_torch(program)
    assert_same_results(run_static(program, "compile-optimized"), want, "static vs torch")
