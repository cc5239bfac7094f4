"""The reference notes' examples in static mode: build first, values only after a run."""

import numpy as np
import pytest
from default_dtype import float64_default

import naivegraph.static as ns

# finite differences and exact figures of the reference examples need float64:
# placeholders and Python floats in float64 too (the default dtype is float32)
pytestmark = pytest.mark.usefixtures(float64_default.__name__)


def build_reference():
    """l1 = x*w1; l2 = l1 + w2; l3 = l1*w3; l4 = l2*l3; loss = mean(l4)."""
    g = ns.Graph()
    with g:
        x = ns.placeholder("input", (2, 2))
        w1 = ns.Variable(2.0, name="w1")
        w2 = ns.Variable(3.0, name="w2")
        w3 = ns.Variable(4.0, name="w3")
        l1 = x * w1
        l2 = l1 + w2
        l3 = l1 * w3
        l4 = l2 * l3
        loss = ns.mean(l4)
    return g, x, (w1, w2, w3), (l1, l2, l3, l4), loss


def expected(x):
    """Hand-derived values: with l1 = 2x, loss = mean((2x + 3) * 8x) = mean(16x^2 + 24x).

    dloss/dw1 = mean(x * (l3 + l2 * w3)) = mean(x * (8x + 4(2x + 3))) = mean(16x^2 + 12x)
    dloss/dw2 = mean(l3) = mean(8x)
    dloss/dw3 = mean(l2 * l1) = mean((2x + 3) * 2x) = mean(4x^2 + 6x)
    """
    return (
        np.mean(16 * x**2 + 24 * x),
        np.mean(16 * x**2 + 12 * x),
        np.mean(8 * x),
        np.mean(4 * x**2 + 6 * x),
    )


def test_expected_numbers_match_the_notes_for_ones_input():
    assert expected(np.ones((2, 2))) == (40.0, 28.0, 8.0, 10.0)


def test_values_are_none_until_forward_then_loss_is_40():
    g, x, ws, ls, loss = build_reference()
    assert all(n.value is None for n in (*ls, loss))
    g.forward({x: np.ones((2, 2))})
    assert float(loss.value) == 40.0
    assert ls[0].value.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_backward_fills_variable_grads_28_8_10():
    g, x, (w1, w2, w3), ls, loss = build_reference()
    assert w1.grad is None
    g.forward(input=np.ones((2, 2)))
    g.backward(loss)
    assert (float(w1.grad), float(w2.grad), float(w3.grad)) == (28.0, 8.0, 10.0)


def test_retained_intermediate_grads_match_the_notes():
    g, x, ws, (l1, l2, l3, l4), loss = build_reference()
    l1.retain_grad()
    l4.retain_grad()
    g.forward(input=np.ones((2, 2)))
    g.backward(loss)
    assert l1.grad.tolist() == [[7.0, 7.0], [7.0, 7.0]]
    assert l4.grad.tolist() == [[0.25, 0.25], [0.25, 0.25]]
    assert l2.grad is None  # not retained


def test_symbolic_gradients_give_the_same_numbers():
    g, x, ws, ls, loss = build_reference()
    with g:
        grads = ns.gradients(loss, list(ws))
    assert all(n.is_gradient for n in grads)
    assert all(n.value is None for n in grads)
    results = g.forward(input=np.ones((2, 2)), fetches=[loss, *grads])
    assert [float(v) for v in results] == [40.0, 28.0, 8.0, 10.0]


@pytest.mark.parametrize("optimize", [True, False])
def test_compiled_function_fed_three_inputs(optimize):
    g, x, ws, ls, loss = build_reference()
    grads = ns.gradients(loss, list(ws))
    f = g.compile(inputs=[x], outputs=[loss, *grads], optimize=optimize)
    inputs = [np.ones((2, 2)), 2 * np.ones((2, 2)), np.array([[1.0, 2.0], [0.0, -1.0]])]
    # 2*ones: loss = 16*4 + 24*2 = 112; dw1 = 64 + 24 = 88; dw2 = 16; dw3 = 16 + 12 = 28.
    assert [float(v) for v in f(inputs[1])] == [112.0, 88.0, 16.0, 28.0]
    for array in inputs:
        got = [float(v) for v in f(array)]
        assert got == pytest.approx([float(e) for e in expected(array)], rel=1e-12)


def test_compiled_function_sees_variable_assign():
    g, x, (w1, w2, w3), ls, loss = build_reference()
    f = g.compile([x], [loss])
    w2.assign(0.0)  # loss = mean(2x * 8x) = 16 for ones
    assert float(f(np.ones((2, 2)))[0]) == 16.0


def test_note_static_sum_has_no_value_until_forward():
    g = ns.Graph()
    with g:
        a = ns.Variable(1.0, name="a")
        b = ns.Variable(2.0, name="b")
        c = a + b
    assert c.value is None
    g.forward()
    assert float(c.value) == 3.0


def test_backward_replaces_grads_instead_of_accumulating():
    g, x, (w1, w2, w3), ls, loss = build_reference()
    for _ in range(2):
        g.forward(input=np.ones((2, 2)))
        g.backward(loss)
    assert float(w1.grad) == 28.0


def test_jacobian_of_vector_function_row_by_row():
    # f(x) = (x0 * x1, sin(x0) + x1**2): J = [[x1, x0], [cos(x0), 2 x1]].
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2,))
        f = ns.stack([x[0] * x[1], ns.sin(x[0]) + x[1] ** 2])
        rows = [ns.gradients(f, [x], grad_ys=[np.eye(2)[i]])[0] for i in range(2)]
        jacobian = ns.stack(rows)
    point = np.array([0.5, 3.0])
    (jac,) = g.forward(x=point, fetches=[jacobian])
    np.testing.assert_allclose(jac, [[3.0, 0.5], [np.cos(0.5), 6.0]], rtol=1e-12)


def test_gradient_descent_converges_to_minimum():
    # (x - 1)^2 + 2 (y + 2)^2 has its minimum at (1, -2).
    g = ns.Graph()
    with g:
        x = ns.Variable(5.0, name="x")
        y = ns.Variable(5.0, name="y")
        f = (x - 1.0) ** 2 + 2.0 * (y + 2.0) ** 2
    for _ in range(200):
        g.forward(fetches=[f])
        g.backward(f)
        x.assign(x.value - 0.1 * x.grad)
        y.assign(y.value - 0.1 * y.grad)
    assert float(x.value) == pytest.approx(1.0, abs=1e-9)
    assert float(y.value) == pytest.approx(-2.0, abs=1e-9)


def test_second_derivative_of_cube():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=())
        (dy,) = ns.gradients(x**3, [x])
        (d2y,) = ns.gradients(dy, [x])
        (d3y,) = ns.gradients(d2y, [x])
    f = g.compile([x], [dy, d2y, d3y])
    assert [float(v) for v in f(np.array(2.0))] == [12.0, 12.0, 6.0]


def test_second_derivative_of_x_squared_times_exp():
    # d/dx x^2 e^x = (x^2 + 2x) e^x;  d2 = (x^2 + 4x + 2) e^x
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(3,))
        y = ns.sum(x**2 * ns.exp(x))
        (dy,) = ns.gradients(y, [x])
        (d2y,) = ns.gradients(ns.sum(dy), [x])
    v = np.array([-1.0, 0.5, 2.0])
    got_d, got_d2 = g.compile([x], [dy, d2y])(v)
    np.testing.assert_allclose(got_d, (v**2 + 2 * v) * np.exp(v), rtol=1e-12)
    np.testing.assert_allclose(got_d2, (v**2 + 4 * v + 2) * np.exp(v), rtol=1e-12)


def test_gradient_of_unconnected_x_is_none():
    with ns.Graph():
        x = ns.placeholder("x", shape=())
        z = ns.placeholder("z", shape=())
        assert ns.gradients(x * 2.0, [z]) == [None]
