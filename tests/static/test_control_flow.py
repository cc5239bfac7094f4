"""``ns.cond`` and ``ns.while_loop``: control flow inside a static graph, with TF1's
meaning, giving dynamic mode's values and gradients.

The polynomial model mirrors pytorch/tutorials ``beginner_source/examples_nn/dynamic_net.py``
("control flow + weight sharing"): a cubic plus terms of order 4, 5, ... that reuse one
weight, the number of terms picked anew on each forward.  Dynamic mode writes the loop
in Python; static mode feeds the order and loops with ``ns.while_loop``.
"""

import numpy as np
import pytest
from default_dtype import float64_default

import naivegraph as ng
import naivegraph.static as ns

# numpy float64 data; loops and branches compared with dynamic mode and torch to 1e-12:
# placeholders and Python floats in float64 too (the default dtype is float32)
pytestmark = pytest.mark.usefixtures(float64_default.__name__)

X = np.linspace(-np.pi, np.pi, 50)
Y = np.sin(X)


def static_dynamic_net(coefficients):
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(None,))
        y = ns.placeholder("y", shape=(None,))
        order = ns.placeholder("order", shape=(), dtype=np.int64)
        a, b, c, d, e = (ns.Variable(v, name=n) for n, v in zip("abcde", coefficients))
        cubic = a + b * x + c * x**2 + d * x**3
        _, y_pred = ns.while_loop(
            lambda p, total: p < order,
            lambda p, total: (p + 1, total + e * x**p),  # the same weight e, reused
            [4, cubic],
        )
        loss = ns.sum((y_pred - y) ** 2)
        grads = ns.gradients(loss, [a, b, c, d, e])
    return g.compile([x, y, order], [loss, *grads])


def dynamic_dynamic_net(coefficients, order):
    a, b, c, d, e = (ng.tensor(v, requires_grad=True) for v in coefficients)
    x = ng.tensor(X)
    y_pred = a + b * x + c * x**2 + d * x**3
    for p in range(4, order):
        y_pred = y_pred + e * x**p
    loss = ((y_pred - ng.tensor(Y)) ** 2).sum()
    loss.backward()
    grads = [0.0 if t.grad is None else t.grad.item() for t in (a, b, c, d, e)]
    return loss.item(), grads


@pytest.mark.parametrize("order", [4, 5, 6])
def test_the_tutorials_dynamic_net_as_a_while_loop_gives_dynamic_modes_loss_and_grads(order):
    coefficients = np.random.default_rng(order).standard_normal(5)
    step = static_dynamic_net(coefficients)
    loss, *grads = step(X, Y, np.array(order))
    expected_loss, expected_grads = dynamic_dynamic_net(coefficients, order)
    assert float(loss) == pytest.approx(expected_loss, rel=1e-12)
    np.testing.assert_allclose([float(g) for g in grads], expected_grads, rtol=1e-10, atol=1e-12)
    if order == 4:  # the loop never ran: the shared weight gets zero, not a missing gradient
        assert float(grads[4]) == 0.0


def test_cond_runs_only_the_branch_its_predicate_picks():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None,))
        # reshape(2, 2) would fail on 3 values: the false branch must not run then
        y = ns.cond(ns.sum(x) > 100.0, lambda: x.reshape(2, 2).sum(), lambda: x.sum() * 10.0)
    assert float(g.run(y, x=np.array([1.0, 2.0, 3.0]))) == 60.0
    assert float(g.run(y, x=np.full(4, 50.0))) == 200.0


@pytest.mark.parametrize("seed", range(6))
def test_gradients_through_cond_equal_a_python_if_in_dynamic_mode(seed):
    rng = np.random.default_rng(seed)
    w0, x0 = rng.standard_normal(3), rng.standard_normal(3)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(3,))
        w = ns.Variable(w0, name="w")
        out = ns.cond(
            ns.sum(x * w) > 0,
            lambda: ns.sum(ns.tanh(x * w) * x),
            lambda: ns.sum(w * w) * 2.0 - ns.sum(x),
        )
        grad_w, grad_x = ns.gradients(out, [w, x])
    value, gw, gx = g.run([out, grad_w, grad_x], {x: x0})
    wt, xt = ng.tensor(w0, requires_grad=True), ng.tensor(x0, requires_grad=True)
    if (xt * wt).sum().item() > 0:
        expected = ((xt * wt).tanh() * xt).sum()
    else:
        expected = (wt * wt).sum() * 2.0 - xt.sum()
    expected.backward()
    assert float(value) == pytest.approx(expected.item(), rel=1e-12)
    np.testing.assert_allclose(gw, wt.grad.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(gx, xt.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_nested_conds_and_multiple_results():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        w = ns.Variable(2.0, name="w")
        small, big = ns.cond(
            x > 0,
            lambda: ns.cond(x > 10, lambda: (x, w * x), lambda: (w, x * x)),
            lambda: (x * 0.0, w * w),
        )
        (grad_w,) = ns.gradients(small + big, [w])
    assert [float(v) for v in g.run([small, big, grad_w], x=np.array(20.0))] == [20.0, 40.0, 20.0]
    assert [float(v) for v in g.run([small, big, grad_w], x=np.array(3.0))] == [2.0, 9.0, 1.0]
    assert [float(v) for v in g.run([small, big, grad_w], x=np.array(-1.0))] == [-0.0, 4.0, 4.0]


def test_numeric_backward_goes_through_a_loop():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        w = ns.Variable(1.5, name="w")
        _, y = ns.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * w), [0, x])
    g.forward(x=np.array(2.0))
    g.backward(y)
    assert float(y.value) == 2.0 * 1.5**3
    assert float(w.grad) == pytest.approx(3 * 2.0 * 1.5**2, rel=1e-15)


def test_a_python_bool_predicate_just_calls_the_chosen_function():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        y = ns.cond(True, lambda: x + 1.0, lambda: x - 1.0)
    assert y.op_name == "add" and float(g.run(y, x=np.array(1.0))) == 2.0


# ------------------------------------------------------------------------- bad input
def test_branches_that_disagree_in_shape_are_refused_and_the_graph_is_unchanged():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(3,))
        test = x.sum() > 0
        size = len(g.nodes)
        with pytest.raises(
            ValueError, match=r"disagree in shape for result 0: true_fn gives \(3,\)"
        ):
            ns.cond(test, lambda: x * 2.0, lambda: x.sum())
        with pytest.raises(ValueError, match="same number of values: true_fn returns 2"):
            ns.cond(test, lambda: (x, x), lambda: x)
        with pytest.raises(TypeError, match="disagree in dtype"):
            ns.cond(test, lambda: x > 0, lambda: x)
    assert len(g.nodes) == size


def test_a_predicate_that_is_not_one_boolean_is_refused():
    with ns.Graph():
        x = ns.placeholder("x", shape=(3,))
        with pytest.raises(TypeError, match="pred must be boolean"):
            ns.cond(x.sum(), lambda: x, lambda: x)
        with pytest.raises(ValueError, match="use ns.where"):
            ns.cond(x > 0, lambda: x, lambda: x)


def test_a_body_that_changes_its_loop_variables_is_refused_and_the_graph_is_unchanged():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(3,))
        size = len(g.nodes)
        with pytest.raises(ValueError, match="one value per loop variable: 2 loop_vars"):
            ns.while_loop(lambda i, v: i < 3, lambda i, v: i + 1, [0, x])
        with pytest.raises(ValueError, match=r"changes the shape of loop variable 1 from \(3,\)"):
            ns.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v.sum()), [0, x])
        with pytest.raises(TypeError, match="changes the dtype of loop variable 0 from int64"):
            ns.while_loop(lambda i, v: i < 3, lambda i, v: (i + 0.5, v), [0, x])
        with pytest.raises(TypeError, match="must return one boolean scalar"):
            ns.while_loop(lambda i, v: v > 0, lambda i, v: (i + 1, v), [0, x])
    assert len(g.nodes) == size


def test_a_loop_past_its_maximum_iterations_stops_with_an_error():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        _, y = ns.while_loop(lambda i, y: y > 0, lambda i, y: (i + 1, y + 1.0), [0, x], 50)
    with pytest.raises(RuntimeError, match="ran 50 iterations without its condition turning"):
        g.run(y, x=np.array(1.0))


def test_a_second_derivative_through_a_loop_says_it_is_not_supported():
    with ns.Graph():
        x = ns.placeholder("x", shape=())
        _, y = ns.while_loop(lambda i, y: i < 2, lambda i, y: (i + 1, y * x), [0, 1.0])
        (dy,) = ns.gradients(y, [x])
        with pytest.raises(NotImplementedError, match="second derivative through a loop"):
            ns.gradients(dy, [x])


def test_a_conds_results_are_named_result_n_not_item_n_which_reads_as_dot_item():
    with ns.Graph():
        x = ns.placeholder("x", shape=())
        first, second = ns.cond(x > 0, lambda: (x * 2.0, x + 1.0), lambda: (-x, x))
    assert (first.name, second.name) == ("result_1", "result_2")
    assert first.op.name == "result" and first.op.backward_name == "ResultBackward"
