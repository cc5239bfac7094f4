"""The gradcheck case of every differentiable op of the op table, shared by the
finite-difference checks (``tests/dynamic/test_gradcheck_ops.py``) and forward mode.

``CASES`` maps each op name to the programs that exercise it; ``_make`` builds a case's
float64 inputs.  A new differentiable op added to ``naivegraph.ops.OPS`` without a case
here makes ``test_every_differentiable_op_has_a_gradcheck_case`` fail.
"""

from __future__ import annotations

import zlib

import numpy as np

import naivegraph as ng
from naivegraph.ops import F

nnF = ng.nn.functional


def _rng(name: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(name.encode()))


def away(shape, rng, low=0.3, high=2.0):
    """Values with |v| in [low, high] and random signs: away from kinks at 0."""
    mag = rng.uniform(low, high, shape)
    return mag * rng.choice([-1.0, 1.0], size=shape)


def distinct(shape, rng):
    """Values at least 0.1 apart: no ties for max/min."""
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.25 - n * 0.1).reshape(shape) + rng.uniform(0, 0.05)


def pos(shape, rng):
    return rng.uniform(0.5, 2.0, shape)


def anyv(shape, rng):
    return rng.uniform(-1.5, 1.5, shape)


# op name -> list of (case id, function, [input makers]); a maker is (kind, shape) for a
# tensor that requires grad, or ("const", value) for a fixed argument.
CASES: dict[str, list] = {}


def case(op, cid, fn, *inputs):
    CASES.setdefault(op, []).append((f"{op}-{cid}", fn, inputs))


BOOL_MASK = np.array(
    [[True, False, True, True], [False, False, True, False], [True, True, False, True]]
)

# -- elementwise binary with broadcasting ---------------------------------------------
for op, f in [
    ("add", lambda x, y: x + y),
    ("sub", lambda x, y: x - y),
    ("mul", lambda x, y: x * y),
    ("div", lambda x, y: x / y),
    ("maximum", lambda x, y: ng.maximum(x, y)),
    ("minimum", lambda x, y: ng.minimum(x, y)),
]:
    kind = "distinct" if op in ("maximum", "minimum") else "away"
    case(op, "same", f, (kind, (2, 3)), ("away", (2, 3)))
    case(op, "col-row", f, (kind, (3, 1)), ("away", (1, 4)))
    case(op, "matrix-vector", f, (kind, (2, 3)), ("away", (3,)))
    case(op, "scalar-matrix", f, (kind, ()), ("away", (2, 3)))
    case(op, "3d-2d", f, (kind, (2, 1, 3)), ("away", (4, 1)))
case("add", "python-scalar", lambda x: 2.5 + x, ("anyv", (2, 3)))
case("add", "alpha", lambda x, y: x.add(y, alpha=3), ("anyv", (2, 3)), ("anyv", (3,)))
case("sub", "rsub-python-scalar", lambda x: 2.5 - x, ("anyv", (2, 3)))
case("sub", "alpha", lambda x, y: x.sub(y, alpha=2), ("anyv", (2, 3)), ("anyv", (3,)))
case("mul", "python-scalar", lambda x: x * 3.0, ("anyv", (4,)))
case("mul", "same-tensor", lambda x: x * x, ("anyv", (4,)))
case("div", "tensor-numerator", lambda x, y: y / x, ("away", (2, 3)), ("anyv", (2, 3)))
case("reciprocal", "python-numerator", lambda x: 2.0 / x, ("away", (2, 3)))
case("reciprocal", "method", lambda x: x.reciprocal(), ("away", (3,)))
case("div", "python-denominator", lambda x: x / 4.0, ("anyv", (2, 3)))
case("maximum", "constant-other", lambda x: ng.maximum(x, ng.tensor(0.1)), ("away", (5,)))

case("pow_scalar", "cube", lambda x: x**3, ("anyv", (2, 3)))
case("pow_scalar", "sqrt", lambda x: x**0.5, ("pos", (2, 3)))
case("pow_scalar", "negative", lambda x: x**-2, ("away", (2, 3)))
case("pow_scalar", "zero", lambda x: x**0, ("anyv", (3,)))
case("pow_scalar", "one", lambda x: x**1, ("anyv", (3,)))
case("pow_scalar", "method", lambda x: x.pow(2.5), ("pos", (3,)))
case("pow", "tensor-tensor", lambda x, y: x**y, ("pos", (2, 3)), ("anyv", (2, 3)))
case("pow", "broadcast", lambda x, y: x**y, ("pos", (3, 1)), ("anyv", (4,)))
case("pow", "python-base", lambda y: 2.0**y, ("anyv", (2, 3)))
case("pow", "zero-dim-exponent", lambda x, y: x**y, ("pos", (4,)), ("anyv", ()))

case(
    "where",
    "mask",
    lambda x, y: ng.where(ng.tensor(BOOL_MASK), x, y),
    ("anyv", (3, 4)),
    ("anyv", (3, 4)),
)
case(
    "where",
    "broadcast",
    lambda x, y: ng.where(ng.tensor(BOOL_MASK), x, y),
    ("anyv", (3, 1)),
    ("anyv", (4,)),
)
case("where", "data-dependent", lambda x: ng.where(x > 0, x * 2, x.exp()), ("away", (3, 4)))

# -- elementwise unary ----------------------------------------------------------------
for op, f, kind in [
    ("neg", lambda x: -x, "anyv"),
    ("exp", lambda x: x.exp(), "anyv"),
    ("log", lambda x: x.log(), "pos"),
    ("sqrt", lambda x: x.sqrt(), "pos"),
    ("sin", lambda x: x.sin(), "anyv"),
    ("cos", lambda x: x.cos(), "anyv"),
    ("tanh", lambda x: x.tanh(), "anyv"),
    ("sigmoid", lambda x: x.sigmoid(), "anyv"),
    ("relu", lambda x: x.relu(), "away"),
    ("abs", lambda x: x.abs(), "away"),
    ("sign", lambda x: x.sign(), "away"),  # a zero gradient, recorded as torch records it
    ("clone", lambda x: x.clone(), "anyv"),
]:
    case(op, "matrix", f, (kind, (2, 3)))
    case(op, "scalar", f, (kind, ()))
case("neg", "method", lambda x: x.neg(), ("anyv", (3,)))
case("exp", "function", lambda x: ng.exp(x), ("anyv", (3,)))
case("sigmoid", "large", lambda x: (x * 20).sigmoid(), ("anyv", (5,)))
case("relu", "functional", lambda x: nnF.relu(x), ("away", (4,)))
case("tanh", "module", lambda x: ng.nn.Tanh()(x), ("anyv", (4,)))
case("clamp", "min", lambda x: x.clamp(min=0.0), ("away", (2, 3)))
case("clamp", "max", lambda x: x.clamp(max=0.0), ("away", (2, 3)))
case("clamp", "both", lambda x: x.clamp(-1.0, 1.0), ("away", (3, 4)))
case("fill", "direct", lambda x: F.fill(x, value=2.0) + x, ("anyv", (2, 3)))
case("fill", "in-place", lambda x: (x * 1).fill_(3.0) * x, ("anyv", (2, 3)))
case("zero", "in-place", lambda x: (x * 1).zero_() + x * x, ("anyv", (2, 3)))
case("copy", "in-place", lambda x, y: (x * 1).copy_(y) * x, ("anyv", (2, 3)), ("anyv", (2, 3)))
case(
    "copy", "broadcast-source", lambda x, y: (x * 1).copy_(y) * x, ("anyv", (2, 3)), ("anyv", (3,))
)
# Through a wider float and back: float32 would lose more than finite differences resolve.
case("to_copy", "longdouble-and-back", lambda x: x.to(np.longdouble).double() * x, ("anyv", (2, 3)))

# -- reductions ---------------------------------------------------------------------------
for op in ("sum", "mean"):
    case(op, "all", lambda x, op=op: getattr(x, op)(), ("anyv", (2, 3, 4)))
    for dim in (0, 1, -1, (0, 2), (-1, -3), (1,)):
        for keepdim in (False, True):
            case(
                op,
                f"dim{dim}-keepdim{keepdim}",
                lambda x, op=op, dim=dim, keepdim=keepdim: getattr(x, op)(dim=dim, keepdim=keepdim),
                ("anyv", (2, 3, 4)),
            )
    case(op, "scalar-input", lambda x, op=op: getattr(x, op)(), ("anyv", ()))
    case(op, "scalar-input-dim0", lambda x, op=op: getattr(x, op)(0), ("anyv", ()))
    case(op, "function", lambda x, op=op: getattr(ng, op)(x, 1), ("anyv", (2, 3)))
for op in ("max", "min"):
    case(op, "all", lambda x, op=op: getattr(x, op)(), ("distinct", (3, 4)))
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            case(
                op,
                f"dim{dim}-keepdim{keepdim}",
                lambda x, op=op, dim=dim, keepdim=keepdim: getattr(x, op)(dim, keepdim)[0],
                ("distinct", (3, 4)),
            )
    case(op, "values-attr", lambda x, op=op: getattr(x, op)(dim=2).values, ("distinct", (2, 3, 4)))

# -- shapes ---------------------------------------------------------------------------------
case("reshape", "reshape", lambda x: x.reshape(3, 4), ("anyv", (2, 6)))
case("reshape", "view-minus-one", lambda x: x.view(-1, 2), ("anyv", (2, 6)))
case("reshape", "flatten", lambda x: x.flatten(), ("anyv", (2, 3, 2)))
case("reshape", "flatten-middle", lambda x: x.flatten(1, 2), ("anyv", (2, 3, 2, 2)))
case("reshape", "after-transpose", lambda x: x.t().reshape(-1), ("anyv", (2, 3)))
case("expand", "expand", lambda x: x.expand(2, 3, 4), ("anyv", (3, 1)))
case("expand", "minus-one", lambda x: x.expand(-1, 4), ("anyv", (3, 1)))
case("expand", "expand-as", lambda x: x.expand_as(ng.zeros(2, 4)), ("anyv", (4,)))
case("sum_to", "direct", lambda x: F.sum_to(x, shape=(3, 1)), ("anyv", (2, 3, 4)))
# A Python number first: torch's Scalar overloads (2 - x, 2 ** x), one input each.
case("rsub", "number-first", lambda x: 2.5 - x, ("anyv", (2, 3)))
case("rpow", "number-first", lambda x: 1.7**x, ("anyv", (2, 3)))
# The *_like ops take the target shape from a second operand (static graphs, unknown sizes).
case("reshape_like", "like", lambda x: F.reshape_like(x, ng.zeros(3, 4)), ("anyv", (2, 6)))
case("expand_like", "like", lambda x: F.expand_like(x, ng.zeros(2, 3, 4)), ("anyv", (3, 1)))
case("sum_to_like", "like", lambda x: F.sum_to_like(x, ng.zeros(3, 1)), ("anyv", (2, 3, 4)))
case(
    "cat_part",
    "run_time_size",
    lambda x: F.cat_part([x, ng.zeros(2, 4)], dim=0, part=1, sizes=(1, None, 2)),
    ("anyv", (5, 4)),
)
case("transpose", "transpose", lambda x: x.transpose(0, 2), ("anyv", (2, 3, 4)))
case("t", "matrix", lambda x: x.t(), ("anyv", (2, 3)))
case("t", "vector", lambda x: x.t() * x, ("anyv", (3,)))
case("transpose", "mT", lambda x: x.mT, ("anyv", (2, 3, 4)))
case("permute", "permute", lambda x: x.permute(2, 0, 1), ("anyv", (2, 3, 4)))
case("permute", "T", lambda x: x.T, ("anyv", (2, 3)))
case("squeeze", "all", lambda x: x.squeeze(), ("anyv", (1, 3, 1)))
case("squeeze", "dim", lambda x: x.squeeze(0), ("anyv", (1, 3, 1)))
case("squeeze", "negative-dim", lambda x: x.squeeze(-1), ("anyv", (1, 3, 1)))
case("unsqueeze", "front", lambda x: x.unsqueeze(0), ("anyv", (2, 3)))
case("unsqueeze", "negative", lambda x: x.unsqueeze(-1), ("anyv", (2, 3)))

# -- indexing -------------------------------------------------------------------------------
for cid, index in [
    ("int", 1),
    ("negative-int", -1),
    ("slice", slice(1, 3)),
    ("step-slice", slice(None, None, 2)),
    ("negative-slice", slice(-2, None)),
    ("int-slice", (0, slice(1, None))),
    ("slice-int", (slice(1, None), -1)),
    ("ellipsis", (Ellipsis, 2)),
    ("none", (None, 1)),
    ("fancy-repeated", [0, 2, 0, 0]),
    ("fancy-2d", ([0, 2, 2], [1, 1, 3])),
    ("bool-mask", BOOL_MASK),
    ("fancy-and-slice", ([2, 0, 2], slice(0, 3))),
]:
    case("getitem", cid, lambda x, index=index: x[index], ("anyv", (3, 4)))
case("getitem", "tensor-index", lambda x: x[ng.tensor([1, 1, 0])], ("anyv", (3, 4)))
case(
    "getitem",
    "iterate",
    lambda x: ng.stack(list(x)) * ng.arange(3.0).reshape(3, 1),
    ("anyv", (3, 2)),
)
case(
    "scatter",
    "repeated",
    lambda x: F.scatter(x, shape=(3, 4), index=([0, 2, 0], [1, 1, 1])),
    ("anyv", (3,)),
)
case(
    "scatter_like",
    "repeated",
    lambda x: F.scatter_like(x, ng.zeros(3, 4), index=([0, 2, 0], [1, 1, 1])),
    ("anyv", (3,)),
)
case(
    "index_put",
    "setitem-value",
    lambda x, v: _setitem(x, (0, slice(1, 3)), v),
    ("anyv", (3, 4)),
    ("anyv", (2,)),
)
case(
    "index_put",
    "setitem-broadcast",
    lambda x, v: _setitem(x, BOOL_MASK, v),
    ("anyv", (3, 4)),
    ("anyv", ()),
)
case("index_put", "setitem-constant", lambda x: _setitem(x, 1, 5.0), ("anyv", (3, 4)))
case("index_put", "copy_", lambda x, y: (x * 1).copy_(y) * x, ("anyv", (2, 3)), ("anyv", (2, 3)))
case(
    "index_put",
    "direct",
    lambda x, v: F.index_put(x, v, index=(slice(None), 0)),
    ("anyv", (3, 4)),
    ("anyv", (3,)),
)


def _setitem(x, index, value):
    y = x * 1.0  # a non-leaf copy may be changed in place
    y[index] = value
    return y


# -- joining --------------------------------------------------------------------------------
for dim in (0, 1, -1):
    case(
        "cat",
        f"dim{dim}",
        lambda a, b, dim=dim: ng.cat([a, b, a], dim=dim),
        ("anyv", (2, 3)),
        ("anyv", (2, 3)),
    )
    case(
        "stack",
        f"dim{dim}",
        lambda a, b, dim=dim: ng.stack([a, b, a], dim=dim),
        ("anyv", (2, 3)),
        ("anyv", (2, 3)),
    )
case("cat", "unequal-sizes", lambda a, b: ng.cat([a, b], dim=1), ("anyv", (2, 1)), ("anyv", (2, 3)))
case("cat", "constant-member", lambda a: ng.cat([a, ng.ones(2, 3)]), ("anyv", (1, 3)))
case("stack", "constant-member", lambda a: ng.stack([ng.ones(3), a]), ("anyv", (3,)))

# -- linear algebra -------------------------------------------------------------------------
for cid, sa, sb in [
    ("1d-1d", (3,), (3,)),
    ("2d-1d", (2, 3), (3,)),
    ("1d-2d", (3,), (3, 2)),
    ("2d-2d", (2, 3), (3, 4)),
    ("3d-3d", (2, 2, 3), (2, 3, 4)),
    ("3d-2d", (2, 2, 3), (3, 4)),
    ("2d-3d", (4, 2), (2, 2, 3)),
    ("3d-1d", (2, 2, 3), (3,)),
    ("1d-3d", (3,), (2, 3, 2)),
    ("broadcast-4d-3d", (2, 1, 2, 3), (3, 3, 2)),
]:
    case("matmul", cid, lambda a, b: a @ b, ("anyv", sa), ("anyv", sb))
case("matmul", "mm", lambda a, b: a.mm(b), ("anyv", (2, 3)), ("anyv", (3, 2)))
case("bmm", "bmm", lambda a, b: a.bmm(b), ("anyv", (2, 2, 3)), ("anyv", (2, 3, 4)))
# matmul of two batches records bmm between expanded, reshaped operands, as torch
case("bmm", "matmul-3d-3d", lambda a, b: a @ b, ("anyv", (2, 2, 3)), ("anyv", (2, 3, 4)))
case("bmm", "matmul-broadcast", lambda a, b: a @ b, ("anyv", (2, 1, 2, 3)), ("anyv", (3, 3, 2)))
case(
    "matmul",
    "linear-without-bias",
    lambda x, w: ng.nn.functional.linear(x, w),
    ("anyv", (4, 2)),
    ("anyv", (3, 2)),
)
for cid, shape in [("linear", (4, 2)), ("linear-vector", (2,)), ("linear-3d", (2, 4, 2))]:
    case(
        "addmm",
        cid,
        lambda x, w, b: ng.nn.functional.linear(x, w, b),
        ("anyv", shape),
        ("anyv", (3, 2)),
        ("anyv", (3,)),
    )
case(
    "addmm",
    "broadcast-bias",
    lambda b, x, y: ng.addmm(b, x, y),
    ("anyv", (1, 4)),
    ("anyv", (2, 3)),
    ("anyv", (3, 4)),
)
case("matmul", "same-tensor", lambda a: a @ a, ("anyv", (3, 3)))

# -- neural-network blocks ------------------------------------------------------------------
for op in ("softmax", "log_softmax"):
    for dim in (0, 1, -1):
        case(op, f"dim{dim}", lambda x, op=op, dim=dim: getattr(x, op)(dim), ("anyv", (3, 4)))
    case(op, "3d", lambda x, op=op: getattr(nnF, op)(x, dim=1), ("anyv", (2, 3, 2)))
    case(op, "large-logits", lambda x, op=op: getattr(x, op)(-1) * 1.0, ("const_shift", (2, 3)))
TARGET = np.array([2, 0, 1, 2])
for reduction in ("mean", "sum", "none"):
    case(
        "mse_loss",
        reduction,
        lambda x, y, r=reduction: nnF.mse_loss(x, y, reduction=r),
        ("anyv", (2, 3)),
        ("anyv", (2, 3)),
    )
    case(
        "nll_loss",
        reduction,
        lambda x, r=reduction: nnF.nll_loss(x, ng.tensor(TARGET), reduction=r),
        ("anyv", (4, 3)),
    )
    case(
        "nll_loss",
        f"cross_entropy-{reduction}",
        lambda x, r=reduction: nnF.cross_entropy(x, ng.tensor(TARGET), reduction=r),
        ("anyv", (4, 3)),
    )
case("mse_loss", "module", lambda x, y: ng.nn.MSELoss()(x, y), ("anyv", (3,)), ("anyv", (3,)))
case(
    "nll_loss", "module", lambda x: ng.nn.CrossEntropyLoss()(x, ng.tensor(TARGET)), ("anyv", (4, 3))
)

# -- in-place ops on non-leaves -------------------------------------------------------------
case("add", "add_", lambda x, y: (x * 1).add_(y), ("anyv", (2, 3)), ("anyv", (3,)))
case("add", "iadd", lambda x, y: _iop(x, y, "iadd"), ("anyv", (2, 3)), ("anyv", (2, 3)))
case("sub", "sub_", lambda x, y: (x * 1).sub_(y), ("anyv", (2, 3)), ("anyv", (2, 3)))
case("mul", "mul_", lambda x, y: (x * 1).mul_(y), ("anyv", (2, 3)), ("anyv", (2, 3)))
case("mul", "imul-self", lambda x: _iop(x, None, "imul-self"), ("anyv", (2, 3)))
case("div", "div_", lambda x, y: (x * 1).div_(y), ("anyv", (2, 3)), ("away", (2, 3)))
case("pow_scalar", "pow_", lambda x: (x * 1).pow_(3), ("anyv", (2, 3)))
case("pow", "pow_-tensor", lambda x, y: (x * 1).pow_(y), ("pos", (2, 3)), ("anyv", (2, 3)))
case("exp", "exp_", lambda x: (x * 2).exp_(), ("anyv", (2, 3)))
case("clamp", "clamp_", lambda x: (x * 1).clamp_(-1.0, 1.0), ("away", (3, 4)))
case("exp", "chain-of-in-place", lambda x: (x * 1).mul_(2).add_(1).exp_().log(), ("anyv", (2, 3)))


def _iop(x, y, kind):
    z = x * 1
    if kind == "iadd":
        z += y
    elif kind == "imul-self":
        z *= x
    return z


# -- reductions, sorting and index arithmetic of torch's surface ------------------------------
case("dot", "vectors", lambda x, y: x.dot(y), ("anyv", (4,)), ("anyv", (4,)))
case("dot", "same-vector", lambda x: ng.dot(x, x), ("anyv", (3,)))
for p in (2, 1, 3, 1.5, 0.5, -1, float("inf"), float("-inf")):
    kind = "distinct" if p in (float("inf"), float("-inf")) else "away"
    case("norm", f"p{p}", lambda x, p=p: x.norm(p), (kind, (2, 3)))
    case("norm", f"p{p}-dim1", lambda x, p=p: x.norm(p, dim=1), (kind, (2, 3)))
    case("norm", f"p{p}-dim0-keepdim", lambda x, p=p: x.norm(p, 0, True), (kind, (2, 3)))
case("norm", "fro-function", lambda x: ng.norm(x, "fro", dim=(0, 1)), ("away", (2, 3)))
case("norm", "p0-plus-sum", lambda x: x.norm(0) + x.sum(), ("away", (2, 3)))
for op in ("var", "std"):
    case(op, "all", lambda x, op=op: getattr(x, op)(), ("anyv", (2, 3)))
    case(op, "dim1", lambda x, op=op: getattr(x, op)(1), ("anyv", (2, 3)))
    case(
        op,
        "dim0-keepdim-c0",
        lambda x, op=op: getattr(x, op)(0, keepdim=True, correction=0),
        ("anyv", (3, 2)),
    )
    case(
        op,
        "unbiased-false",
        lambda x, op=op: getattr(ng, op)(x, (0, 1), unbiased=False),
        ("anyv", (2, 3)),
    )
case("prod", "all", lambda x: x.prod(), ("away", (2, 3)))
case("prod", "dim1", lambda x: x.prod(1), ("away", (2, 3)))
case("prod", "dim0-keepdim", lambda x: ng.prod(x, 0, keepdim=True), ("away", (3, 2)))
case("prod", "scalar", lambda x: x.prod(), ("away", ()))
for descending in (False, True):
    case(
        "sort",
        f"dim1-descending{descending}",
        lambda x, d=descending: x.sort(1, d).values,
        ("distinct", (3, 4)),
    )
    case(
        "sort",
        f"dim0-descending{descending}",
        lambda x, d=descending: ng.sort(x, 0, d)[0],
        ("distinct", (3, 4)),
    )
LIKE = ng.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, -1.0]])  # the values whose order is used
case(
    "sort_as",
    "direct",
    lambda x: F.sort_as(x, LIKE, dim=1),
    ("anyv", (2, 3)),
)
case(
    "unsort_as",
    "direct",
    lambda x: F.unsort_as(x, LIKE.t(), dim=0, descending=True),
    ("anyv", (3, 2)),
)
case("add_alpha", "method", lambda x, y: x.add(y, alpha=0.5), ("anyv", (2, 3)), ("anyv", (3,)))
case(
    "add_alpha",
    "in-place",
    lambda x, y: (x * 1).add_(y, alpha=3),
    ("anyv", (2, 3)),
    ("anyv", (2, 3)),
)
case("sub_alpha", "method", lambda x, y: x.sub(y, alpha=2), ("anyv", (3, 1)), ("anyv", (4,)))
case(
    "sub_alpha", "in-place", lambda x, y: (x * 1).sub_(y, alpha=2), ("anyv", (2, 3)), ("anyv", (3,))
)
INDEX = ng.tensor([2, 0, 2])
case("index_select", "dim0", lambda x: x.index_select(0, INDEX), ("anyv", (3, 4)))
case("index_select", "dim1", lambda x: ng.index_select(x, 1, INDEX), ("anyv", (2, 3)))
case("index_add", "dim0", lambda x, s: x.index_add(0, INDEX, s), ("anyv", (3, 4)), ("anyv", (3, 4)))
case(
    "index_add",
    "alpha-dim1",
    lambda x, s: ng.index_add(x, 1, INDEX, s, alpha=2.5),
    ("anyv", (2, 3)),
    ("anyv", (2, 3)),
)
case(
    "index_add",
    "in-place",
    lambda x, s: (x * 1).index_add_(1, INDEX, s),
    ("anyv", (2, 3)),
    ("anyv", (2, 3)),
)


# ---------------------------------------------------------------------------------------------


# -- convolutional layers ---------------------------------------------------------------
GEOMETRY = dict(stride=(2, 1), padding=((1, 1), (0, 2)), dilation=(1, 2), groups=2)
POOL = dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), dilation=(1, 1), ceil_mode=True)
AVG = dict(
    kernel_size=(3, 2),
    stride=(2, 2),
    padding=(1, 1),
    ceil_mode=True,
    count_include_pad=False,
    divisor_override=None,
)
POOLED = np.random.default_rng(7).permutation(2 * 2 * 5 * 4).reshape(2, 2, 5, 4) * 0.5
case(
    "conv2d",
    "bias",
    lambda x, w, b: nnF.conv2d(x, w, b),
    ("anyv", (2, 2, 4, 4)),
    ("anyv", (3, 2, 3, 3)),
    ("anyv", (3,)),
)
case(
    "conv2d",
    "stride-padding-dilation-groups",
    lambda x, w, b: nnF.conv2d(x, w, b, stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2),
    ("anyv", (1, 4, 5, 6)),
    ("anyv", (4, 2, 2, 2)),
    ("anyv", (4,)),
)
case(
    "conv2d",
    "same-even-kernel",
    lambda x, w: nnF.conv2d(x, w, padding="same"),
    ("anyv", (1, 2, 4, 5)),
    ("anyv", (2, 2, 2, 3)),
)
case(
    "conv2d",
    "unbatched",
    lambda x, w: nnF.conv2d(x, w, stride=2),
    ("anyv", (2, 5, 5)),
    ("anyv", (1, 2, 3, 3)),
)
case(
    "conv2d_input_grad",
    "direct",
    lambda g, w: F.conv2d_input_grad(g, w, input_hw=(5, 4), **GEOMETRY),
    ("anyv", (1, 4, 3, 4)),
    ("anyv", (4, 2, 2, 2)),
)
case(
    "conv2d_weight_grad",
    "direct",
    lambda x, g: F.conv2d_weight_grad(x, g, kernel_size=(2, 2), **GEOMETRY),
    ("anyv", (1, 4, 5, 4)),
    ("anyv", (1, 4, 3, 4)),
)
case("max_pool2d", "side-by-side", lambda x: nnF.max_pool2d(x, 2), ("distinct", (2, 2, 4, 4)))
case(
    "max_pool2d",
    "overlapping-ceil-padded",
    lambda x: nnF.max_pool2d(x, (3, 2), (2, 1), 1, ceil_mode=True),
    ("distinct", (2, 2, 5, 4)),
)
case(
    "max_pool2d", "dilated", lambda x: nnF.max_pool2d(x, 2, 1, dilation=2), ("distinct", (1, 5, 5))
)
case(
    "max_pool2d_scatter",
    "direct",
    lambda g: F.max_pool2d_scatter(g, ng.tensor(POOLED), **POOL),
    ("anyv", (2, 2, 3, 5)),
)
case(
    "max_pool2d_gather",
    "direct",
    lambda h: F.max_pool2d_gather(h, ng.tensor(POOLED), **POOL),
    ("anyv", (2, 2, 5, 4)),
)
case("avg_pool2d", "side-by-side", lambda x: nnF.avg_pool2d(x, 2), ("anyv", (2, 2, 4, 4)))
case(
    "avg_pool2d",
    "padded-ceil-uncounted",
    lambda x: nnF.avg_pool2d(x, (3, 2), 2, 1, ceil_mode=True, count_include_pad=False),
    ("anyv", (2, 5, 4)),
)
case(
    "avg_pool2d",
    "divisor",
    lambda x: nnF.avg_pool2d(x, 3, 1, 1, divisor_override=4),
    ("anyv", (1, 1, 4, 4)),
)
case(
    "avg_pool2d_backward",
    "direct",
    lambda g: F.avg_pool2d_backward(g, input_hw=(5, 4), **AVG),
    ("anyv", (2, 2, 3, 3)),
)
case(
    "batch_norm",
    "training-affine",
    lambda x, w, b: nnF.batch_norm(x, None, None, w, b, training=True),
    ("anyv", (3, 2, 2, 2)),
    ("anyv", (2,)),
    ("anyv", (2,)),
)
case(
    "batch_norm",
    "training-1d",
    lambda x: nnF.batch_norm(x, None, None, training=True),
    ("anyv", (4, 3)),
)
case(
    "batch_norm",
    "eval-affine",
    lambda x, w, b: nnF.batch_norm(x, ng.tensor([0.5, -0.25]), ng.tensor([2.0, 0.75]), w, b),
    ("anyv", (3, 2, 4)),
    ("anyv", (2,)),
    ("anyv", (2,)),
)


# -- rounding division, scaled variants and the losses of the third round --------------
case("remainder", "tensor-tensor", lambda x, y: x % y, ("anyv", (2, 3)), ("pos", (2, 3)))
case("remainder_scalar", "python-divisor", lambda x: x % 0.7, ("anyv", (2, 3)))
case(
    "div_rounding",
    "true-division",
    lambda x, y: x.div(y, rounding_mode=None),
    ("anyv", (2, 3)),
    ("away", (3,)),
)
case(
    "div_rounding",
    "floor-plus-product",
    lambda x, y: x.div(y, rounding_mode="floor") + x * y,
    ("anyv", (2, 3)),
    ("pos", (2, 3)),
)
case(
    "addmm_scaled",
    "beta-alpha",
    lambda b, x, y: ng.addmm(b, x, y, beta=0.5, alpha=-2),
    ("anyv", (2, 4)),
    ("anyv", (2, 3)),
    ("anyv", (3, 4)),
)
case(
    "sum_typed",
    "to-float64",
    lambda x: (x * 1).sum(0, dtype=np.longdouble).double(),
    ("anyv", (2, 3)),
)
case(
    "smooth_l1_loss",
    "beta",
    lambda x, y: nnF.smooth_l1_loss(x, y, beta=0.8),
    ("anyv", (3, 4)),
    ("anyv", (3, 4)),
)
case(
    "huber_loss",
    "none",
    lambda x, y: nnF.huber_loss(x, y, reduction="none", delta=0.6),
    ("anyv", (3, 4)),
    ("anyv", (3, 4)),
)
NLL_TARGET = np.array([[0, 2], [1, 2]])
case(
    "nll_loss_nd",
    "weight-ignore-3d",
    lambda x: nnF.nll_loss(
        x,
        ng.tensor(NLL_TARGET),
        weight=ng.tensor([0.5, 2.0, 1.5], dtype=ng.float64),
        ignore_index=1,
    ),
    ("anyv", (2, 3, 2)),
)
case(
    "nll_loss_nd",
    "label-smoothing",
    lambda x: nnF.cross_entropy(x, ng.tensor([0, 2, 1]), label_smoothing=0.2, ignore_index=2),
    ("anyv", (3, 4)),
)


def _make(case_id, makers):
    rng = _rng(case_id)
    out = []
    for kind, spec in makers:
        if kind == "const_shift":
            data = anyv(spec, rng) + 50.0
        else:
            data = {"away": away, "distinct": distinct, "pos": pos, "anyv": anyv}[kind](spec, rng)
        out.append(ng.tensor(np.asarray(data, dtype=np.float64), requires_grad=True))
    return tuple(out)


ALL_CASES = [(cid, fn, makers) for op in CASES for cid, fn, makers in CASES[op]]


def missing_cases(ops: dict) -> str | None:
    """What to write for the differentiable ops of ``ops`` without a case (None: all
    have one): the file, and a line to start from."""
    missing = sorted(name for name, op in ops.items() if op.differentiable and name not in CASES)
    if not missing:
        return None
    return (
        f"ops without a gradcheck case: {missing}. Add one per op to tests/gradcheck_cases.py, "
        f'e.g. case("{missing[0]}", "basic", lambda x: F.{missing[0]}(x), ("anyv", (2, 3))) '
        f"(an input of shape (2, 3) that requires grad; the kinds of input are listed above CASES)"
    )


FILL_MASK = ng.tensor([[True, False, True], [False, False, True]])
case("masked_fill", "number", lambda x: x.masked_fill(FILL_MASK, 0.5), ("anyv", (2, 3)))
case("masked_fill", "broadcast mask", lambda x: x.masked_fill(FILL_MASK[0], -1.0), ("anyv", (4, 3)))
case("masked_fill", "in-place", lambda x: (x * 1).masked_fill_(FILL_MASK, 2.0), ("anyv", (2, 3)))
case(
    "masked_fill_tensor",
    "0-d value",
    lambda x, v: ng.masked_fill(x, FILL_MASK, v.sum()),
    ("anyv", (2, 3)),
    ("anyv", (1,)),
)
case("tril", "diagonal 0", lambda x: x.tril(), ("anyv", (3, 4)))
case("tril", "batched -1", lambda x: ng.tril(x, diagonal=-1), ("anyv", (2, 3, 3)))
case("triu", "diagonal 1", lambda x: x.triu(1), ("anyv", (4, 3)))
case("triu", "in-place", lambda x: (x * 1).triu_(-1), ("anyv", (3, 3)))
GATHER_INDEX = ng.tensor([[2, 0, 2, 2], [1, 1, 0, 2]])
case("gather", "dim1 repeats", lambda x: x.gather(1, GATHER_INDEX), ("anyv", (2, 3)))
case("gather", "dim0", lambda x: ng.gather(x, 0, GATHER_INDEX[:, :3] % 2), ("anyv", (2, 3)))
case(
    "scatter_add",
    "dim1",
    lambda x, s: x.scatter_add(1, GATHER_INDEX, s),
    ("anyv", (2, 3)),
    ("anyv", (2, 4)),
)
