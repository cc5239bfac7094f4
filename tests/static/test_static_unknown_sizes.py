"""Shapes with unknown sizes (``None``) at build time: what shape inference can still
tell, as TensorFlow 1's static shapes do."""

import numpy as np

import naivegraph.static as ns


def test_an_unknown_size_broadcast_against_a_known_one_is_the_known_one():
    with ns.Graph():
        x = ns.placeholder("x", shape=(None,))
        w = ns.placeholder("w", shape=(2,))
        b = ns.placeholder("b", shape=(None, 1))
        assert (x + w).shape == (2,)
        assert (b + x).shape == (None, None)
        assert (b * w).shape == (None, 2)


def test_comparisons_give_bool_even_when_the_rank_is_unknown():
    with ns.Graph():
        u = ns.placeholder("u")  # no shape at all
        x = ns.placeholder("x", shape=(None, 3))
        assert (u > 0).dtype == np.bool_ and (u > 0).shape is None
        assert (x.sum() > 0.0).dtype == np.bool_ and (x.sum() > 0.0).shape == ()


def test_an_elementwise_op_that_reduces_is_not_taken_for_a_broadcast():
    with ns.Graph():
        x = ns.placeholder("x", shape=(None, 3))
        assert ns.mse_loss(x, x).shape == ()
        assert ns.mse_loss(x, x, reduction="none").shape == (None, 3)


def test_a_loop_variable_may_become_better_known_in_the_body():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None,))
        w = ns.placeholder("w", shape=(2,))
        _, y = ns.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, v + w), [0, x])
    assert g.run(y, x=np.array([1.0]), w=np.array([1.0, 2.0])).tolist() == [3.0, 5.0]
