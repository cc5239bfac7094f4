"""Scale: million-op chains without RecursionError, deep narrow MLPs agreeing across modes.

Times are printed (run with -s to see them); ``benchmarks/bench_scale.py`` measures
time against depth.
"""

import sys
import time

import numpy as np

import naivegraph as ng
import naivegraph.static as ns

CHAIN = 1_000_000


def test_dynamic_million_op_chain_forward_and_backward():
    limit = sys.getrecursionlimit()
    start = time.perf_counter()
    x = ng.tensor(2.0, requires_grad=True)
    y = x
    for _ in range(CHAIN):
        y = -y
    built = time.perf_counter()
    y.backward()
    done = time.perf_counter()
    print(f"\ndynamic {CHAIN} ops: forward {built - start:.1f}s, backward {done - built:.1f}s")
    assert y.item() == 2.0 and x.grad.item() == 1.0  # an even number of negations
    assert sys.getrecursionlimit() == limit
    del y  # dropping the chain must not recurse either
    assert done - start < 60


def _static_chain(n):
    g = ns.Graph()
    with g:
        w = ns.Variable(2.0, name="w")
        y = w
        for _ in range(n):
            y = -y
    return g, w, y


def _backward_seconds(n):
    g, w, y = _static_chain(n)
    g.forward(fetches=[y])
    start = time.perf_counter()
    g.backward(y)
    return time.perf_counter() - start


def test_static_backward_is_linear_in_depth():
    small, large = _backward_seconds(500), _backward_seconds(2000)
    assert large / max(small, 1e-4) < 4 * 2.5, f"500 nodes: {small:.3f}s, 2000 nodes: {large:.3f}s"


def test_static_million_op_chain_forward_and_backward():
    # Fail fast if backward ever turns quadratic again, instead of running for hours
    # (linear: ~0.02s; quadratic: ~2.5s).
    assert _backward_seconds(5000) < 0.5, "backward of a 5000-op chain is far too slow"
    start = time.perf_counter()
    g, w, y = _static_chain(CHAIN)
    built = time.perf_counter()
    g.forward(fetches=[y])
    ran = time.perf_counter()
    g.backward(y)
    done = time.perf_counter()
    print(f"\nstatic {CHAIN} ops: build {built - start:.1f}s, forward {ran - built:.1f}s, "
          f"backward {done - ran:.1f}s")
    assert float(y.value) == 2.0 and float(w.grad) == 1.0
    assert done - start < 60


def test_static_deep_chain_builds_runs_and_compiles_without_recursion():
    # 100,000 ops keep this one fast; the million-op run (with backward) is the test above.
    n = 100_000
    start = time.perf_counter()
    g, w, y = _static_chain(n)
    (value,) = g.forward(fetches=[y])
    (compiled,) = g.compile([], [y], optimize=False)()
    print(f"\nstatic {n} ops: build + forward + compile {time.perf_counter() - start:.1f}s")
    assert float(value) == 2.0 and float(compiled) == 2.0


# ----------------------------------------------------------------------------------
# A 100-layer MLP of width 8, both modes, same gradients
# ----------------------------------------------------------------------------------
DEPTH, WIDTH, BATCH = 100, 8, 4


def _weights():
    rng = np.random.default_rng(0)
    return [(rng.normal(scale=1 / np.sqrt(WIDTH), size=(WIDTH, WIDTH)),
             rng.normal(scale=0.1, size=WIDTH)) for _ in range(DEPTH)]


def test_deep_narrow_mlp_gradients_agree_between_modes():
    weights = _weights()
    rng = np.random.default_rng(1)
    x_value, y_value = rng.normal(size=(BATCH, WIDTH)), rng.normal(size=(BATCH, WIDTH))

    layers = []
    for w, b in weights:
        layer = ng.nn.Linear(WIDTH, WIDTH)
        with ng.no_grad():
            layer.weight.copy_(ng.tensor(w))
            layer.bias.copy_(ng.tensor(b))
        layers += [layer, ng.nn.Tanh()]
    model = ng.nn.Sequential(*layers)
    loss = ng.nn.functional.mse_loss(model(ng.tensor(x_value)), ng.tensor(y_value))
    loss.backward()
    dyn = [(l.weight.grad.numpy(), l.bias.grad.numpy()) for l in layers[::2]]

    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(BATCH, WIDTH))
        params = [(ns.Variable(w, name=f"w{i}"), ns.Variable(b, name=f"b{i}"))
                  for i, (w, b) in enumerate(weights)]
        h = x
        for w, b in params:
            h = ns.tanh(h @ w.T + b)
        static_loss = ns.mse_loss(h, y_value)
        grads = ns.gradients(static_loss, [v for pair in params for v in pair])
    outputs = g.compile([x], [static_loss, *grads])(x_value)
    np.testing.assert_allclose(outputs[0], loss.item(), rtol=1e-12)
    for i, (gw, gb) in enumerate(dyn):
        np.testing.assert_allclose(outputs[1 + 2 * i], gw, rtol=1e-9, atol=1e-14)
        np.testing.assert_allclose(outputs[2 + 2 * i], gb, rtol=1e-9, atol=1e-14)
    # the gradient reached the first layer (not vanished to exactly zero)
    assert np.abs(dyn[0][0]).max() > 0
