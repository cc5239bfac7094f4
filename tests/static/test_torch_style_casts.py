"""Static nodes take tensors' names for casts and comparisons (``x.float()``,
``x.double()``, ``x.long()``, ``x.to(dtype)``, ``x.type_as(y)``, ``x.gt(0)`` ...), so
code written for tensors, such as a traced ``(x > 0).float()`` mask, builds a graph: a
cast is one ``to_copy`` node, gradients flow through it in the input's dtype, and it
draws and lists as any node."""

from __future__ import annotations

import numpy as np
import pytest

import naivegraph as ng
import naivegraph.static as ns

F64 = np.float64


def placeholder_graph():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(3,), dtype=F64)
    return g, x


FEED = np.array([1.5, -2.0, 0.0])


@pytest.mark.parametrize(
    "cast, dtype",
    [
        (lambda n: n.float(), np.float32),
        (lambda n: n.double(), np.float64),
        (lambda n: n.long(), np.int64),
        (lambda n: n.to(np.float32), np.float32),
        (lambda n: n.to("cpu", np.int64), np.int64),
        (lambda n: n.to(dtype=np.float32), np.float32),
        (lambda n: n.to(ng.float32), np.float32),
    ],
)
def test_a_cast_of_a_bool_mask_is_a_node_of_that_dtype_with_the_mask_as_numbers(cast, dtype):
    g, x = placeholder_graph()
    with g:
        mask = cast(x > 0)
    assert (mask.op_name, mask.dtype, mask.shape) == ("to_copy", np.dtype(dtype), (3,))
    got = g.run(mask, {x: FEED})
    assert got.dtype == np.dtype(dtype)
    assert got.tolist() == [1, 0, 0]


def test_a_cast_to_the_same_dtype_is_the_node_itself_unless_a_copy_is_asked():
    g, x = placeholder_graph()
    with g:
        same = x.double()
        other = x.to(x)
        copied = x.to(F64, copy=True)
    assert same is x and other is x
    assert copied is not x and copied.op_name == "to_copy"


def test_type_as_takes_the_other_nodes_dtype():
    g, x = placeholder_graph()
    with g:
        n = ns.placeholder("n", shape=(3,), dtype=np.int64)
        y = n.type_as(x)
    assert y.dtype == np.dtype(F64)
    assert g.run(y, {n: np.array([1, 2, 3])}).tolist() == [1.0, 2.0, 3.0]


def test_comparisons_by_name_are_the_operators_elementwise():
    g, x = placeholder_graph()
    with g:
        found = [x.gt(0), x.lt(0), x.ge(0), x.le(0), x.eq(0), x.ne(0)]
    assert [n.op_name for n in found] == ["gt", "lt", "ge", "le", "eq", "ne"]
    assert [g.run(n, {x: FEED}).tolist() for n in found] == [
        [True, False, False],
        [False, True, False],
        [True, False, True],
        [False, True, True],
        [False, False, True],
        [True, True, False],
    ]


def test_the_gradient_through_casts_comes_back_in_the_inputs_dtype():
    g, x = placeholder_graph()
    with g:
        y = x.float() * 2.0
        loss = ns.sum(y.double() * y.double())
        (dx,) = ns.gradients(loss, [x])
    value, grad = g.run([loss, dx], {x: FEED})
    assert float(value) == 25.0  # (3)^2 + (-4)^2 + 0
    assert grad.dtype == np.dtype(F64)
    assert grad.tolist() == [12.0, -16.0, 0.0]  # 8 x


def test_a_mask_cast_multiplies_a_traced_function_as_it_does_a_tensor():
    def f(x):
        return (x > 0).float() * x * 2 + (x <= 0).to(x.dtype) * x * -1

    traced = ns.trace(f, np.ones(2))
    assert traced(np.array([1.5, -3.0])).tolist() == [3.0, 3.0]
    assert f(ng.tensor([1.5, -3.0])).tolist() == [3.0, 3.0]


def test_a_graph_with_a_cast_lists_and_draws():
    g, x = placeholder_graph()
    with g:
        y = (x > 0).float() * x.float()
    assert "to_copy" in str(g)
    assert "dtype=float32" in g.compile([x], [y]).listing()
    assert ng.render(g) is not None


@pytest.mark.parametrize(
    "call, error, says",
    [
        (lambda n: n.to("cuda"), RuntimeError, "runs on the CPU only"),
        (lambda n: n.to("text dtype?"), RuntimeError, "runs on the CPU only"),
        (lambda n: n.to(dtype=str), TypeError, "expected a dtype such as np.float32"),
        (lambda n: n.to(dtype="not a dtype"), TypeError, "expected a dtype such as"),
    ],
)
def test_a_cast_to_a_device_or_to_no_dtype_is_refused(call, error, says):
    g, x = placeholder_graph()
    with g, pytest.raises(error, match=says):
        call(x)
