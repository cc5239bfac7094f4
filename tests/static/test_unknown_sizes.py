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


# -- gradients through a broadcast or a cat whose sizes only the run decides ------------------


def _broadcast_gradients():
    a = ns.placeholder("a", (None, 3))
    b = ns.placeholder("b", (None, 1))
    (grad_a,) = ns.gradients(ns.sum(a * b), [a])
    (second,) = ns.gradients(ns.sum(grad_a * grad_a), [b])
    return a, b, grad_a, second


def test_a_gradient_through_a_broadcast_of_two_unknown_sizes_has_the_fed_shape():
    # (None, 3) * (None, 1) looks shape-preserving for a, yet fed batches 1 and 4 it is
    # (4, 3): torch's gradient of a is (1, 3) of 4.0, and d/db of the sum of its squares 24
    with ns.Graph() as g:
        a, b, grad_a, second = _broadcast_gradients()
    got_a, got_b = g.run([grad_a, second], {a: np.ones((1, 3)), b: np.ones((4, 1))})
    assert got_a.tolist() == [[4.0, 4.0, 4.0]]
    assert got_b.tolist() == [[24.0]] * 4
    same = g.run(grad_a, {a: np.ones((4, 3)), b: np.ones((4, 1))})
    assert same.tolist() == [[1.0, 1.0, 1.0]] * 4


def test_a_broadcast_against_a_known_size_keeps_the_gradient_as_it_is():
    with ns.Graph() as g:
        a = ns.placeholder("a", (None, 3))
        (grad,) = ns.gradients(ns.sum(a * ns.constant(np.ones((1, 3)))), [a])
    assert not any(n.op_name == "sum_to_like" for n in g.nodes)  # nothing to sum back
    assert g.run(grad, {a: np.ones((2, 3))}).shape == (2, 3)


def test_gradients_through_a_cat_along_an_unknown_dimension_and_back_again():
    with ns.Graph() as g:
        a = ns.placeholder("a", (None, 3))
        b = ns.placeholder("b", (None, 3))
        joined = ns.cat([a, b], 0)
        grad_a, grad_b = ns.gradients(ns.sum(joined * joined), [a, b])
        (second,) = ns.gradients(ns.sum(grad_a * grad_a), [a])
    assert grad_a.shape == (None, 3) and grad_b.shape == (None, 3)
    fed = {a: np.arange(3.0).reshape(1, 3), b: np.arange(6.0).reshape(2, 3)}
    got_a, got_b, got_second = g.run([grad_a, grad_b, second], fed)
    assert got_a.tolist() == [[0.0, 2.0, 4.0]]
    assert got_b.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    assert got_second.tolist() == [[0.0, 8.0, 16.0]]  # d/da sum((2a)^2) = 8a


def test_gradients_through_a_cat_of_known_and_unknown_sizes_slice_at_the_run_offsets():
    with ns.Graph() as g:
        a = ns.placeholder("a", (2, 3))
        b = ns.placeholder("b", (None, 3))
        joined = ns.cat([b, a, b], 0)
        grad_a, grad_b = ns.gradients(ns.sum(joined * ns.constant(np.arange(3.0))), [a, b])
    got_a, got_b = g.run([grad_a, grad_b], {a: np.ones((2, 3)), b: np.ones((3, 3))})
    assert got_a.tolist() == [[0.0, 1.0, 2.0]] * 2
    assert got_b.tolist() == [[0.0, 2.0, 4.0]] * 3
