"""``Tensor.where(condition, other)``: torch's method, ``where(condition, self, other)``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import naivegraph as ng
import naivegraph.static as ns

VALUES = [-1.0, 2.0, 0.0, -3.5]


def test_where_method_matches_torch_in_values_and_gradient():
    x = ng.tensor(VALUES, requires_grad=True)
    y = (x * 2).where(x > 0, x * -1)
    y.sum().backward()
    tx = torch.tensor(VALUES, requires_grad=True)
    ty = (tx * 2).where(tx > 0, tx * -1)
    ty.sum().backward()
    assert y.tolist() == ty.tolist() == [1.0, 4.0, -0.0, 3.5]
    assert x.grad.tolist() == tx.grad.tolist() == [-1.0, 2.0, -1.0, -1.0]
    assert y.grad_fn.name() == ty.grad_fn.name() == "WhereBackward0"


def test_where_method_takes_a_number_as_other_and_keeps_the_dtype_as_torch():
    got = ng.tensor([1, 2, 3]).where(ng.tensor([True, False, True]), 7)
    want = torch.tensor([1, 2, 3]).where(torch.tensor([True, False, True]), 7)
    assert got.tolist() == want.tolist() == [1, 7, 3]
    assert got.dtype == ng.int64 and want.dtype == torch.int64


def test_where_method_broadcasts_as_torch():
    x = np.array([[1.0], [-2.0]], dtype=np.float32)
    got = ng.tensor(x).where(ng.tensor(x) > 0, ng.zeros(3))
    want = torch.from_numpy(x).where(torch.from_numpy(x) > 0, torch.zeros(3))
    assert got.tolist() == want.tolist()


def test_where_method_needs_the_other_values():
    with pytest.raises(TypeError, match="other"):
        ng.tensor(VALUES).where(ng.tensor(VALUES) > 0)


def test_where_method_on_a_static_node_builds_a_where_node():
    with ns.Graph() as g:
        v = ns.placeholder("v", shape=(4,))
        r = (v * 2).where(v > 0, v * -1)
    assert r.op_name == "where"
    (got,) = g.forward(v=np.array(VALUES), fetches=[r])
    assert got.tolist() == [1.0, 4.0, -0.0, 3.5]


@pytest.mark.parametrize("a, b", [(2.0, -1.0), (2, -1), (True, 2.5)])
def test_where_of_two_python_numbers_has_torchs_dtype(a, b):
    condition = [True, False]
    got = ng.where(ng.tensor(condition), a, b)
    want = torch.where(torch.tensor(condition), a, b)
    assert str(want.dtype) == f"torch.{np.dtype(got.dtype).name}"
    assert got.tolist() == want.tolist()
