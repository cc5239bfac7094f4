"""The classic TensorFlow 1 two-layer network, written line for line in naivegraph.static.

Mirrors jcjohnson/pytorch-examples ``tf_two_layer_net.py`` (the TF1 program PyTorch's
"Learning PyTorch with Examples" tutorial puts beside its autograd version): a
placeholder with an unknown batch size, ``tf.gradients``, ``w.assign(w - lr * grad)``
and ``sess.run([loss, new_w1, new_w2], feed_dict=...)`` in a loop.  The same model
trained in dynamic mode (the tutorial's ``two_layer_net_autograd.py``, with the same
``maximum`` as the TF program) takes the same steps, in float32 as the original (and
as both modes' default dtype) and bit for bit.
"""

import numpy as np
import pytest

import naivegraph as ng
import naivegraph.static as ns

N, D_IN, H, D_OUT = 64, 1000, 100, 10
LEARNING_RATE = 1e-6


def build_tf1_program(w1_init, w2_init):
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(None, D_IN))
        y = ns.placeholder("y", shape=(None, D_OUT))
        w1 = ns.Variable(w1_init, name="w1")
        w2 = ns.Variable(w2_init, name="w2")
        h = ns.matmul(x, w1)
        h_relu = ns.maximum(h, ns.constant(np.zeros(1, np.float32)))
        y_pred = ns.matmul(h_relu, w2)
        loss = ns.sum((y - y_pred) ** 2.0)
        grad_w1, grad_w2 = ns.gradients(loss, [w1, w2])
        new_w1 = w1.assign(w1 - LEARNING_RATE * grad_w1)
        new_w2 = w2.assign(w2 - LEARNING_RATE * grad_w2)
    return g, (x, y, w1, w2, loss, new_w1, new_w2)


def dynamic_losses(w1_init, w2_init, x_value, y_value, steps):
    w1 = ng.tensor(w1_init, requires_grad=True)
    w2 = ng.tensor(w2_init, requires_grad=True)
    x, y = ng.tensor(x_value), ng.tensor(y_value)
    losses = []
    for _ in range(steps):
        y_pred = ng.maximum(x.mm(w1), ng.zeros(1)).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with ng.no_grad():
            w1 -= LEARNING_RATE * w1.grad
            w2 -= LEARNING_RATE * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    return losses, w1.detach().numpy(), w2.detach().numpy()


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return tuple(
        rng.standard_normal(shape).astype(np.float32)  # tf.random_normal's float32
        for shape in ((D_IN, H), (H, D_OUT), (N, D_IN), (N, D_OUT))
    )


def test_tf1_loop_with_assign_nodes_takes_the_dynamic_modes_steps(data):
    w1_init, w2_init, x_value, y_value = data
    g, (x, y, w1, w2, loss, new_w1, new_w2) = build_tf1_program(w1_init, w2_init)
    static_losses = []
    for _ in range(30):
        loss_value, _, _ = g.run([loss, new_w1, new_w2], feed_dict={x: x_value, y: y_value})
        static_losses.append(float(loss_value))
    expected, w1_dyn, w2_dyn = dynamic_losses(w1_init, w2_init, x_value, y_value, 30)
    np.testing.assert_allclose(static_losses, expected, rtol=1e-10)
    np.testing.assert_allclose(w1.value, w1_dyn, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w2.value, w2_dyn, rtol=1e-10, atol=1e-12)
    assert static_losses[-1] < static_losses[0] / 2  # it learns


def test_the_loss_fetched_with_the_updates_is_computed_before_them(data):
    w1_init, w2_init, x_value, y_value = data
    g, (x, y, w1, w2, loss, new_w1, new_w2) = build_tf1_program(w1_init, w2_init)
    before = float(g.run(loss, {x: x_value, y: y_value}))
    loss_value, w1_after, _ = g.run([loss, new_w1, new_w2], {x: x_value, y: y_value})
    assert float(loss_value) == before
    np.testing.assert_array_equal(w1_after, w1.value)  # the assign node's value is the new one
    assert not np.array_equal(w1.value, w1_init)
    assert float(g.run(loss, {x: x_value, y: y_value})) < before


@pytest.mark.parametrize("batch", [1, 64, 1000])
def test_one_compiled_step_serves_every_batch_size(data, batch):
    w1_init, w2_init, _, _ = data
    g, (x, y, w1, w2, loss, new_w1, new_w2) = build_tf1_program(w1_init, w2_init)
    step = g.compile([x, y], [loss], updates=[(w1, new_w1.inputs[1]), (w2, new_w2.inputs[1])])
    rng = np.random.default_rng(batch)
    x_value = rng.standard_normal((batch, D_IN)).astype(np.float32)
    y_value = rng.standard_normal((batch, D_OUT)).astype(np.float32)
    (loss_value,) = step(x_value, y_value)
    expected, w1_dyn, w2_dyn = dynamic_losses(w1_init, w2_init, x_value, y_value, 1)
    assert float(loss_value) == pytest.approx(expected[0], rel=1e-12)
    np.testing.assert_allclose(w1.value, w1_dyn, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w2.value, w2_dyn, rtol=1e-10, atol=1e-12)


def test_symbolic_gradients_of_an_unknown_batch_read_sizes_at_run_time():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3))
        b = ns.Variable(np.zeros(3), name="b")
        loss = ns.mean(x + b) + ns.sum(x.mean(dim=0) * b)
        (grad_b,) = ns.gradients(loss, [b])
    f = g.compile([x], [grad_b])
    for batch in (1, 5):
        data = np.arange(3.0 * batch).reshape(batch, 3)
        # d/db of mean(x + b) is 1 / 3 per entry; of sum(mean(x, 0) * b), mean(x, 0)
        np.testing.assert_allclose(f(data)[0], 1 / 3 + data.mean(axis=0), rtol=1e-15)
