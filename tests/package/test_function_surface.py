"""One function surface for both modes: ``F.<loss>`` and ``ns.<loss>`` refuse the same
mistakes, and every module-level function of either mode comes from one generator."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import naivegraph as ng
import naivegraph.dynamic.functions as dynamic_functions
import naivegraph.nn.functional as F
import naivegraph.static as ns
import naivegraph.static.functions as static_functions
from naivegraph.ops.functions import is_generated, make_functions


def _dynamic(array):
    return ng.tensor(array)


def _static(array):
    return ns.constant(np.asarray(array))


# (call, inputs) -> (exception type, key phrase); each call gets its values already made
# operands of the mode under test, so the same mistake is made in both modes.
MISTAKES = {
    "mse shape mismatch": (
        lambda fn, make: fn.mse_loss(make(np.ones(3)), make(np.ones((3, 1)))),
        ValueError,
        "must match",
    ),
    "mse bad reduction": (
        lambda fn, make: fn.mse_loss(make(np.ones(3)), make(np.ones(3)), reduction="avg"),
        ValueError,
        "is not a valid value for reduction",
    ),
    "nll bad reduction": (
        lambda fn, make: fn.nll_loss(make(np.zeros((2, 3))), np.array([0, 1]), reduction="x"),
        ValueError,
        "is not a valid value for reduction",
    ),
    "cross-entropy bad reduction": (
        lambda fn, make: fn.cross_entropy(make(np.zeros((2, 3))), np.array([0, 1]), "avg"),
        ValueError,
        "is not a valid value for reduction",
    ),
    "nll float class targets": (
        lambda fn, make: fn.nll_loss(make(np.zeros((2, 3))), make(np.array([0.0, 1.0]))),
        TypeError,
        "class indices of an integer dtype",
    ),
    "cross-entropy float class targets": (
        lambda fn, make: fn.cross_entropy(make(np.zeros((2, 3))), make(np.array([0.0, 1.0]))),
        TypeError,
        "class indices of an integer dtype",
    ),
    "nll class index out of range": (
        lambda fn, make: fn.nll_loss(make(np.zeros((2, 3))), np.array([0, 3])),
        IndexError,
        "Target 3 is out of bounds",
    ),
    "cross-entropy negative class index": (
        lambda fn, make: fn.cross_entropy(make(np.zeros((2, 3))), np.array([-1, 0])),
        IndexError,
        "Target -1 is out of bounds",
    ),
    "nll target of the wrong length": (
        lambda fn, make: fn.nll_loss(make(np.zeros((2, 3))), np.array([0, 1, 2])),
        ValueError,
        "expected input of shape (N, C) and target of shape (N,)",
    ),
}


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_F_and_ns_refuse_the_same_mistake_the_same_way(mistake):
    call, error, phrase = MISTAKES[mistake]
    with pytest.raises(error, match=_literal(phrase)):
        call(F, _dynamic)
    with ns.Graph() as g:
        with pytest.raises(error, match=_literal(phrase)):
            call(ns, _static)
    assert not [n for n in g.nodes if n.kind == "operation"]  # refused before building


def _literal(phrase: str) -> str:
    return re.escape(phrase)


def test_mse_loss_of_3_and_3_by_1_gives_the_same_message_in_both_modes():
    with pytest.raises(ValueError) as dynamic:
        F.mse_loss(ng.ones(3), ng.ones(3, 1))
    with ns.Graph():
        with pytest.raises(ValueError) as static:
            ns.mse_loss(ns.constant(np.ones(3)), np.ones((3, 1)))
    assert str(dynamic.value) == str(static.value)


def test_checks_compare_only_the_known_dimensions_of_a_placeholder():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3))
        labels = ns.placeholder("labels", shape=(None,), dtype=np.int64)
        anything = ns.placeholder("anything")  # shape and values unknown
        mse = ns.mse_loss(x, np.ones((4, 3)))
        ce = ns.cross_entropy(x, labels)
        ns.cross_entropy(anything, np.array([0, 1]))
        ns.mse_loss(anything, np.ones(2))
        with pytest.raises(ValueError, match="must match"):
            ns.mse_loss(x, np.ones((4, 2)))  # the known dimension differs
        with pytest.raises(TypeError, match="integer dtype"):
            ns.cross_entropy(x, ns.placeholder("soft", shape=(None,)))  # float64 labels
        with pytest.raises(IndexError, match="Target 3 is out of bounds"):
            ns.nll_loss(x, np.array([0, 3]))  # known values against the known class count
    got = g.forward(x=np.zeros((4, 3)), labels=np.array([0, 1, 2, 0]), fetches=[mse, ce])
    np.testing.assert_allclose(got, [1.0, np.log(3.0)])


def test_unknown_values_of_a_label_placeholder_are_not_range_checked_at_build_time():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2, 3))
        labels = ns.placeholder("labels", shape=(2,), dtype=np.int64)
        loss = ns.nll_loss(x, labels)
    assert loss.graph is g


def _public_functions(module) -> dict:
    return {
        name: value
        for name, value in vars(module).items()
        if not name.startswith("_") and inspect.isfunction(value)
    }


def test_every_public_function_of_both_modes_comes_from_the_shared_generator():
    static = _public_functions(static_functions)
    dynamic = _public_functions(dynamic_functions)
    assert static and dynamic
    assert not [name for name, fn in static.items() if not is_generated(fn)]
    assert not [name for name, fn in dynamic.items() if not is_generated(fn)]
    assert set(static) == set(static_functions.__all__)
    assert all(getattr(ng, name) is dynamic[name] for name in dynamic_functions.__all__)
    # ns re-exports the module's functions; F's losses and activations are ng's own
    assert all(getattr(ns, name) is fn for name, fn in static.items())
    for name in ("relu", "sigmoid", "tanh", "softmax", "log_softmax", "mse_loss"):
        assert getattr(F, name) is getattr(dynamic_functions, name)
    assert is_generated(F.nll_loss) and is_generated(F.cross_entropy)


def test_both_modes_have_the_same_names_bar_a_few_documented_ones():
    every = set(make_functions(np.asarray))
    assert set(static_functions.__all__) == every - {"clone", "detach"}
    assert set(dynamic_functions.__all__) == every - {
        "view",
        "expand",
        "mse_loss",
        "nll_loss",
        "cross_entropy",
        # nn.functional's only: torch has no top-level avg_pool2d or smooth L1 / Huber
        # loss, and its top-level batch_norm takes other arguments
        "avg_pool2d",
        "batch_norm",
        "smooth_l1_loss",
        "huber_loss",
    }


def test_the_generator_makes_new_functions_for_each_mode():
    one, two = make_functions(np.asarray), make_functions(np.asarray)
    assert one["exp"] is not two["exp"] and one["exp"].__name__ == "exp"
    assert ng.exp is not ns.exp and ng.exp.__doc__ == ns.exp.__doc__
