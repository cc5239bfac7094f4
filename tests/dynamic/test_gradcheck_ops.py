"""Finite-difference checks (float64) of every differentiable op in the op table.

The cases live in ``tests/gradcheck_cases.py``.  Each is checked to first order, and to
second order by differentiating a function that itself calls
``ng.autograd.grad(..., create_graph=True)``.
"""

from __future__ import annotations

import numpy as np
import pytest
from gradcheck_cases import ALL_CASES, CASES, POOL, _make, _rng, anyv, missing_cases

import naivegraph as ng
from naivegraph.ops import OPS


def test_every_differentiable_op_has_a_gradcheck_case():
    assert missing_cases(OPS) is None, missing_cases(OPS)
    unknown = sorted(set(CASES) - set(OPS))
    assert not unknown, f"cases for ops that are not in the table: {unknown}"


def test_an_op_without_a_case_is_told_the_file_and_a_line_to_write():
    planted = {**OPS, "softplus_new": OPS["exp"], "floor_new": OPS["floor_divide"]}
    assert missing_cases(planted) == (
        "ops without a gradcheck case: ['softplus_new']. Add one per op to "
        'tests/gradcheck_cases.py, e.g. case("softplus_new", "basic", lambda x: '
        'F.softplus_new(x), ("anyv", (2, 3))) (an input of shape (2, 3) that requires grad; '
        "the kinds of input are listed above CASES)"
    )


def test_non_differentiable_ops_record_no_history():
    x = ng.tensor([1.0, -2.0, 3.0], requires_grad=True)
    for name, op in OPS.items():
        if op.differentiable:
            continue
        if name == "first_true":
            out = op.dispatch(x > 0, dim=0)
        elif name in ("logical_not", "zeros_like"):
            out = op.dispatch(x)
        elif name == "bitwise_not":  # integers and masks only
            out = op.dispatch(x > 0)
        elif name.startswith("bitwise_"):
            out = op.dispatch(x > 0, x < 2)
        elif name == "one_hot":
            out = op.dispatch(ng.tensor([0, 2, 1]), num_classes=3)
        elif name in ("argmax", "argmin", "argsort", "count"):
            out = op.dispatch(x, dim=0)
        elif name in ("floor_divide",):
            out = x // 2.0
        elif name == "class_mask":
            out = op.dispatch(ng.tensor([0, 2]), num_classes=3)
        elif name == "max_pool2d_indices":
            out = op.dispatch(x.reshape(1, 1, 3), **{**POOL, "kernel_size": (2, 2)})
        else:
            out = op.dispatch(x, x * 0 + 1)
        assert out.requires_grad is False and out.grad_fn is None, name


@pytest.mark.parametrize("cid,fn,makers", ALL_CASES, ids=[c[0] for c in ALL_CASES])
def test_gradcheck(cid, fn, makers):
    inputs = _make(cid, makers)
    out = fn(*inputs)
    assert out.requires_grad and out.dtype == np.float64
    assert ng.autograd.gradcheck(fn, inputs)


# sign's gradient is the constant 0: there is nothing to differentiate a second time.
SECOND_ORDER_CASES = [c for c in ALL_CASES if not c[0].startswith("sign-")]


@pytest.mark.parametrize(
    "cid,fn,makers", SECOND_ORDER_CASES, ids=[c[0] for c in SECOND_ORDER_CASES]
)
def test_second_derivative_gradcheck(cid, fn, makers):
    """gradcheck of x, v -> d<v, fn(x)>/dx, which calls autograd.grad(create_graph=True)."""
    inputs = _make(cid, makers)
    out_shape = fn(*inputs).shape
    v = ng.tensor(anyv(out_shape, _rng(cid + "v")), requires_grad=True)

    def vjp(*args):
        *xs, v = args
        grads = ng.autograd.grad(fn(*xs), xs, grad_outputs=v, create_graph=True, allow_unused=True)
        return ng.cat([g.reshape(-1) for g in grads if g is not None])

    assert ng.autograd.gradcheck(vjp, inputs + (v,))


def test_the_naming_table_names_only_ops_of_the_table_and_every_op_has_a_name():
    from naivegraph.ops.names import GRAD_FN_NAMES, default_name

    assert set(GRAD_FN_NAMES) <= set(OPS), sorted(set(GRAD_FN_NAMES) - set(OPS))
    for name, op in OPS.items():
        listed = GRAD_FN_NAMES.get(name)
        assert op.backward_name == (listed or default_name(name)), name
    # a listed name differs from the default: the table holds only what torch renames
    assert all(v != default_name(k) for k, v in GRAD_FN_NAMES.items() if isinstance(v, str))
