"""``ns.jvp`` against ``torch.func.jvp`` and dynamic forward mode: each program is built
once with an unknown batch size and run at two batch sizes (float64, rtol 1e-10)."""

from __future__ import annotations

import numpy as np
import pytest
from default_dtype import float64_default

import naivegraph as ng
import naivegraph.static as ns

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)
# numpy float64 data; tangents compared with torch's float64 and dynamic mode to 1e-12:
# placeholders and Python floats in float64 too (the default dtype is float32)
pytestmark = [pytestmark, pytest.mark.usefixtures(float64_default.__name__)]

W = np.array([[0.5, -1.0, 0.3, 0.8], [1.2, 0.1, -0.7, 0.4], [-0.3, 0.9, 0.6, -1.1]])
B = np.array([0.1, -0.2, 0.3, 0.05])

# name -> program(lib, x, w, b) with x of shape (batch, 3), w (3, 4), b (4,); lib is ns,
# ng or torch.  Together they use each derivation: elementwise ops with broadcasting,
# linear ops (reductions, reshapes, indexing, cat), matmul, and the transposed fallback
# (softmax, log_softmax, max, mse_loss).
PROGRAMS = {
    "affine-tanh": lambda lib, x, w, b: lib.tanh(lib.matmul(x, w) + b),
    "softmax": lambda lib, x, w, b: lib.softmax(lib.matmul(x, w) * b, dim=1),
    "log-softmax-mean": lambda lib, x, w, b: lib.log_softmax(lib.matmul(x, w), dim=-1).mean(0),
    "max-over-features": lambda lib, x, w, b: lib.max(lib.sin(x) * x, dim=1)[0],
    "mse-loss": lambda lib, x, w, b: (
        lib.nn.functional.mse_loss(lib.matmul(x, w), x[:, :1] * b)
        if lib is not ns
        else ns.mse_loss(ns.matmul(x, w), x[:, :1] * b)
    ),
    "reshape-transpose-sum": lambda lib, x, w, b: (
        lib.exp(x).reshape(-1).reshape(-1, 3).transpose(0, 1).sum(1) * lib.sqrt(w * w + 1.0)[:, 0]
    ),
    "cat-getitem": lambda lib, x, w, b: lib.cat([x * x, x[:, 1:]], 1).sum(0) / (b.sum() + 2.0),
}
SIZES = (2, 5)


def _inputs(batch: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed + batch)
    return [
        rng.uniform(-1, 1, (batch, 3)),
        rng.uniform(-1, 1, W.shape),
        rng.uniform(-1, 1, B.shape),
    ]


def _torch_jvp(program, primals, tangents):
    def f(*args):
        return program(torch, *args)

    out, tangent = torch.func.jvp(
        f, tuple(torch.tensor(p) for p in primals), tuple(torch.tensor(t) for t in tangents)
    )
    return out.numpy(), tangent.numpy()


def _dynamic_jvp(program, primals, tangents):
    out, tangent = ng.func.jvp(
        lambda *args: program(ng, *args),
        tuple(ng.tensor(p) for p in primals),
        tuple(ng.tensor(t) for t in tangents),
    )
    return out.numpy(), tangent.numpy()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jvp_of_a_graph_with_an_unknown_batch_size_matches_torch_and_dynamic_mode(name):
    program = PROGRAMS[name]
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3))
        w = ns.placeholder("w", shape=W.shape)
        b = ns.placeholder("b", shape=B.shape)
        tx = ns.placeholder("tx", shape=(None, 3))
        tw = ns.placeholder("tw", shape=W.shape)
        tb = ns.placeholder("tb", shape=B.shape)
        y = program(ns, x, w, b)
        (dy,) = ns.jvp(y, [x, w, b], [tx, tw, tb])
    run = g.compile([x, w, b, tx, tw, tb], [y, dy])
    for batch in SIZES:
        primals, tangents = _inputs(batch, 1), _inputs(batch, 2)
        value, tangent = run(*primals, *tangents)
        want_value, want_tangent = _torch_jvp(program, primals, tangents)
        np.testing.assert_allclose(value, want_value, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(tangent, want_tangent, rtol=1e-10, atol=1e-12)
        _, dynamic_tangent = _dynamic_jvp(program, primals, tangents)
        np.testing.assert_allclose(tangent, dynamic_tangent, rtol=1e-10, atol=1e-12)


def test_the_jvp_nodes_are_derivatives_and_every_y_gets_one():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None,))
        c = ns.placeholder("c", shape=())
        dy, dz = ns.jvp([x * x, c + 1.0], [x], [2.0])
    assert dy.is_gradient and dz.is_gradient
    got = g.compile([x, c], [dy, dz])(np.array([1.0, -3.0]), np.array(0.5))
    assert got[0].tolist() == [4.0, -12.0]  # 2 x * 2
    assert float(got[1]) == 0.0  # c + 1 does not depend on x


def test_a_tangent_of_the_wrong_shape_is_refused_and_the_graph_is_left_as_it_was():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3))
        y = ns.sin(x)
        before = len(g.nodes)
        with pytest.raises(ValueError, match="the tangent for 'x' has shape \\(2,\\)"):
            ns.jvp(y, [x], [np.ones(2)])
        assert len(g.nodes) == before


def test_ys_and_xs_must_be_nodes_and_one_tangent_is_given_per_x():
    with ns.Graph():
        x = ns.placeholder("x", shape=(2,))
        with pytest.raises(TypeError, match="ns.jvp: ys must be static nodes"):
            ns.jvp(np.ones(2), [x], [np.ones(2)])
        with pytest.raises(ValueError, match="got 2 tangents for 1 xs"):
            ns.jvp(x * 2, [x], [np.ones(2), np.ones(2)])


def test_the_jvp_of_a_jvp_is_a_second_directional_derivative():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        y = x**3
        (dy,) = ns.jvp(y, [x], [1.0])
        (d2y,) = ns.jvp(dy, [x], [1.0])
    assert [float(v) for v in g.compile([x], [dy, d2y])(np.array(2.0))] == [12.0, 12.0]
