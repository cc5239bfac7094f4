"""``grad_fn.next_functions`` (names and order, ``(None, 0)`` entries included) equal
torch's for every op of the op table that torch has.

The cases are keyed by the table's own op names and
``test_every_op_of_the_table_is_compared_or_skipped_with_a_reason`` fails for an op that
has neither cases nor a reasoned skip, so a new op cannot be forgotten.  Each expression
runs once with ``lib = naivegraph`` and once with ``lib = torch`` on the same float64
values: ``x`` and ``y`` require grad, ``k`` does not, so an operand that gets no
gradient, a Python number on either side, and in-place variants are all compared.  An
input that no gradient can reach (``where``'s condition, ``nll_loss``'s targets) has no
edge, as in torch (``test_edges_hostile.py`` checks the gradients through them).
"""

from __future__ import annotations

import numpy as np
import pytest

import naivegraph as ng
from naivegraph.ops import OPS

torch = pytest.importorskip("torch")

#: op name -> expressions (in ``lib``, x, y, k, v, w, kv, i, setitem) that record it
CASES: dict[str, list[str]] = {
    "add": ["x + y", "x + k", "k + x", "x + 2", "2 + x", "(x * 1).add_(k)"],
    "sub": ["x - y", "x - k", "k - x", "x - 2", "(x * 1).sub_(y)"],
    "add_alpha": ["x.add(y, alpha=2)", "x.add(k, alpha=2)", "(x * 1).add_(y, alpha=0.5)"],
    "sub_alpha": ["x.sub(y, alpha=3)", "k.sub(x, alpha=3)", "(x * 1).sub_(y, alpha=2)"],
    "rsub": ["2 - x", "2.5 - x"],
    "mul": ["x * y", "x * k", "k * x", "x * 2", "2 * x", "x * x", "(x * 1).mul_(y)"],
    "div": ["x / y", "x / k", "k / x", "x / 2", "(x * 1).div_(k)"],
    "reciprocal": ["2 / x", "x.reciprocal()"],
    "pow_scalar": ["x ** 2", "x.pow(2.5)", "(x * 1).pow_(3)", "x.square()"],
    "pow": ["x ** y", "x ** k", "k ** x", "lib.pow(x, y)"],
    "rpow": ["2 ** x", "0.5 ** x"],
    "maximum": ["lib.maximum(x, y)", "lib.maximum(x, k)", "lib.maximum(k, x)", "x.max(y)"],
    "minimum": ["lib.minimum(x, y)", "lib.minimum(k, x)", "x.min(k)"],
    "where": [
        "lib.where(k > 0, x, y)",
        "lib.where(k > 0, x, k)",
        "lib.where(k > 0, k, x)",
        "lib.where(k > 0, x, 0.0)",
    ],
    "neg": ["-x", "x.neg()"],
    "exp": ["x.exp()", "(x * 1).exp_()"],
    "log": ["x.abs().log()"],
    "sqrt": ["x.abs().sqrt()"],
    "sin": ["x.sin()", "(x * 1).sin_()"],
    "cos": ["lib.cos(x)"],
    "tanh": ["x.tanh()"],
    "sigmoid": ["x.sigmoid()"],
    "relu": ["x.relu()", "lib.nn.functional.relu(x)"],
    "abs": ["x.abs()", "abs(x)"],
    "clamp": ["x.clamp(-1, 1)", "x.clamp(min=0)", "(x * 1).clamp_(max=0.5)"],
    "clone": ["x.clone()"],
    "to_copy": ["x.float()", "x.to(lib.float32)"],
    "zeros_like": ["lib.zeros_like(x)"],
    "fill": ["(x * 1).fill_(2.0)"],
    "zero": ["(x * 1).zero_()"],
    "copy": ["(x * 1).copy_(y)", "(x * 1).copy_(k)", "(k * 1).copy_(x)"],
    "eq": ["x == y"],
    "ne": ["x != k"],
    "gt": ["x > y"],
    "ge": ["x >= 2"],
    "lt": ["x < k"],
    "le": ["x.le(y)"],
    "logical_and": ["lib.logical_and(x > 0, y > 0)"],
    "logical_or": ["lib.logical_or(x > 0, k > 0)"],
    "logical_not": ["lib.logical_not(x > 0)"],
    "bitwise_and": ["(x > 0) & (y > 0)", "lib.bitwise_and(x > 0, y > 0)"],
    "bitwise_or": ["(x > 0) | (k > 0)"],
    "bitwise_xor": ["(x > 0) ^ (y > 0)"],
    "bitwise_not": ["~(x > 0)", "(x > 0).bitwise_not()"],
    "sign": ["x.sign()"],
    "sum": ["x.sum()", "x.sum(1)", "lib.sum(x, (0, 1), keepdim=True)"],
    "mean": ["x.mean()", "x.mean(0)"],
    "max": ["x.max()", "x.max(1).values", "x.max(dim=0, keepdim=True)[0]"],
    "min": ["x.min()", "x.min(1).values"],
    "argmax": ["x.argmax()", "x.argmax(1)"],
    "argmin": ["x.argmin(0)"],
    "reshape": ["x.reshape(3, 2)", "x.view(-1)", "x.flatten()"],
    "expand": ["x[:1].expand(4, 3)", "v.expand(2, 3)"],
    "transpose": ["x.transpose(0, 1)", "x.mT"],
    "t": ["x.t()"],
    "permute": ["x.permute(1, 0)", "x.T"],
    "squeeze": ["x[:1].squeeze()", "x[:1].squeeze(0)"],
    "unsqueeze": ["x.unsqueeze(0)", "x.unsqueeze(-1)"],
    "getitem": ["x[0]", "x[:, 1]", "x[1:]", "x[[0, 1, 0]]", "x[k > 0]", "x[None]"],
    "index_put": ["setitem(x * 1, k > 0, 2.0)", "setitem(x * 1, k > 0, y[k > 0])"],
    "cat": ["lib.cat([x, y])", "lib.cat([x, k], 1)", "lib.cat([k, x])"],
    "stack": ["lib.stack([x, y])", "lib.stack([k, x], 1)"],
    "bmm": [
        "lib.bmm(x[None], y.t()[None])",
        "x[None].bmm(k.t()[None])",
        "lib.stack([x, y]) @ lib.stack([k, y]).mT",
    ],
    "matmul": ["x @ y.t()", "x @ k.t()", "k @ x.t()", "v @ w", "x @ v", "v @ x.t()", "x.mm(y.t())"],
    "addmm": [
        "lib.nn.functional.linear(x, y, w[:2])",
        "lib.nn.functional.linear(x, k, w[:2])",
        "lib.addmm(w[:2], x, y.t())",
    ],
    "softmax": ["x.softmax(1)", "lib.softmax(x, 0)"],
    "log_softmax": ["x.log_softmax(1)"],
    "nll_loss": [
        "lib.nn.functional.nll_loss(x.log_softmax(1), lib.tensor([0, 2]))",
        "lib.nn.functional.cross_entropy(x, lib.tensor([0, 2]))",
    ],
    "mse_loss": [
        "lib.nn.functional.mse_loss(x, y)",
        "lib.nn.functional.mse_loss(x, k)",
        "lib.nn.functional.mse_loss(k, x)",
    ],
    # the ops added for learners' PyTorch programs
    "dot": ["v.dot(w)", "v.dot(kv)", "kv.dot(v)", "lib.dot(v, v)"],
    "norm": ["x.norm()", "x.norm(1, dim=1)", "lib.norm(x, float('inf'))", "x.norm('fro', (0, 1))"],
    "sort": ["x.sort().values", "x.sort(0, descending=True)[0]", "lib.sort(v).values"],
    "argsort": ["x.argsort()", "x.sort(1).indices"],
    "var": ["x.var()", "x.var(1)", "lib.var(x, 0, unbiased=False)"],
    "std": ["x.std()", "x.std(1, keepdim=True)", "lib.std(x, correction=0)"],
    "prod": ["x.prod()", "x.prod(1)", "lib.prod(x, 0, keepdim=True)"],
    "index_select": ["x.index_select(1, i)", "lib.index_select(x, 0, i[1:2])"],
    "masked_fill": [
        "x.masked_fill(x > 0, 0.0)",
        "x.masked_fill(k > 0, 2)",
        "(x * 1).masked_fill_(v > 0, 1.5)",
    ],
    "masked_fill_tensor": [
        "x.masked_fill(x > 0, y.mean())",
        "x.masked_fill(k > 0, k[1, 1])",
        "k.masked_fill(k > 0, y.sum())",
        "lib.masked_fill(x, v > 0, w[2])",
        "(x * 1).masked_fill_(v > 0, w[1])",
    ],
    "tril": ["x.tril()", "lib.tril(x, -1)", "(x * 1).tril_(diagonal=1)"],
    "triu": ["x.triu(1)", "lib.triu(x, diagonal=-1)", "(x * 1).triu_()"],
    "gather": ["x.gather(1, i[None].expand(2, 3))", "lib.gather(x, 0, i[None] % 2)"],
    "scatter_add": [
        "x.scatter_add(1, i[None].expand(2, 3), y)",
        "x.scatter_add(1, i[None].expand(2, 3), k)",
        "k.scatter_add(0, i[None] % 2, x[:1])",
        "lib.scatter_add(x, 0, i[None] % 2, y[1:])",
    ],
    "index_add": [
        "x.index_add(1, i, y)",
        "x.index_add(1, i, k)",
        "k.index_add(1, i, x)",
        "(x * 1).index_add_(1, i, y, alpha=2)",
        "lib.index_add(x, 1, i, y)",
    ],
    # convolutional layers (views of the 2 x 3 values as images and kernels)
    "conv2d": [
        "lib.nn.functional.conv2d(x.reshape(1, 1, 2, 3), y.reshape(1, 1, 2, 3)[..., :2], w[:1])",
        "lib.nn.functional.conv2d(x.reshape(1, 2, 1, 3), y.reshape(2, 1, 1, 3), groups=2)",
        "lib.nn.functional.conv2d(k.reshape(1, 1, 2, 3), x.reshape(1, 1, 2, 3), k[0, :1])",
        "lib.nn.functional.conv2d(x.reshape(1, 2, 3), k[:1].reshape(1, 1, 1, 3), padding='same')",
    ],
    "max_pool2d": [
        "lib.nn.functional.max_pool2d(x.reshape(1, 2, 3), 2, 1)",
        "lib.nn.functional.max_pool2d(x.reshape(1, 1, 2, 3), 2, ceil_mode=True)",
    ],
    "max_pool2d_indices": [
        "lib.nn.functional.max_pool2d(x.reshape(1, 2, 3), 2, 1, return_indices=True)[1]"
    ],
    "avg_pool2d": [
        "lib.nn.functional.avg_pool2d(x.reshape(1, 2, 3), 2, 1)",
        "lib.nn.functional.avg_pool2d(x.reshape(1, 1, 2, 3), 3, 2, 1, count_include_pad=False)",
    ],
    "batch_norm": [
        "lib.nn.functional.batch_norm(x, None, None, v, w, training=True)",
        "lib.nn.functional.batch_norm(x.t(), None, None, kv[:2], v[:2], training=True)",
        "lib.nn.functional.batch_norm(x, k[0], k[1].abs(), y[0], None)",
        "lib.nn.functional.batch_norm(x.reshape(2, 3, 1), None, None, training=True)",
    ],
    "remainder": ["x % y", "x % k", "k % x", "lib.remainder(x, y)"],
    "remainder_scalar": ["x % 2", "x.remainder(0.5)", "lib.remainder(x, 3)"],
    "div_rounding": [
        "x.div(y, rounding_mode='floor')",
        "x.div(2, rounding_mode='trunc')",
        "k.div(x, rounding_mode=None)",
        "lib.div(x, k, rounding_mode='trunc')",
    ],
    "addmm_scaled": [
        "lib.addmm(w[:2], x, y.t(), beta=2, alpha=0.5)",
        "lib.addmm(k[:, :2], x, k.t(), beta=0)",
    ],
    "sum_typed": ["x.sum(dtype=lib.float32)", "lib.sum(x, 1, dtype=lib.float32)"],
    "smooth_l1_loss": [
        "lib.nn.functional.smooth_l1_loss(x, y)",
        "lib.nn.functional.smooth_l1_loss(x, k, beta=0.5, reduction='sum')",
    ],
    "huber_loss": [
        "lib.nn.functional.huber_loss(x, y, delta=2.0)",
        "lib.nn.functional.huber_loss(k, x, reduction='none')",
    ],
    "nll_loss_nd": [
        "lib.nn.functional.nll_loss(x.log_softmax(1), lib.tensor([0, 2]), weight=kv)",
        "lib.nn.functional.nll_loss(x, lib.tensor([0, 2]), ignore_index=0, reduction='none')",
        "lib.nn.functional.nll_loss(x.reshape(1, 2, 3), lib.tensor([[0, 1, 1]]))",
        "lib.nn.functional.cross_entropy(x, lib.tensor([1, 2]), weight=kv.abs())",
    ],
}

#: op name -> why it is not compared with torch
SKIPPED = {
    "sum_to": "internal: sums a broadcast gradient back to shape inside backward rules",
    "sum_to_like": "internal: sum_to with the shape read at run time (static graphs)",
    "reshape_like": "internal: reshape with the shape read at run time (static graphs)",
    "expand_like": "internal: expand with the shape read at run time (static graphs)",
    "count": "internal: a reduction's element count read at run time (static graphs)",
    "first_true": "internal: the mask of max(dim)'s gradient; no torch function",
    "scatter": "internal: getitem's gradient (torch records it only inside backward)",
    "scatter_like": "internal: scatter with the shape read at run time (static graphs)",
    "cat_part": "internal: a slice of cat's gradient at sizes read at run time (static graphs)",
    "sort_as": "internal: the permutation of sort's gradient (torch has no such function)",
    "unsort_as": "internal: sort's gradient, the inverse permutation of sort_as",
    "one_hot": "internal: the class mask of nll_loss's rule (torch's one_hot returns int64 "
    "and naivegraph has no F.one_hot)",
    "assign": "static graphs only: a Variable's update; dynamic mode has no such op",
    "group": "static graphs only: runs updates for their effect; no value, no grad_fn",
    "conv2d_input_grad": "internal: conv2d's gradient for its input (torch computes both "
    "gradients in one ConvolutionBackwardBackward0 node, with other edges)",
    "conv2d_weight_grad": "internal: conv2d's gradient for its weight (see conv2d_input_grad)",
    "max_pool2d_scatter": "internal: max_pool2d's gradient, recorded only inside backward",
    "max_pool2d_gather": "internal: max_pool2d_scatter's gradient, recorded only inside backward",
    "avg_pool2d_backward": "internal: avg_pool2d's gradient, recorded only inside backward",
    "floor_divide": "torch records a node that refuses backward (NotImplemented); naivegraph's "
    "result records none (tests/dynamic/test_torch_names.py checks the values)",
    "class_mask": "internal: the class mask of nll_loss_nd's rule",
}

VALUES = {
    "x": np.array([[1.5, -2.0, 0.5], [3.0, -0.75, 2.5]]),
    "y": np.array([[-1.0, 0.25, 2.0], [1.25, -3.0, 0.75]]),
    "k": np.array([[0.5, -1.5, 2.0], [-0.25, 1.0, -2.0]]),
    "v": np.array([1.0, -2.0, 0.5]),
    "w": np.array([0.75, 1.5, -1.0]),
    "kv": np.array([2.0, 0.5, -1.0]),
}
REQUIRES_GRAD = {"x", "y", "v", "w"}


def _setitem(target, index, value):
    target[index] = value
    return target


def _namespace(lib) -> dict:
    names = {
        name: lib.tensor(values, requires_grad=name in REQUIRES_GRAD)
        for name, values in VALUES.items()
    }
    return {**names, "lib": lib, "i": lib.tensor([2, 0, 2]), "setitem": _setitem}


def structure(node, depth: int = 3):
    """(name, [(child, index), ...]) of a grad_fn, ``depth`` levels down."""
    if node is None:
        return None
    if depth == 0:
        return type(node).__name__
    return (
        type(node).__name__,
        [(structure(child, depth - 1), index) for child, index in node.next_functions],
    )


def _ops_recorded(node, seen=None) -> set:
    """Names of the table ops whose nodes the graph under ``node`` holds."""
    seen = set() if seen is None else seen
    if node is None or id(node) in seen:
        return set()
    seen.add(id(node))
    found = {node.op.name} if hasattr(node, "op") else set()
    for child, _ in node.next_functions:
        found |= _ops_recorded(child, seen)
    return found


def _params():
    for op, expressions in CASES.items():
        for expression in expressions:
            yield pytest.param(op, expression, id=f"{op}: {expression}")


def forgotten(ops) -> str | None:
    """What to write for the ops of ``ops`` with neither cases nor a reasoned skip (None:
    there are none): the file, and a line to start from for each way."""
    names = sorted(set(ops) - set(CASES) - set(SKIPPED))
    if not names:
        return None
    name = names[0]
    return (
        f"ops of the table without next_functions cases: {names}. In "
        f"tests/dynamic/test_next_functions_table.py add to CASES expressions that torch runs "
        f'too, e.g. "{name}": ["x.{name}()", "lib.{name}(x, y)"], or to SKIPPED why torch '
        f'cannot be compared, e.g. "{name}": "internal: <what the op is for>"'
    )


def test_every_op_of_the_table_is_compared_or_skipped_with_a_reason():
    assert not set(CASES) & set(SKIPPED), "an op is both compared and skipped"
    assert forgotten(OPS) is None, forgotten(OPS)
    assert not (set(CASES) | set(SKIPPED)) - set(OPS), "cases for ops the table lacks"
    assert all(reason.strip() for reason in SKIPPED.values())


def test_a_forgotten_op_is_told_the_file_and_the_lines_to_write():
    assert forgotten([*OPS, "softplus_new"]) == (
        "ops of the table without next_functions cases: ['softplus_new']. In "
        "tests/dynamic/test_next_functions_table.py add to CASES expressions that torch runs "
        'too, e.g. "softplus_new": ["x.softplus_new()", "lib.softplus_new(x, y)"], or to '
        'SKIPPED why torch cannot be compared, e.g. "softplus_new": "internal: <what the op '
        'is for>"'
    )


@pytest.mark.parametrize("op, expression", list(_params()))
def test_next_functions_match_torch(op, expression):
    got = eval(expression, _namespace(ng))
    want = eval(expression, _namespace(torch))
    if OPS[op].differentiable:  # the expression really exercises the op it is filed under
        assert op in _ops_recorded(got.grad_fn), f"{expression} records no {op} node"
    assert structure(got.grad_fn) == structure(want.grad_fn)
