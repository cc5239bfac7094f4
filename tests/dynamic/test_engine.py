"""The backward engine: iterative on huge graphs, frees what it no longer needs."""

from __future__ import annotations

import gc
import sys
import time
import weakref

import numpy as np
import pytest

import naivegraph as ng
from naivegraph.examples import reference_dynamic

CHAIN = 1_000_000


def test_million_op_chain_backward_without_recursion_error():
    # Well past the recursion limit: forward and backward must both be iterative.
    assert CHAIN > 100 * sys.getrecursionlimit()
    start = time.perf_counter()
    x = ng.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(CHAIN):
        y = y * 1.0
    built = time.perf_counter()
    y.backward()
    done = time.perf_counter()
    assert x.grad.item() == 1.0
    assert y.grad_fn.name() == "MulBackward0"
    del y
    gc.collect()  # dropping the graph must not recurse either
    print(f"\n1,000,000-op chain: forward {built - start:.2f}s, backward {done - built:.2f}s")


def test_long_chain_second_derivative():
    x = ng.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(2000):
        y = y.sin() * 1.0
    (g,) = ng.autograd.grad(y, x, create_graph=True)
    (gg,) = ng.autograd.grad(g, x)
    assert np.isfinite(gg.item())


def test_diamond_graph_gradients_add_up():
    x = ng.tensor(3.0, requires_grad=True)
    a = x * 2
    b = x * 5
    loss = a * b + a + b  # d/dx = 20x + 7
    loss.backward()
    assert x.grad.item() == 67.0


def test_wide_fan_out_is_linear_and_exact():
    x = ng.tensor(1.0, requires_grad=True)
    total = sum((x * float(i) for i in range(1, 2001)), ng.tensor(0.0))
    total.backward()
    assert x.grad.item() == 2001 * 2000 / 2


def _l1_to_l4_refs():
    env = reference_dynamic()
    refs = [weakref.ref(env[name]._data) for name in ("l1", "l2", "l3", "l4")]
    return (env["w1"], env["w2"], env["w3"]), env["loss"], refs


def _weakref_supported():
    try:
        weakref.ref(np.ones(1))
        return True
    except TypeError:
        return False


def test_backward_releases_intermediate_arrays():
    if not _weakref_supported():
        pytest.skip("this numpy does not support weak references to arrays")
    weights, loss, refs = _l1_to_l4_refs()
    gc.collect()
    # Before backward, the graph keeps saved intermediates (l1, l2, l3 are saved by mul).
    assert all(r() is not None for r in refs[:3])
    loss.backward()
    gc.collect()
    # The Python names l1..l4 are gone and backward freed the saved copies:
    assert [r() is None for r in refs] == [True, True, True, True]
    assert loss.grad_fn is not None  # the node itself survives, emptied
    assert [w.grad.item() for w in weights] == [28.0, 8.0, 10.0]


def test_retain_graph_keeps_intermediate_arrays_until_released():
    if not _weakref_supported():
        pytest.skip("this numpy does not support weak references to arrays")
    weights, loss, refs = _l1_to_l4_refs()
    loss.backward(retain_graph=True)
    gc.collect()
    assert all(r() is not None for r in refs[:3])
    loss.backward()
    gc.collect()
    assert all(r() is None for r in refs)
    assert [w.grad.item() for w in weights] == [56.0, 16.0, 20.0]


def test_backward_frees_memory_measured_with_tracemalloc():
    import tracemalloc

    x = ng.tensor(np.ones(1000), requires_grad=True)
    tracemalloc.start()
    try:
        h = x
        for _ in range(50):
            h = (h * 1.01).sin() * 0.5  # each step saves sin's 8 kB input, and no more
        loss = h.sum()
        del h
        gc.collect()
        with_graph = tracemalloc.get_traced_memory()[0]
        loss.backward()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # 50 saved 8 kB arrays (≈400 kB) must be gone; only the gradient (8 kB) is new.
    assert with_graph - after > 380_000, (with_graph, after)
    assert x.grad.shape == (1000,)


def test_dropping_the_output_frees_the_whole_graph():
    if not _weakref_supported():
        pytest.skip("this numpy does not support weak references to arrays")
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    ref = weakref.ref(y._data)
    node = weakref.ref(y.grad_fn)
    z = y * y
    del y, z
    gc.collect()
    assert ref() is None and node() is None


def test_leaf_grads_never_share_memory_with_each_other_or_with_hooks():
    # An add hands one gradient array to both inputs; the engine keeps a gradient
    # without copying only when nothing else can see it.
    a = ng.tensor([1.0, 2.0], requires_grad=True)
    b = ng.tensor([3.0, 4.0], requires_grad=True)
    seen = []
    c = a * 2.0 + b * 1.0
    c.register_hook(lambda g: seen.append(g))
    (a + b + c).sum().backward()
    assert not np.shares_memory(a.grad.numpy(), b.grad.numpy())
    assert not np.shares_memory(b.grad.numpy(), seen[0].numpy())
    b.grad.numpy()[...] = 0.0
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 3.0])
    np.testing.assert_array_equal(seen[0].numpy(), [1.0, 1.0])


def test_a_fresh_gradient_becomes_the_leaf_grad_without_a_copy():
    w = ng.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x = ng.tensor([[1.0], [1.0]])
    (w @ x).sum().backward()
    first = w.grad
    np.testing.assert_array_equal(first.numpy(), [[1.0, 1.0], [1.0, 1.0]])
    assert first.numpy().base is None  # the matmul's own output, kept as it is


def test_a_gradient_that_someone_else_still_holds_is_copied_into_grad():
    w = ng.tensor([1.0, 2.0], requires_grad=True)
    given = ng.tensor([5.0, 6.0])
    w.backward(given)  # the caller's own array reaches the leaf unchanged
    assert not np.shares_memory(w.grad.numpy(), given.numpy())

    v = ng.tensor([[1.0, 2.0]], requires_grad=True)
    kept = []
    v.register_hook(kept.append)  # a leaf hook that keeps the gradient it saw
    (v @ ng.tensor([[1.0], [1.0]])).sum().backward()
    assert not np.shares_memory(v.grad.numpy(), kept[0].numpy())
    kept[0].numpy()[...] = 0.0
    np.testing.assert_array_equal(v.grad.numpy(), [[1.0, 1.0]])
