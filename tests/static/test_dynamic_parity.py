"""Static and dynamic mode share one op table, so they agree on values and gradients."""

import numpy as np
import pytest

import naivegraph.static as ns

ng = pytest.importorskip("naivegraph")
if not hasattr(ng, "tensor"):
    pytest.skip("dynamic mode (naivegraph.tensor) is not available yet", allow_module_level=True)

PROGRAMS = {
    "reference": lambda m, x, w: m.mean((x * w + 3.0) * (x * w * 4.0)),
    "activations": lambda m, x, w: m.sum(m.sigmoid(x) * m.tanh(w) + m.relu(x - w)),
    "reductions": lambda m, x, w: m.max(x * w) + m.sum(m.mean(x, dim=0) * m.min(w)),
    # along a dim, both modes return (values, indices), as torch does
    "max_dim": lambda m, x, w: m.sum(m.max(x * w, dim=1)[0] * m.min(w, 1).values),
    "matmul_softmax": lambda m, x, w: m.sum(m.softmax(x @ m.transpose(w, 0, 1), 1) ** 2),
    "shapes": lambda m, x, w: m.sum(m.reshape(m.permute(x, 1, 0), 6) * m.flatten(w)),
    "cat_stack": lambda m, x, w: m.sum(m.cat([x, w], dim=0) ** 3) + m.sum(m.stack([x, w]).exp()),
    "clamp_where": lambda m, x, w: m.sum(m.where(x > w, m.clamp(x, -0.5, 0.5), w * w)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])  # float32: both modes' default
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_static_matches_dynamic_values_and_gradients_bit_for_bit(name, dtype):
    program = PROGRAMS[name]
    rng = np.random.default_rng(7)
    x_value, w_value = (rng.normal(size=(2, 3)).astype(dtype) for _ in range(2))

    x_dyn = ng.tensor(x_value, requires_grad=True)
    w_dyn = ng.tensor(w_value, requires_grad=True)
    loss_dyn = program(ng, x_dyn, w_dyn)
    loss_dyn.backward()

    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2, 3), dtype=None if dtype is np.float32 else dtype)
        w = ns.Variable(w_value, name="w")
        loss = program(ns, x, w)
        dx, dw = ns.gradients(loss, [x, w])
    got_loss, got_dx, got_dw = g.compile([x], [loss, dx, dw])(x_value)

    assert got_loss.dtype == got_dx.dtype == got_dw.dtype == loss_dyn.dtype == dtype
    np.testing.assert_array_equal(got_loss, loss_dyn.detach().numpy())
    np.testing.assert_array_equal(got_dx, x_dyn.grad.numpy())
    np.testing.assert_array_equal(got_dw, w_dyn.grad.numpy())
    g.forward(x=x_value, fetches=[loss])
    g.backward(loss)
    np.testing.assert_array_equal(w.grad, w_dyn.grad.numpy())


def test_max_along_a_dim_unpacks_into_values_and_indices_in_both_modes():
    data = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    values, indices = ng.tensor(data).max(dim=1)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3))
        node_values, node_indices = x.max(dim=1)
        first = ns.argmin(x, dim=1)
    assert node_values.shape == node_indices.shape == (None,)
    got = g.forward(x=data, fetches=[node_values, node_indices, first])
    assert [a.tolist() for a in got] == [values.tolist(), indices.tolist(), [0, 1]]
