"""Building, running and differentiating a static graph cost work linear in its size.

Work is counted as lines of naivegraph executed (``tests/work.py``), never timed: a
chain 10x longer costs about 10x the lines when the algorithm is linear, about 100x
when it is quadratic (as the old per-node ``ancestors()`` recomputation was).
Wall-clock times are measured by ``benchmarks/bench_scale.py``.
"""

import numpy as np
import pytest
from work import growth

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.static import nodes as static_nodes

SHORT, LONG = 200, 2_000
LINEAR_BOUND = 15  # 10x longer chain: linear ~10x, quadratic ~100x


def _chain(n):
    g = ns.Graph()
    with g:
        w = ns.Variable(2.0, name="w")
        y = w
        for _ in range(n):
            y = -y
    return g, w, y


def _numeric_backward(n):
    g, w, y = _chain(n)
    g.forward(fetches=[y])
    return lambda: g.backward(y)


def _symbolic_gradients(n):
    g, w, y = _chain(n)

    def build():
        with g:
            ns.gradients(y, [w])

    return build


def _forward(n):
    g, w, y = _chain(n)
    return lambda: g.forward(fetches=[y])


@pytest.mark.parametrize(
    "prepare",
    [_numeric_backward, _symbolic_gradients, _forward],
    ids=["graph.backward", "ns.gradients", "graph.forward"],
)
def test_work_grows_linearly_with_chain_depth(prepare):
    ratio = growth(lambda n: prepare(n)(), SHORT, LONG)
    assert ratio < LINEAR_BOUND, f"{LONG} ops cost {ratio:.1f}x the work of {SHORT} ops"


def test_backward_of_a_chain_deeper_than_the_recursion_limit_with_freed_intermediates():
    g, w, y = _chain(50_000)
    g.forward(fetches=[y])  # every intermediate is freed: backward works from recorded shapes
    g.backward(y)
    assert float(y.value) == 2.0 and float(w.grad) == 1.0


def test_backward_uses_the_fed_shape_of_freed_values_of_unknown_declared_shape():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3))
        w = ns.Variable(np.ones(3), name="w")
        loss = ns.sum(-(-(x * w)))  # neg saves nothing: backward needs the run-time shapes
    g.forward(x=np.arange(12.0).reshape(4, 3), fetches=[loss])
    g.backward(loss)
    np.testing.assert_array_equal(w.grad, np.arange(12.0).reshape(4, 3).sum(axis=0))


# ---------------------------------------------------------------------------------
# Shape inference probes numpy once per kind of elementwise op, not once per node,
# and the cached answer is never wrong.
# ---------------------------------------------------------------------------------
def test_a_long_elementwise_chain_probes_numpy_once(monkeypatch):
    calls = []
    real_probe = static_nodes._probe
    monkeypatch.setattr(static_nodes, "_probe", lambda *a: calls.append(a) or real_probe(*a))
    with ns.Graph():
        x = ns.placeholder("probe_once_x", shape=(7, 5))
        y = x
        for _ in range(1_000):
            y = ns.tanh(-y)
    assert len(calls) <= 2 and y.shape == (7, 5)


def test_cached_shape_inference_still_raises_at_build_time_naming_both_shapes():
    with ns.Graph():
        a = ns.placeholder("a", shape=(2, 3))
        a + ns.placeholder("b", shape=(2, 3))  # fills the cache for add on float64 inputs
        with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 5\)"):
            a + ns.placeholder("c", shape=(4, 5))


def test_cached_dtype_tells_an_int_exponent_from_a_float_one():
    with ns.Graph():
        k = ns.placeholder("k", shape=(3,), dtype=np.int64)
        assert (k**2).dtype == np.int64
        assert (k**2.0).dtype == np.float32  # the default float, as torch
        assert (k**2).dtype == np.int64


def test_cached_dtype_keeps_numpy_weak_typing_of_python_numbers():
    with ns.Graph():
        f = ns.placeholder("f", shape=(2,), dtype=np.float32)
        i = ns.placeholder("i", shape=(2,), dtype=np.int32)
        assert (f * 2).dtype == np.float32 and (f * 2.5).dtype == np.float32
        assert (i * 2).dtype == np.int32 and (i * 2.5).dtype == np.float32  # the default
        assert (f * i).dtype == np.float32  # torch: an integer never widens a float


def test_cached_dtype_of_an_integer_times_a_python_float_follows_the_default_dtype():
    previous = ng.get_default_dtype()
    try:
        for default in (np.float64, np.float32, np.float64):
            ng.set_default_dtype(default)
            with ns.Graph() as g:
                i = ns.placeholder("i", shape=(2,), dtype=np.int32)
                y = i * 2.5
            assert y.dtype == default
            assert g.forward({i: np.array([1, 2], np.int32)}, fetches=[y])[0].dtype == default
    finally:
        ng.set_default_dtype(previous)


def test_out_of_range_python_int_is_refused_at_build_even_after_an_in_range_one():
    with ns.Graph():
        u = ns.placeholder("u", shape=(2,), dtype=np.uint8)
        assert (u + 1).dtype == np.uint8
        with pytest.raises(OverflowError, match="cannot build add"):
            u + 300


def test_elementwise_op_that_reduces_keeps_its_reduced_shape_after_caching():
    with ns.Graph():
        a = ns.placeholder("a", shape=(4, 3))
        b = ns.placeholder("b", shape=(4, 3))
        assert ns.mse_loss(a, b).shape == ()
        assert ns.mse_loss(b, a).shape == ()
