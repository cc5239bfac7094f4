"""Scale: million-op chains without RecursionError, deep narrow MLPs agreeing across modes.

Times are printed (run with -s to see them) but never asserted: ``benchmarks/bench_scale.py``
measures time against depth, and complexity is tested by counting work (``tests/work.py``).
"""

import sys
import time

import numpy as np
from work import growth

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


def _static_chain(n):
    g = ns.Graph()
    with g:
        w = ns.Variable(2.0, name="w")
        y = w
        for _ in range(n):
            y = -y
    return g, w, y


def test_static_backward_work_is_linear_in_depth():
    def backward_of_chain(n):
        g, w, y = _static_chain(n)
        g.forward(fetches=[y])
        g.backward(y)

    ratio = growth(backward_of_chain, 500, 5000)
    assert ratio < 15, f"5000 nodes cost {ratio:.1f}x the work of 500 (linear: ~10x)"


def test_static_million_op_chain_forward_and_backward():
    start = time.perf_counter()
    g, w, y = _static_chain(CHAIN)
    built = time.perf_counter()
    g.forward(fetches=[y])
    ran = time.perf_counter()
    g.backward(y)
    done = time.perf_counter()
    print(
        f"\nstatic {CHAIN} ops: build {built - start:.1f}s, forward {ran - built:.1f}s, "
        f"backward {done - ran:.1f}s"
    )
    assert float(y.value) == 2.0 and float(w.grad) == 1.0


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
    return [
        (
            rng.normal(scale=1 / np.sqrt(WIDTH), size=(WIDTH, WIDTH)),
            rng.normal(scale=0.1, size=WIDTH),
        )
        for _ in range(DEPTH)
    ]


def test_deep_narrow_mlp_gradients_agree_between_modes():
    weights = _weights()
    rng = np.random.default_rng(1)
    x_value, y_value = rng.normal(size=(BATCH, WIDTH)), rng.normal(size=(BATCH, WIDTH))

    layers = []
    for w, b in weights:
        layer = ng.nn.Linear(WIDTH, WIDTH, dtype=ng.float64)  # the modes agree to 1e-12
        with ng.no_grad():
            layer.weight.copy_(ng.tensor(w))
            layer.bias.copy_(ng.tensor(b))
        layers += [layer, ng.nn.Tanh()]
    model = ng.nn.Sequential(*layers)
    loss = ng.nn.functional.mse_loss(model(ng.tensor(x_value)), ng.tensor(y_value))
    loss.backward()
    dyn = [(layer.weight.grad.numpy(), layer.bias.grad.numpy()) for layer in layers[::2]]

    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(BATCH, WIDTH), dtype=np.float64)
        params = [
            (ns.Variable(w, name=f"w{i}"), ns.Variable(b, name=f"b{i}"))
            for i, (w, b) in enumerate(weights)
        ]
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
