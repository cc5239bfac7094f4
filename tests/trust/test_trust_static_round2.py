"""Static mode, round 2: losses with broadcasting, runs and assigns, optimisation that
keeps IEEE results bit for bit, feeds that refuse unsafe casts, no shared storage,
modes that do not mix, and check_numerics.

Each test names the behaviour it pins; torch is the oracle where it has the call.
"""

import warnings

import numpy as np
import pytest

import naivegraph as ng
import naivegraph.static as ns


# -- 8c: mse_loss with a broadcast target averages over the broadcast shape -----------
def _mse_broadcast_graph():
    with ns.Graph() as g:
        w = ns.Variable([1.0, 2.0, 3.0], name="w")
        target = ns.constant(np.zeros((2, 3)))
        loss = ns.mse_loss(w, target)
        dw, = ns.gradients(loss, [w])
    return g, w, loss, dw


def test_mse_loss_broadcast_target_numeric_gradient_matches_torch():
    torch = pytest.importorskip("torch")
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch warns about the broadcast
        expected = torch.nn.functional.mse_loss(x, torch.zeros(2, 3, dtype=torch.float64))
    expected.backward()
    g, w, loss, _ = _mse_broadcast_graph()
    g.forward()
    g.backward(loss)
    assert float(loss.value) == pytest.approx(expected.item())
    np.testing.assert_allclose(w.grad, x.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(w.grad, [2 / 3, 4 / 3, 2.0], rtol=1e-12)


def test_mse_loss_broadcast_target_symbolic_gradient_matches_torch():
    g, w, loss, dw = _mse_broadcast_graph()
    value, grad = g.compile([], [loss, dw])()
    assert float(value) == pytest.approx(14 / 3)
    np.testing.assert_allclose(grad, [2 / 3, 4 / 3, 2.0], rtol=1e-12)


def test_mse_loss_broadcast_input_gradient_sums_over_the_broadcast_axis():
    with ns.Graph() as g:
        w = ns.Variable([[1.0], [2.0]], name="w")   # (2, 1) against a (2, 3) target
        loss = ns.mse_loss(w, np.zeros((2, 3)), reduction="sum")
    g.forward()
    g.backward(loss)
    np.testing.assert_allclose(w.grad, [[6.0], [12.0]])  # 3 columns x 2 x w
