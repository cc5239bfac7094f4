"""Op-table numerics of the second trust round, both modes, checked against torch 2.13."""

import numpy as np
import pytest

import naivegraph as ng
import naivegraph.static as ns

torch = pytest.importorskip("torch")

BASES = [0.0, 0.0, 0.0, 0.0, 2.0]
EXPONENTS = [0.0, 1.0, 2.0, 0.5, 0.0]


def _torch_pow_grads():
    x = torch.tensor(BASES, dtype=torch.float64, requires_grad=True)
    y = torch.tensor(EXPONENTS, dtype=torch.float64, requires_grad=True)
    (x ** y).sum().backward()
    return x.grad.numpy(), y.grad.numpy()


def test_pow_gradients_at_zero_base_match_torch_in_dynamic_mode():
    x = ng.tensor(BASES, requires_grad=True)
    y = ng.tensor(EXPONENTS, requires_grad=True)
    (x ** y).sum().backward()
    want_x, want_y = _torch_pow_grads()
    np.testing.assert_array_equal(x.grad.numpy(), want_x)
    np.testing.assert_array_equal(y.grad.numpy(), want_y)
    assert x.grad.numpy()[0] == 0.0  # d/dx x**0 at x = 0: not nan


def test_pow_gradients_at_zero_base_match_torch_in_static_mode():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(5,))
        y = ns.placeholder("y", shape=(5,))
        dx, dy = ns.gradients(ns.sum(x ** y), [x, y])
    got_x, got_y = g.compile([x, y], [dx, dy])(np.array(BASES), np.array(EXPONENTS))
    want_x, want_y = _torch_pow_grads()
    np.testing.assert_array_equal(got_x, want_x)
    np.testing.assert_array_equal(got_y, want_y)


@pytest.mark.parametrize("lib", [ng, torch], ids=["naivegraph", "torch"])
def test_where_refuses_a_float_condition(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor"):
        lib.where(lib.tensor([2.0, 0.0]), x, lib.tensor(5.0))


def test_static_where_refuses_a_float_condition_at_build_and_adds_no_node():
    g = ns.Graph()
    with g:
        c = ns.placeholder("c", shape=(2,))
        x = ns.placeholder("x", shape=(2,))
        before = len(g.nodes)
        with pytest.raises(RuntimeError, match="where expected condition to be a boolean"):
            ns.where(c, x, 5.0)
        assert len(g.nodes) == before
