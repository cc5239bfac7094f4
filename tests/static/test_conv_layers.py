"""Convolution, pooling and batch norm in static graphs: the same ops as dynamic mode,
so the same numbers bit for bit, with symbolic gradients at any batch size; batch norm's
running statistics are refused in static mode with a message saying what to do."""

from __future__ import annotations

import numpy as np
import pytest

import naivegraph as ng
import naivegraph.static as ns

F64 = np.float64  # the weights are numpy's float64 draws: placeholders take their dtype
RNG = np.random.default_rng(5)
W = RNG.normal(size=(3, 2, 3, 3))
B = RNG.normal(size=3)
GAMMA, BETA = RNG.normal(size=3), RNG.normal(size=3)


def _network(lib, x, w, b, gamma, beta):
    h = lib.conv2d(x, w, b, stride=1, padding=1)
    h = lib.batch_norm(h, None, None, gamma, beta, training=True)
    h = lib.max_pool2d(h.relu(), 2, ceil_mode=True)
    h = lib.avg_pool2d(h, 2, padding=1, count_include_pad=False)
    return (h * h).mean()


def _dynamic(batch):
    tensors = [ng.tensor(v, requires_grad=True) for v in (batch, W, B, GAMMA, BETA)]
    loss = _network(ng.nn.functional, *tensors)
    loss.backward()
    return [loss.detach().numpy(), *(t.grad.numpy() for t in tensors[1:])]


@pytest.mark.parametrize("batch_size", [2, 5])
def test_a_conv_net_compiled_with_its_gradients_gives_dynamic_modes_numbers(batch_size):
    with ns.Graph():
        x = ns.placeholder("x", shape=(None, 2, 5, 6), dtype=F64)
        params = [
            ns.Variable(v, name=n) for v, n in zip((W, B, GAMMA, BETA), "w b gamma beta".split())
        ]
        loss = _network(ns, x, *params)
        grads = ns.gradients(loss, params)
        assert loss.shape == ()
        run = loss.graph.compile(inputs=[x], outputs=[loss, *grads])
    batch = RNG.normal(size=(batch_size, 2, 5, 6))
    for got, want in zip(run(batch), _dynamic(batch)):
        np.testing.assert_array_equal(got, want)


def test_static_shapes_are_inferred_through_the_layers():
    with ns.Graph():
        x = ns.placeholder("x", shape=(None, 2, 9, 8), dtype=F64)
        h = ns.conv2d(x, ns.Variable(RNG.normal(size=(4, 2, 3, 2))), stride=2)
        assert h.shape == (None, 4, 4, 4)
        assert ns.max_pool2d(h, 3, 1, 1).shape == (None, 4, 4, 4)
        assert ns.avg_pool2d(h, 3, ceil_mode=True).shape == (None, 4, 2, 2)


def test_batch_norm_with_fixed_statistics_runs_in_static_mode():
    mean, var = RNG.normal(size=3), RNG.uniform(0.5, 2, size=3)
    batch = RNG.normal(size=(4, 3, 2, 2))
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3, 2, 2), dtype=F64)
        out = ns.batch_norm(x, mean, var, GAMMA, BETA)
    got = g.forward(x=batch, fetches=[out])[0]
    want = ng.nn.functional.batch_norm(
        ng.tensor(batch), ng.tensor(mean), ng.tensor(var), ng.tensor(GAMMA), ng.tensor(BETA)
    )
    np.testing.assert_array_equal(got, want.numpy())


def test_batch_norm_running_statistics_in_training_are_refused_in_static_mode():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3), dtype=F64)
        before = len(g.nodes) if hasattr(g, "nodes") else None
        with pytest.raises(NotImplementedError, match="not supported in static mode") as raised:
            ns.batch_norm(x, np.zeros(3), np.ones(3), training=True)
        assert "running_mean=None" in str(raised.value) and "dynamic mode" in str(raised.value)
        if before is not None:
            assert len(g.nodes) == before


def test_a_conv_net_with_its_gradient_survives_save_and_load(tmp_path):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 2, 5, 6), dtype=F64)
        w = ns.Variable(W, name="w")
        loss = ns.sum(ns.avg_pool2d(ns.max_pool2d(ns.conv2d(x, w, padding="same"), 2), 2, 1))
        (grad,) = ns.gradients(loss, [w])
        grad.name = "grad"
    g.save(tmp_path / "net")
    loaded = ns.load(tmp_path / "net")
    batch = RNG.normal(size=(3, 2, 5, 6))
    want = g.run([loss, grad], {x: batch})
    by_name = {n.name: n for n in loaded.nodes}
    got = loaded.run([by_name[loss.name], by_name["grad"]], {by_name["x"]: batch})
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
