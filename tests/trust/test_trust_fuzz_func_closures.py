"""Differential fuzzing of ``ng.func`` transforms whose function closes over tensors that
require grad, against ``torch.func`` (class ``func_closure`` of ``trust_programs``):
``grad``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian`` and a ``grad`` of a
``grad`` closing over the outer argument, evaluated at another tensor or at the
closed-over one; then ``backward`` through the result reads the closure's ``.grad``.

A transform must differentiate its own argument only, whatever else requires grad, and
its result must still carry the closed-over tensor's gradient.  Today ``ng.func``
confuses the two (issue 28, section 2: ``grad(lambda y: (x * y).sum())(x)`` gives
``2 x``, torch ``x``), which is being fixed on another branch: the module is an
``xfail(strict=False)`` until that fix lands, then the mark goes.  Hypothesis does not
shrink here (a failure is expected today and shrinking would only cost suite time).
"""

import pytest
from hypothesis import Phase, given, settings

torch = pytest.importorskip("torch")

from trust_programs import (  # noqa: E402
    FUZZ,
    _case,
    assert_same_trace,
    func_closure_cases,
    run_case_dynamic,
    run_case_torch,
)

pytestmark = pytest.mark.xfail(
    strict=False,
    reason="issue 28 section 2, perturbation confusion in ng.func: a transform also "
    "differentiates the tensors its function closes over that require grad, and the "
    "outermost transform detaches its result although a closed-over tensor requires grad "
    "(torch.func keeps that gradient); fixed on another branch, drop this mark when it lands",
)

NO_SHRINK = settings(FUZZ, phases=[Phase.explicit, Phase.reuse, Phase.generate])


def check_against_torch(case):
    want = run_case_torch(case)
    assert "raised" not in dict(want), f"the generator made a program torch rejects: {case!r}"
    assert_same_trace(run_case_dynamic(case), want, "dynamic vs torch")


@NO_SHRINK
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
