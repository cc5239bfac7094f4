"""Memory planning: intermediates die right after their last use."""

import tracemalloc

import numpy as np
import pytest
from default_dtype import float64_default

import naivegraph.static as ns

# the byte counts are of float64 arrays (8 bytes an element):
# placeholders and Python floats in float64 too (the default dtype is float32)
pytestmark = pytest.mark.usefixtures(float64_default.__name__)

OPS = [ns.sin, ns.cos, ns.tanh, ns.neg]  # ufuncs: each allocates exactly its output


def chain(n_ops, size):
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(size,))
        y = x
        for i in range(n_ops):
            y = OPS[i % len(OPS)](y)
    return g, x, y


def peak_bytes(run):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        result = run()
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


def test_planned_forward_of_100_op_chain_keeps_at_most_three_arrays():
    size = 10**6
    array_bytes = size * 8
    g, x, y = chain(100, size)
    feed = np.random.default_rng(0).normal(size=size)
    peak, (out,) = peak_bytes(lambda: g.forward(x=feed, fetches=[y]))
    assert peak <= 3 * array_bytes
    assert peak >= 2 * array_bytes  # one input and one output of a step are alive together
    expected = feed
    for i in range(100):
        expected = [np.sin, np.cos, np.tanh, np.negative][i % 4](expected)
    np.testing.assert_array_equal(out, expected)


def test_without_planning_every_intermediate_stays_alive():
    size = 10**5
    g, x, y = chain(100, size)
    feed = np.ones(size)
    peak, _ = peak_bytes(lambda: g.forward(x=feed, fetches=[y], free_intermediates=False))
    assert peak >= 100 * size * 8
    assert g.nodes[50].value is not None


def test_planned_run_frees_values_but_keeps_fetches():
    g, x, y = chain(5, 4)
    g.forward(x=np.ones(4), fetches=[y])
    assert [n.value is None for n in g.nodes] == [False, True, True, True, True, False]


def test_whole_graph_run_keeps_every_value_for_inspection():
    g, x, y = chain(5, 4)
    g.forward(x=np.ones(4))
    assert all(n.value is not None for n in g.nodes)


def test_values_needed_by_backward_survive_planning():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(3,))
        w = ns.Variable(np.array([1.0, 2.0, 3.0]), name="w")
        h = ns.sin(x * w)  # sin saves its input (x * w)
        loss = ns.sum(ns.exp(h))  # exp saves its output; h itself is not needed
    g.forward(x=np.ones(3), fetches=[loss])
    assert g["mul_1"].value is not None and g["exp_1"].value is not None
    assert h.value is None
    g.backward(loss)
    v = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(w.grad, np.exp(np.sin(v)) * np.cos(v), rtol=1e-14)


def test_compiled_chain_also_runs_in_bounded_memory():
    size = 10**6
    g, x, y = chain(100, size)
    f = g.compile([x], [y], optimize=False)
    feed = np.ones(size)
    f(feed)  # warm-up: first-call allocations are not the steady state
    peak, _ = peak_bytes(lambda: f(feed))
    assert peak <= 3 * size * 8
