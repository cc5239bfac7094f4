"""Reductions take numpy's and TF1's names ``axis`` / ``keepdims`` as torch does, and
a numpy function given a static node says which ns op builds the node instead."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import naivegraph as ng
import naivegraph.static as ns

X = np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]], dtype=np.float32)


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "var", "std"])
@pytest.mark.parametrize("keep", [False, True])
def test_static_reductions_take_axis_and_keepdims(name, keep):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2, 3))
        by_function = getattr(ns, name)(x, axis=0, keepdims=keep)
        by_method = getattr(x, name)(axis=1, keepdims=keep)
    got0, got1 = g.forward(x=X, fetches=[by_function, by_method])
    t = torch.from_numpy(X)
    np.testing.assert_allclose(got0, getattr(t, name)(dim=0, keepdim=keep).numpy(), rtol=1e-6)
    np.testing.assert_allclose(got1, getattr(t, name)(dim=1, keepdim=keep).numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod", "var", "std"])
def test_dynamic_reductions_take_axis_and_keepdims_as_torch_does(name):
    got = getattr(ng.tensor(X), name)(axis=1, keepdims=True)
    want = getattr(torch.from_numpy(X), name)(axis=1, keepdims=True)
    if name in ("max", "min"):
        assert got.indices.tolist() == want.indices.tolist()
        got, want = got.values, want.values
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", ["all", "any"])
def test_dynamic_all_and_any_take_axis_and_keepdims(name):
    data = np.array([[1.0, 0.0], [1.0, 1.0]])
    got = getattr(ng.tensor(data), name)(axis=1, keepdims=True)
    assert got.tolist() == getattr(torch.from_numpy(data), name)(axis=1, keepdims=True).tolist()


def test_giving_dim_and_axis_together_is_a_type_error():
    with pytest.raises(TypeError, match=r"mean\(\) got both dim and its alias axis"):
        ng.tensor(X).mean(dim=0, axis=0)
    with pytest.raises(TypeError, match=r"sum\(\) got both keepdim and its alias keepdims"):
        ng.tensor(X).sum(0, keepdim=True, keepdims=True)


@pytest.mark.parametrize(
    "call, numpy_name, instead",
    [
        (lambda x: np.mean(x), "np.mean", "use ns.mean"),
        (lambda x: np.sum(x, axis=0), "np.sum", "use ns.sum"),
        (lambda x: np.where(x > 0, x, 0.0), "np.where", "use ns.where"),
        (lambda x: np.linalg.norm(x), "np.linalg.norm", "use ns.norm"),
        (lambda x: np.cumsum(x), "np.cumsum", "use the ns.* ops and the node's methods"),
    ],
)
def test_a_numpy_function_on_a_node_says_it_cannot_build_a_node(call, numpy_name, instead):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2, 3))
        size = len(g.nodes)
        with pytest.raises(TypeError) as caught:
            call(x)
    assert str(caught.value).startswith(f"{numpy_name} cannot build a graph node: {instead} ")
    assert "has no value while its graph is built" in str(caught.value)
    assert len(g.nodes) == size + (2 if numpy_name == "np.where" else 0)  # only x > 0


def test_numpy_asks_a_node_its_rank_and_shape_and_gets_what_the_node_knows():
    # the ops' own code asks np.ndim of an operand that may be a node (ns.mm, ...)
    with ns.Graph():
        x = ns.placeholder("x", shape=(None, 3))
        w = ns.placeholder("w", shape=(3, 2))
        y = ns.mm(x, w)
    assert (np.ndim(x), np.shape(x), np.size(w)) == (2, (None, 3), 6)
    assert y.shape == (None, 2)
    with pytest.raises(TypeError, match="np.size of node 'x' needs a known shape"):
        np.size(x)
