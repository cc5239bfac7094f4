"""Differential fuzzing of ``ng.func`` transforms whose function closes over tensors that
require grad, against ``torch.func`` (class ``func_closure`` of ``random_programs``):
``grad``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian`` and a ``grad`` of a
``grad`` closing over the outer argument, evaluated at another tensor or at the
closed-over one; then ``backward`` through the result reads the closure's ``.grad``.

A transform must differentiate its own argument only, whatever else requires grad, and
its result must still carry the closed-over tensor's gradient: a transform that confused
the two (``grad(lambda y: (x * y).sum())(x)`` giving ``2 x``, torch ``x``) fails here.
"""

import pytest
from hypothesis import given

torch = pytest.importorskip("torch")

from random_programs import (  # noqa: E402
    FUZZ,
    _case,
    assert_same_trace,
    func_closure_cases,
    run_case_dynamic,
    run_case_torch,
)


def check_against_torch(case):
    want = run_case_torch(case)
    assert "raised" not in dict(want), f"the generator made a program torch rejects: {case!r}"
    assert_same_trace(run_case_dynamic(case), want, "dynamic vs torch")


@FUZZ
@given(case=func_closure_cases())
def test_fuzz_func_transforms_over_closures_that_require_grad_match_torch(case):
    check_against_torch(case)


def test_grad_of_a_closure_evaluated_at_the_closed_over_tensor_matches_torch():
    # the reproducer: grad(lambda y: (x * y).sum())(x) is x in torch
    check_against_torch(
        _case("func_closure", transform="grad", body="mul", at="closure", size=3, seed=0)
    )


def test_nested_grad_closing_over_the_outer_argument_matches_torch():
    check_against_torch(
        _case("func_closure", transform="nested_grad", body="mul", at="other", size=2, seed=0)
    )
