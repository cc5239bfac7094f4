"""An op added from outside the library, with ``defop`` and ``op_function``, runs in both
modes like a built-in one; ``replace=True`` redefines it (a notebook cell run twice), and
no built-in op can be replaced.  Every op added here is removed again: other tests walk
the whole table."""

from __future__ import annotations

import numpy as np
import pytest

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.ops import OPS, F, defop, op_function

F64 = np.float64


@pytest.fixture
def softplus():
    defop(
        "softplus_t",
        lambda x: np.logaddexp(0.0, x),
        [lambda g, x, out: g * F.sigmoid(x)],
        saves=(0,),
        elementwise=True,
    )
    yield op_function("softplus_t")
    OPS.pop("softplus_t", None)


def test_an_outside_op_differentiates_a_dynamic_tensor(softplus):
    x = ng.tensor([0.0, 2.0], dtype=ng.float64, requires_grad=True)
    y = softplus(x)
    y.sum().backward()
    assert y.grad_fn.name() == "SoftplusTBackward0"
    assert x.grad.tolist() == [0.5, 1 / (1 + np.exp(-2.0))]
    assert ng.autograd.gradcheck(softplus, (x,))


def test_an_outside_op_builds_a_static_node_and_its_symbolic_gradient(softplus):
    with ns.Graph("outside") as g:
        a = ns.placeholder("a", shape=(2,), dtype=F64)
        y = softplus(a)
        (da,) = ns.gradients(y.sum(), [a])
    assert "%softplus_t_1 = softplus_t %a" in str(g)
    f = g.compile([a], [y, da])
    value, grad = f(np.array([0.0, 2.0]))
    assert value.tolist() == np.logaddexp(0.0, [0.0, 2.0]).tolist()
    assert grad.tolist() == [0.5, 1 / (1 + np.exp(-2.0))]


def test_defining_an_outside_op_twice_needs_replace(softplus):
    with pytest.raises(ValueError, match="replace=True redefines an op of your own"):
        defop("softplus_t", np.exp)
    defop("softplus_t", np.exp, [lambda g, x, out: g * out], saves=("out",), replace=True)
    assert op_function("softplus_t")(np.array(0.0)) == 1.0


def test_a_built_in_op_is_never_replaced():
    before = OPS["mul"]
    with pytest.raises(ValueError, match="built into naivegraph and cannot be replaced"):
        defop("mul", np.add, replace=True)
    with pytest.raises(ValueError, match="defined twice"):
        defop("mul", np.add)
    assert OPS["mul"] is before


def test_an_outside_op_is_drawn_in_both_modes(softplus):
    x = ng.tensor([0.0, 2.0], dtype=ng.float64, requires_grad=True)
    dynamic = ng.render(softplus(x).sum(), kind="backward")
    assert "SoftplusTBackward0" in dynamic.source
    with ns.Graph("drawn") as g:
        a = ns.placeholder("a", shape=(2,), dtype=F64)
        softplus(a).sum()
    assert "softplus_t" in ng.render(g).source
