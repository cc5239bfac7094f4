"""Random small graphs through the small-graph backward (``naivegraph.fast.fastsmall``).

Each graph draws leaves of shapes (), (2,), (2, 2) and (2, 1) in float32 or float64,
then ops among + - * / (with tensors and Python numbers), negation, whole and
per-dimension means and sums, each op reusing earlier results (so gradients meet and
are summed), and ends in a 0-d loss.  Its gradients must be the same bits with the
small pass on, with it off (``fastback``'s pass) and with the layer off, and agree
with torch's to a few ulps (sums of several terms: the order of torch's reductions is
its own).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from fast_switch import fast_layer_on

import naivegraph as ng
from naivegraph import fast
from naivegraph.fast import fastsmall

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)  # they compare on with off

SHAPES = [(), (2,), (2, 2), (2, 1)]


def _recipe(seed: int) -> tuple:
    """What to build: leaves (shape, values, dtype name) and ops on earlier values."""
    rng = random.Random(seed)
    dtype = rng.choice(["float32", "float64"])
    leaves = []
    for _ in range(rng.randint(1, 3)):
        shape = rng.choice(SHAPES)
        size = int(np.prod(shape)) if shape else 1
        values = [round(rng.uniform(-2.0, 2.0), 3) or 0.5 for _ in range(size)]
        leaves.append((shape, values))
    steps = []
    for _ in range(rng.randint(2, 9)):
        kind = rng.choice(["+", "-", "*", "/", "number", "neg", "mean", "sum", "dim"])
        steps.append((kind, rng.random(), rng.random(), round(rng.uniform(0.5, 2.0), 2)))
    return dtype, leaves, steps


def _run(lib, recipe) -> list:
    dtype, leaves, steps = recipe
    dt = getattr(lib, dtype)
    tensors = [
        lib.tensor(np.reshape(v, s).tolist(), dtype=dt, requires_grad=True) for s, v in leaves
    ]
    values = list(tensors)
    for kind, a, b, number in steps:
        x = values[int(a * len(values))]
        y = values[int(b * len(values))]
        if kind in "+-*/" and len(kind) == 1:
            if kind == "/":
                y = y * y + 1.0  # no division by zero
            x = {"+": x + y, "-": x - y, "*": x * y, "/": x / y}[kind]
        elif kind == "number":
            x = x * number - number / 4
        elif kind == "neg":
            x = -x
        elif kind == "mean":
            x = x.mean()
        elif kind == "sum":
            x = x.sum()
        elif x.dim() > 0:
            x = x.mean(dim=0) if number > 1.2 else x.sum(dim=-1, keepdim=True)
        values.append(x)
    loss = sum((v.mean() for v in values[len(tensors) :]), values[-1].sum() * 0.5)
    loss.backward()
    return [loss] + [t.grad for t in tensors]


def _bits(value) -> tuple:
    if value is None:
        return (None,)
    array = np.asarray(value._data if isinstance(value, ng.Tensor) else value)
    return (str(array.dtype), array.shape, array.tobytes())


@pytest.mark.parametrize("seed", range(60))
def test_random_small_graphs_give_the_same_bits_three_ways_and_torchs_values(seed, monkeypatch):
    recipe = _recipe(seed)
    taken = []
    small_run = fastsmall.run
    monkeypatch.setattr(fastsmall, "run", lambda *args: small_run(*args) and not taken.append(1))
    with_small = _run(ng, recipe)
    assert taken == [1]  # the graph went through the small pass
    previous = fastsmall.on
    fastsmall.on = False
    try:
        without_small = _run(ng, recipe)
    finally:
        fastsmall.on = previous
    with fast.disabled():
        readable = _run(ng, recipe)
    assert [_bits(v) for v in with_small] == [_bits(v) for v in without_small]
    assert [_bits(v) for v in with_small] == [_bits(v) for v in readable]
    torch = pytest.importorskip("torch")
    theirs = _run(torch, recipe)
    for mine, torchs in zip(with_small, theirs):
        if torchs is None:
            assert mine is None
            continue
        assert mine.shape == tuple(torchs.shape)
        rtol = 1e-5 if recipe[0] == "float32" else 1e-12
        np.testing.assert_allclose(
            mine.detach().numpy(), torchs.detach().numpy(), rtol=rtol, atol=rtol
        )
