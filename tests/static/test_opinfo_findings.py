"""Behaviours the OpInfo differential suite (tests/fidelity) found missing or wrong in
static mode, each pinned with exact values."""

from __future__ import annotations

import numpy as np
import pytest

import naivegraph.static as ns


def test_jvp_of_a_norm_without_a_gradient_is_zero():
    # norm with p=0 counts nonzeros: no partial is defined, so its tangent is zero
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2, 3))
        (tangent,) = ns.jvp(ns.norm(x, p=0), [x], [1.0])
    (value,) = g.compile([x], [tangent])(np.arange(6.0).reshape(2, 3))
    assert value.shape == () and value == 0.0


def test_transpose_of_a_0d_placeholder_swaps_dim_0_with_itself():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        y = ns.transpose(x, 0, -1)
        (dx,) = ns.gradients(y * 3.0, [x])
    assert [float(v) for v in g.compile([x], [y, dx])(np.array(2.5))] == [2.5, 3.0]


def test_softmax_over_an_empty_dim_runs_in_a_graph():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 0))
        y = ns.softmax(x, dim=-1)
        (dx,) = ns.gradients(ns.sum(y), [x])
    values = g.compile([x], [y, dx])(np.zeros((5, 0)))
    assert [v.shape for v in values] == [(5, 0), (5, 0)]


def test_cross_entropy_with_class_probabilities_and_an_unknown_batch_size():
    logits = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, -1.0]])
    p = np.array([[0.25, 0.25, 0.5], [1.0, 0.0, 0.0]])
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3), dtype=np.float64)  # exact to 1e-15
        target = ns.placeholder("p", shape=(None, 3), dtype=np.float64)
        loss = ns.cross_entropy(x, target, reduction="none")
    (value,) = g.compile([x, target], [loss])(logits, p)
    np.testing.assert_allclose(value, -(p * logp).sum(axis=1), rtol=1e-15)


def test_nll_loss_gradient_needs_a_known_class_count_and_says_so():
    with ns.Graph() as g:
        logp = ns.placeholder("logp", shape=(None,))  # one sample, its class count unknown
        loss = ns.nll_loss(logp, np.array(1))
        with pytest.raises(ValueError, match="nll_loss: its gradient needs the number of classes"):
            ns.gradients(loss, [logp])
    (value,) = g.compile([logp], [loss])(np.array([-0.5, -1.5, -2.5]))
    assert value == 1.5  # the forward pass alone needs no class count


def test_cross_entropy_on_logits_of_unknown_shape_asks_for_the_class_count_when_minimized():
    with ns.Graph():
        x = ns.placeholder("x", shape=None, dtype=np.float32)  # not even the rank known
        t = ns.placeholder("t", shape=(None,), dtype=np.int64)
        w = ns.Variable(np.ones((2, 3), np.float32), name="w")
        loss = ns.cross_entropy(x @ w, t)
        with pytest.raises(ValueError, match="nll_loss: its gradient needs the number of classes"):
            ns.optim.SGD([w], lr=0.1).minimize(loss)


def test_clamp_names_itself_when_a_bound_is_a_placeholder():
    with ns.Graph():
        x = ns.placeholder("x", shape=(3,))
        with pytest.raises(TypeError, match="clamp: the max bound must be known when the op"):
            ns.clamp(x, max=x)


def test_a_reflected_operator_names_itself_when_called_with_an_unknown_argument():
    with ns.Graph():
        x = ns.placeholder("x", shape=(3,))
        with pytest.raises(TypeError, match=r"^__rsub__\(\) got an unexpected keyword argument"):
            x.__rsub__(1.0, alpha=2)


def test_flatten_beside_a_size_0_dimension_needs_the_full_shape_and_says_so():
    # reshape's -1 cannot stand for the unknown batch size when there are no elements
    with ns.Graph():
        x = ns.placeholder("x", shape=(None, 0, 3))
        with pytest.raises(ValueError, match=r"flatten\(1, -1\) of shape \(None, 0, 3\): beside"):
            ns.flatten(x, 1)


def test_flatten_of_a_known_empty_shape_runs():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(4, 0, 3))
        y = ns.flatten(x, 1)
    assert g.compile([x], [y])(np.zeros((4, 0, 3)))[0].shape == (4, 0)
