"""The fast layer's straight-line runner (naivegraph.fast.fastrun) gives what the
readable plan gives: the same bits, the same errors, the same commit semantics."""

from __future__ import annotations

import weakref

import numpy as np
import pytest
from default_dtype import float64_default
from fast_switch import both_ways, fast_layer_on

import naivegraph.static as ns
from naivegraph import fast

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)  # they compare on with off
# numpy float64 data, compared bit for bit with the fast layer on and off:
# placeholders and Python floats in float64 too (the default dtype is float32)
pytestmark = [pytestmark, pytest.mark.usefixtures(float64_default.__name__)]


def test_reference_example_gives_the_same_bits_with_the_layer_on_and_off():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2, 2))
        w1, w2, w3 = ns.Variable(2.0, name="w1"), ns.Variable(3.0, name="w2"), ns.Variable(4.0)
        l1 = x * w1
        loss = ns.mean((l1 + w2) * (l1 * w3))
        grads = ns.gradients(loss, [w1, w2, w3])
    f = g.compile([x], [loss, *grads])
    on, off = both_ways(f, np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert [a.tobytes() for a in on] == [b.tobytes() for b in off]
    assert [float(a) for a in on] == [180.0, 150.0, 20.0, 45.0]


def test_large_elementwise_chain_written_in_place_leaves_feeds_and_variables_untouched():
    feed = np.linspace(-1.0, 1.0, 8192)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None,))
        w = ns.Variable(np.full(8192, 0.5), name="w")
        y = ((x * w + x) - w) * x  # every intermediate dies at its only reader
    f = g.compile([x], [y])
    before = feed.copy(), w.value.copy()
    on, off = both_ways(f, feed)
    assert on[0].tobytes() == off[0].tobytes()
    np.testing.assert_array_equal(feed, before[0])
    np.testing.assert_array_equal(w.value, before[1])


def test_updates_read_the_old_values_and_are_stored_together():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3))
        w = ns.Variable(np.ones((3, 4096)), name="w")
        v = ns.Variable(np.zeros(4096), name="v")
        loss = ns.sum(x @ w)
        dw, dv = ns.gradients(loss + ns.sum(v), [w, v])
    f = g.compile([x], [loss], updates=[(w, w - 0.5 * dw), (v, v + ns.sum(w))])
    (loss_value,) = f(np.ones((2, 3)))
    assert float(loss_value) == 6 * 4096
    np.testing.assert_array_equal(w.value, np.zeros((3, 4096)))  # 1 - 0.5 * 2
    np.testing.assert_array_equal(v.value, np.full(4096, 3.0 * 4096))  # the old w's sum


def test_a_failing_step_names_its_node_and_changes_no_variable():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3))
        w = ns.Variable(np.ones((3, 2)), name="w")
        y = x @ w
    f = g.compile([x], [y], updates=[(w, w * 2.0)])
    bad = ns.Graph()
    with bad:
        a = ns.placeholder("a", shape=(None, None))
        b = ns.placeholder("b", shape=(None, None))
        c = a @ b
    h = bad.compile([a, b], [c])
    with pytest.raises(ValueError, match=r"while running node 'matmul_1' \(matmul\)"):
        h(np.ones((2, 3)), np.ones((2, 3)))
    with fast.disabled(), pytest.raises(ValueError, match=r"while running node 'matmul_1'"):
        h(np.ones((2, 3)), np.ones((2, 3)))
    f(np.ones((1, 3)))
    np.testing.assert_array_equal(w.value, np.full((3, 2), 2.0))


def test_results_never_alias_a_variable_or_a_feed():
    feed = np.arange(4096.0)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(4096,))
        w = ns.Variable(np.ones(4096), name="w")
        view = ns.reshape(w, (64, 64))
    f = g.compile([x], [x, w, view])
    got_x, got_w, got_view = f(feed)
    for result in (got_x, got_w, got_view):
        result[...] = -1.0
    assert feed[1] == 1.0 and w.value[0] == 1.0


def _training_step(w_init: np.ndarray, fetch_gradient: bool = True):
    """A linear least-squares step with an in-graph update; its weight gradient is a
    matrix product of the weights' shape."""
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, w_init.shape[0]))
        w = ns.Variable(w_init.copy(), name="w")
        loss = ns.sum((x @ w) ** 2)
        (dw,) = ns.gradients(loss, [w])
    fetches = [loss, dw] if fetch_gradient else [loss]
    return g.compile([x], fetches, updates=[(w, w - 0.01 * dw)]), w


def test_training_steps_alternate_between_two_weight_arrays_with_the_same_bits_as_the_plan():
    rng = np.random.default_rng(0)
    w_init, feed = rng.standard_normal((128, 64)), rng.standard_normal((16, 128))
    step, w = _training_step(w_init, fetch_gradient=False)
    readable, w_readable = _training_step(w_init, fetch_gradient=False)
    seen = []  # weak references: holding the arrays would rightly stop their reuse
    for _ in range(6):
        on = step(feed)
        with fast.disabled():
            off = readable(feed)
        assert [a.tobytes() for a in on] == [b.tobytes() for b in off]
        assert w.value.tobytes() == w_readable.value.tobytes()
        seen.append(weakref.ref(w.value))
    # from the second step on, the gradient lands in the weights the step before replaced
    assert seen[5]() is seen[3]() is seen[1]() is not None
    assert seen[4]() is seen[2]() is not None and seen[2]() is not seen[1]()


def test_old_weights_the_user_still_holds_are_never_overwritten():
    rng = np.random.default_rng(1)
    step, w = _training_step(rng.standard_normal((128, 64)))
    feed = rng.standard_normal((16, 128))
    step(feed)
    kept, kept_row = w.value, w.value[0]
    expected, expected_row = kept.copy(), kept_row.copy()
    for _ in range(4):
        step(feed)
    np.testing.assert_array_equal(kept, expected)
    np.testing.assert_array_equal(kept_row, expected_row)


def test_a_fetched_gradient_is_not_overwritten_by_later_steps():
    rng = np.random.default_rng(2)
    step, _ = _training_step(rng.standard_normal((128, 64)))
    feed = rng.standard_normal((16, 128))
    step(feed)
    _, first = step(feed)
    expected = first.copy()
    for _ in range(4):
        step(feed)
    np.testing.assert_array_equal(first, expected)


@pytest.mark.parametrize(
    "dtype, result", [(np.float32, np.float32), (np.int64, np.float64), (np.float64, np.float64)]
)
def test_a_python_number_times_a_dying_array_keeps_torchs_result_dtype(dtype, result):
    feed = np.arange(8192).astype(dtype)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None,), dtype=dtype)
        y = (x + x) * 0.5  # x + x dies at the product: written in place when dtypes allow
    f = g.compile([x], [y])
    on, off = both_ways(f, feed)
    assert on[0].dtype == off[0].dtype == result
    assert on[0].tobytes() == off[0].tobytes()
    np.testing.assert_array_equal(on[0], feed.astype(result))
