"""``ng.autograd.forward_ad`` against ``torch.autograd.forward_ad``: every op's tangent
(float64, rtol 1e-10), the dual-level rules and errors, and forward mode beside reverse.

``TORCH_CASES`` runs one program per op in both libraries (``lib`` is ``ng`` or
``torch``); every case of ``gradcheck_cases.CASES`` (which covers every
differentiable op of the table, the internal ones included) is also checked against
the Jacobian that reverse mode gives.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from gradcheck_cases import ALL_CASES, _make

import naivegraph as ng
import naivegraph.autograd.forward_ad as fwAD
from naivegraph import fast
from naivegraph.ops import OPS
from naivegraph.ops.forward import derivation_of
from naivegraph.ops.table import LINEAR, MULTILINEAR, SELF_TRANSPOSED

torch = pytest.importorskip("torch")
tfwAD = torch.autograd.forward_ad
# torch's first forward-AD use scripts a helper with torch.jit, which torch deprecates.
pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)

MASK = np.array([[True, False, True], [False, True, True]])
TARGET = [2, 0, 1, 2]


def _ce(lib, x, r):
    return lib.nn.functional.cross_entropy(x, lib.tensor(TARGET), reduction=r)


def _setitem(lib, x, v):
    y = x * 1.0
    y[0, 1:3] = v
    return y


# op -> [(case id, program(lib, *inputs), input shapes (positive values where "+"))]
TORCH_CASES: dict[str, list] = {
    "add": [
        ("broadcast", lambda lib, x, y: x + y, [(2, 3), (3,)]),
        ("number", lambda lib, x: 2.5 + x, [(3,)]),
    ],
    "sub": [
        ("broadcast", lambda lib, x, y: x - y, [(3, 1), (4,)]),
        ("number", lambda lib, x: x - 2.0, [(3,)]),
    ],
    "mul": [
        ("broadcast", lambda lib, x, y: x * y, [(2, 3), (3,)]),
        ("self", lambda lib, x: x * x, [(4,)]),
    ],
    "div": [("broadcast", lambda lib, x, y: x / y, [(2, 3), ("+", (3,))])],
    "reciprocal": [("number", lambda lib, x: 2.0 / x, [("+", (2, 3))])],
    "pow_scalar": [
        ("cube", lambda lib, x: x**3, [(2, 3)]),
        ("sqrt", lambda lib, x: x**0.5, [("+", (3,))]),
    ],
    "pow": [("tensors", lambda lib, x, y: x**y, [("+", (2, 3)), (3,)])],
    "rsub": [("number", lambda lib, x: 2.5 - x, [(2, 3)])],
    "rpow": [("number", lambda lib, x: 1.7**x, [(2, 3)])],
    "maximum": [("broadcast", lambda lib, x, y: lib.maximum(x, y), [(2, 3), (3,)])],
    "minimum": [("broadcast", lambda lib, x, y: lib.minimum(x, y), [(2, 3), (3,)])],
    "where": [("mask", lambda lib, x, y: lib.where(lib.tensor(MASK), x, y), [(2, 3), (3,)])],
    "neg": [("neg", lambda lib, x: -x, [(2, 3)])],
    "exp": [("exp", lambda lib, x: x.exp(), [(2, 3)])],
    "log": [("log", lambda lib, x: x.log(), [("+", (2, 3))])],
    "sqrt": [("sqrt", lambda lib, x: x.sqrt(), [("+", (2, 3))])],
    "sin": [("sin", lambda lib, x: x.sin(), [(2, 3)])],
    "cos": [("cos", lambda lib, x: x.cos(), [(2, 3)])],
    "tanh": [("tanh", lambda lib, x: x.tanh(), [(2, 3)])],
    "sigmoid": [("sigmoid", lambda lib, x: x.sigmoid(), [(2, 3)])],
    "relu": [("relu", lambda lib, x: x.relu(), [(2, 3)])],
    "abs": [("abs", lambda lib, x: x.abs(), [(2, 3)])],
    "clamp": [("both", lambda lib, x: x.clamp(-0.5, 0.5), [(3, 4)])],
    "clone": [("clone", lambda lib, x: x.clone(), [(2, 3)])],
    "to_copy": [("float32", lambda lib, x: x.float().double() * 1.0, [(2, 3)])],
    "fill": [("fill_", lambda lib, x: (x * 1).fill_(3.0) * x, [(2, 3)])],
    "zero": [("zero_", lambda lib, x: (x * 1).zero_() + x * x, [(2, 3)])],
    "copy": [("copy_", lambda lib, x, y: (x * 1).copy_(y) * x, [(2, 3), (3,)])],
    "sum": [
        ("all", lambda lib, x: x.sum(), [(2, 3)]),
        ("dim", lambda lib, x: x.sum(1, keepdim=True), [(2, 3)]),
    ],
    "mean": [
        ("all", lambda lib, x: x.mean(), [(2, 3)]),
        ("dims", lambda lib, x: x.mean((0, 2)), [(2, 3, 4)]),
    ],
    "max": [
        ("all", lambda lib, x: x.max(), [(3, 4)]),
        ("dim", lambda lib, x: x.max(1)[0], [(3, 4)]),
    ],
    "min": [
        ("all", lambda lib, x: x.min(), [(3, 4)]),
        ("dim", lambda lib, x: x.min(0).values, [(3, 4)]),
    ],
    "reshape": [("reshape", lambda lib, x: x.reshape(3, 2), [(2, 3)])],
    "expand": [("expand", lambda lib, x: x.expand(2, 3, 4), [(3, 1)])],
    "transpose": [("transpose", lambda lib, x: x.transpose(0, 2), [(2, 3, 4)])],
    "t": [("t", lambda lib, x: x.t(), [(2, 3)])],
    "permute": [("permute", lambda lib, x: x.permute(2, 0, 1), [(2, 3, 4)])],
    "squeeze": [("squeeze", lambda lib, x: x.squeeze(0), [(1, 3)])],
    "unsqueeze": [("unsqueeze", lambda lib, x: x.unsqueeze(-1), [(2, 3)])],
    "getitem": [
        ("slice", lambda lib, x: x[1:, ::2], [(3, 4)]),
        ("fancy", lambda lib, x: x[[0, 2, 0]], [(3, 4)]),
        ("mask", lambda lib, x: x[lib.tensor(MASK)], [(2, 3)]),
    ],
    "index_put": [("setitem", _setitem, [(3, 4), (2,)])],
    "cat": [("cat", lambda lib, a, b: lib.cat([a, b, a], dim=1), [(2, 3), (2, 1)])],
    "stack": [("stack", lambda lib, a, b: lib.stack([a, b], dim=-1), [(2, 3), (2, 3)])],
    "bmm": [
        ("bmm", lambda lib, a, b: a.bmm(b), [(2, 2, 3), (2, 3, 4)]),
        ("matmul-3d-3d", lambda lib, a, b: a @ b, [(2, 2, 3), (2, 3, 4)]),
    ],
    "matmul": [
        ("2d-2d", lambda lib, a, b: a @ b, [(2, 3), (3, 4)]),
        ("batched-1d", lambda lib, a, b: a @ b, [(2, 2, 3), (3,)]),
    ],
    "addmm": [
        ("linear", lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), [(4, 2), (3, 2), (3,)])
    ],
    "softmax": [("dim1", lambda lib, x: x.softmax(1), [(3, 4)])],
    "log_softmax": [("dim0", lambda lib, x: x.log_softmax(0), [(3, 4)])],
    "nll_loss": [
        (r, lambda lib, x, r=r: _ce(lib, x, r), [(4, 3)]) for r in ("mean", "sum", "none")
    ],
    "mse_loss": [
        (r, lambda lib, x, y, r=r: lib.nn.functional.mse_loss(x, y, reduction=r), [(2, 3), (2, 3)])
        for r in ("mean", "sum", "none")
    ],
    "add_alpha": [("alpha", lambda lib, x, y: x.add(y, alpha=2.5), [(2, 3), (3,)])],
    "sub_alpha": [("alpha", lambda lib, x, y: x.sub(y, alpha=-0.5), [(2, 3), (2, 3)])],
    "dot": [("dot", lambda lib, x, y: x.dot(y), [(4,), (4,)])],
    "norm": [
        ("2", lambda lib, x: x.norm(), [(2, 3)]),
        ("1 dim", lambda lib, x: x.norm(p=1, dim=1), [(2, 3)]),
    ],
    "sort": [("dim", lambda lib, x: x.sort(dim=1)[0], [(3, 4)])],
    "var": [("dim", lambda lib, x: x.var(dim=1), [(3, 4)])],
    "std": [("all", lambda lib, x: x.std(), [(3, 4)])],
    "prod": [
        ("all", lambda lib, x: x.prod(), [(2, 3)]),
        ("dim", lambda lib, x: x.prod(dim=0), [(2, 3)]),
    ],
    "sign": [("sign", lambda lib, x: x.sign() * x, [(2, 3)])],
    "index_select": [("dim 1", lambda lib, x: x.index_select(1, lib.tensor([2, 0, 2])), [(2, 3)])],
    "index_add": [
        ("dim 0", lambda lib, x, y: (x * 1).index_add_(0, lib.tensor([1, 0]), y), [(2, 3), (2, 3)])
    ],
    "masked_fill": [("number", lambda lib, x: x.masked_fill(lib.tensor(MASK), 0.5), [(2, 3)])],
    "masked_fill_tensor": [
        ("0-d value", lambda lib, x, v: x.masked_fill(lib.tensor(MASK), v[0]), [(2, 3), (1,)])
    ],
    "tril": [("diagonal -1", lambda lib, x: x.tril(-1), [(2, 3, 4)])],
    "triu": [("diagonal 1", lambda lib, x: lib.triu(x, diagonal=1), [(3, 4)])],
    "gather": [("dim 1", lambda lib, x: x.gather(1, lib.tensor([[2, 0, 2], [1, 1, 0]])), [(2, 3)])],
    "scatter_add": [
        (
            "dim 0",
            lambda lib, x, y: x.scatter_add(0, lib.tensor([[1, 0, 1], [1, 1, 0]]), y),
            [(2, 3), (2, 3)],
        )
    ],
    # convolutional layers, division and losses of the third round
    "conv2d": [
        (
            "bias-stride-groups",
            lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, stride=2, padding=1, groups=2),
            [(2, 4, 5, 5), (2, 2, 3, 3), (2,)],
        )
    ],
    "max_pool2d": [
        ("padded", lambda lib, x: lib.nn.functional.max_pool2d(x, 3, 2, 1), [(1, 2, 5, 5)])
    ],
    "avg_pool2d": [
        ("ceil", lambda lib, x: lib.nn.functional.avg_pool2d(x, 2, ceil_mode=True), [(1, 2, 5, 5)])
    ],
    "batch_norm": [
        (
            "training",
            lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b, training=True),
            [(4, 3, 2), (3,), (3,)],
        )
    ],
    "remainder": [("tensor", lambda lib, x, y: x % y, [(2, 3), ("+", (2, 3))])],
    "remainder_scalar": [("number", lambda lib, x: x % 0.3, [(2, 3)])],
    "div_rounding": [
        ("floor", lambda lib, x, y: x.div(y, rounding_mode="floor"), [(2, 3), ("+", (2, 3))]),
        ("true", lambda lib, x, y: x.div(y, rounding_mode=None), [(2, 3), ("+", (2, 3))]),
    ],
    "addmm_scaled": [
        (
            "beta-alpha",
            lambda lib, b, x, y: lib.addmm(b, x, y, beta=0.5, alpha=2),
            [(2, 4), (2, 3), (3, 4)],
        )
    ],
    "sum_typed": [("float32", lambda lib, x: x.sum(1, dtype=lib.float32).double(), [(2, 3)])],
    "smooth_l1_loss": [
        (
            "beta",
            lambda lib, x, y: lib.nn.functional.smooth_l1_loss(x, y, beta=0.5),
            [(2, 3), (2, 3)],
        )
    ],
    "huber_loss": [
        (
            "none",
            lambda lib, x, y: lib.nn.functional.huber_loss(x, y, reduction="none", delta=0.3),
            [(2, 3), (2, 3)],
        )
    ],
    "nll_loss_nd": [
        (
            "weight-ignore",
            lambda lib, x: lib.nn.functional.nll_loss(
                x,
                lib.tensor([0, 2, 1, 2]),
                weight=lib.tensor([1.0, 2.0, 0.5], dtype=lib.float64),
                ignore_index=1,
            ),
            [(4, 3)],
        )
    ],
}
# Ops with no torch counterpart to run (static-graph helpers, reached through the cases
# of test_gradcheck_ops below instead).
NOT_IN_TORCH = {
    "sum_to",
    "reshape_like",
    "expand_like",
    "sum_to_like",
    "scatter",
    "scatter_like",
    "sort_as",  # sort's gradient helpers, reached through the sort case
    "unsort_as",
    "conv2d_input_grad",  # the convolution's and the pools' gradients
    "conv2d_weight_grad",
    "max_pool2d_scatter",
    "max_pool2d_gather",
    "avg_pool2d_backward",
    "cat_part",  # cat's gradient where a static graph knows a size only at run time
}
TORCH_PARAMS = [
    (op, cid, fn, shapes) for op, cases in TORCH_CASES.items() for cid, fn, shapes in cases
]


def _values(case_id: str, shapes: list) -> list[np.ndarray]:
    rng = np.random.default_rng(zlib.crc32(case_id.encode()))
    out = []
    for spec in shapes:
        positive = spec[0] == "+"
        shape = spec[1] if positive else spec
        # distinct values (no ties at max/min, no kinks at 0 for relu/abs/clamp)
        n = int(np.prod(shape))
        v = (rng.permutation(n) + 1) * 0.37 / max(n, 1) + rng.uniform(0.0, 0.01, n)
        if not positive:
            v = v * rng.choice([-1.0, 1.0], n) * 1.7
        out.append(v.reshape(shape))
    return out


def _torch_jvp(fn, primals, tangents):
    with tfwAD.dual_level():
        duals = [
            tfwAD.make_dual(torch.tensor(p), torch.tensor(t)) for p, t in zip(primals, tangents)
        ]
        out = fn(torch, *duals)
        primal, tangent = tfwAD.unpack_dual(out)
        return primal.detach().numpy(), tangent.detach().numpy()


def _ng_jvp(fn, primals, tangents):
    with fwAD.dual_level():
        duals = [fwAD.make_dual(ng.tensor(p), ng.tensor(t)) for p, t in zip(primals, tangents)]
        out = fn(ng, *duals)
        primal, tangent = fwAD.unpack_dual(out)
        return primal.numpy(), tangent.numpy()


def test_every_differentiable_op_has_a_torch_case_or_is_a_static_helper():
    differentiable = {name for name, op in OPS.items() if op.differentiable}
    assert differentiable - set(TORCH_CASES) == NOT_IN_TORCH
    assert set(TORCH_CASES) <= set(OPS)


def test_the_classification_names_only_ops_of_the_table_once():
    assert (SELF_TRANSPOSED | LINEAR | MULTILINEAR) <= set(OPS)
    assert not (SELF_TRANSPOSED & LINEAR) and not (LINEAR & MULTILINEAR)
    assert derivation_of(OPS["exp"]) == "self-transposed"
    assert derivation_of(OPS["cat"]) == "linear"
    assert derivation_of(OPS["matmul"]) == "multilinear"
    assert derivation_of(OPS["log_softmax"]) == "transposed"


@pytest.mark.parametrize(
    "op,cid,fn,shapes", TORCH_PARAMS, ids=[f"{p[0]}-{p[1]}" for p in TORCH_PARAMS]
)
def test_tangent_matches_torch_forward_ad(op, cid, fn, shapes):
    primals = _values(f"{op}-{cid}", shapes)
    tangents = _values(f"{op}-{cid}-t", [s[1] if s[0] == "+" else s for s in shapes])
    want_primal, want_tangent = _torch_jvp(fn, primals, tangents)
    primal, tangent = _ng_jvp(fn, primals, tangents)
    np.testing.assert_allclose(primal, want_primal, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tangent, want_tangent, rtol=1e-10, atol=1e-12)
    assert tangent.shape == want_tangent.shape and tangent.dtype == want_tangent.dtype


@pytest.mark.parametrize("cid,fn,makers", ALL_CASES, ids=[c[0] for c in ALL_CASES])
def test_tangent_is_the_jacobian_times_the_tangents(cid, fn, makers):
    """Every case of the gradcheck suite: J t from forward mode equals J (by reverse
    mode, one row per output) applied to t."""
    inputs = _make(cid, makers)
    rng = np.random.default_rng(zlib.crc32((cid + "t").encode()))
    tangents = [ng.tensor(rng.uniform(-1, 1, tuple(x.shape))) for x in inputs]
    out = fn(*inputs)
    want = np.zeros(out.numel())
    for k in range(out.numel()):
        seed = np.zeros(out.numel())
        seed[k] = 1.0
        grads = ng.autograd.grad(
            fn(*inputs), inputs, ng.tensor(seed.reshape(tuple(out.shape))), allow_unused=True
        )
        want[k] = sum(float((g * t).sum()) for g, t in zip(grads, tangents) if g is not None)
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x.detach(), t) for x, t in zip(inputs, tangents)]
        tangent = fwAD.unpack_dual(fn(*duals)).tangent
    np.testing.assert_allclose(tangent.numpy().reshape(-1), want, rtol=1e-10, atol=1e-12)


def test_the_fast_layer_does_not_change_a_single_bit():
    results = []
    for on in (True, False):
        previous = fast.enabled
        fast.set_enabled(on)
        try:
            results.append(
                [
                    _ng_jvp(fn, _values(f"{o}-{c}", s), _values(f"{o}-{c}", s))[1]
                    for o, c, fn, s in TORCH_PARAMS
                    if all(x[0] != "+" for x in s)
                ]
            )
        finally:
            fast.set_enabled(previous)
    for with_fast, without in zip(*results):
        assert np.array_equal(with_fast, without) and with_fast.dtype == without.dtype


# ----------------------------------------------------------------------------- levels
def test_dual_level_yields_zero_and_drops_tangents_when_it_ends():
    with fwAD.dual_level() as level:
        x = fwAD.make_dual(ng.tensor([1.0, 2.0]), ng.tensor([1.0, 0.5]))
        y = x * 3
        assert level == 0
        assert fwAD.unpack_dual(y).tangent.tolist() == [3.0, 1.5]
    assert fwAD.unpack_dual(x).tangent is None
    assert fwAD.unpack_dual(y).tangent is None
    assert fwAD.unpack_dual(x * 2).tangent is None


def test_enter_and_exit_dual_level_by_hand():
    level = fwAD.enter_dual_level()
    try:
        x = fwAD.make_dual(ng.tensor(2.0), ng.tensor(1.0), level=level)
        assert float(fwAD.unpack_dual(x**2, level=level).tangent) == 4.0
    finally:
        fwAD.exit_dual_level(level=level)
    assert fwAD.unpack_dual(x).tangent is None


def test_unpack_dual_is_a_named_pair_whose_tangent_is_the_given_one():
    t = ng.tensor([1.0, 1.0])
    with fwAD.dual_level():
        x = fwAD.make_dual(ng.tensor([1.0, 2.0]), t)
        unpacked = fwAD.unpack_dual(x)
        assert type(unpacked).__name__ == "UnpackedDualTensor"
        assert unpacked._fields == ("primal", "tangent")
        assert unpacked.tangent is t
        assert fwAD.unpack_dual(unpacked.primal).tangent is None  # the primal carries none
        assert fwAD.unpack_dual(ng.tensor(1.0)).tangent is None


def test_make_dual_outside_a_level_is_refused():
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(ng.tensor(1.0), ng.tensor(1.0))


@pytest.mark.parametrize(
    "primal,tangent,error,phrase",
    [
        (ng.tensor([1.0, 2.0]), ng.tensor([1.0, 2.0, 3.0]), RuntimeError, "different size"),
        (ng.tensor([1, 2]), ng.tensor([1.0, 2.0]), ValueError, "Expected primal to be floating"),
        (ng.tensor([1.0, 2.0]), ng.tensor([1, 2]), ValueError, "Expected tangent to be floating"),
        (1.0, ng.tensor(1.0), TypeError, "primal must be a Tensor"),
    ],
)
def test_make_dual_refuses_what_torch_refuses(primal, tangent, error, phrase):
    with fwAD.dual_level():
        with pytest.raises(error, match=phrase):
            fwAD.make_dual(primal, tangent)


def test_make_dual_errors_agree_with_torch_on_type_and_key_phrase():
    with tfwAD.dual_level():
        with pytest.raises(RuntimeError, match="different size"):
            tfwAD.make_dual(torch.ones(2, dtype=torch.float64), torch.ones(3, dtype=torch.float64))
        with pytest.raises(ValueError, match="Expected primal to be floating"):
            tfwAD.make_dual(torch.tensor([1, 2]), torch.ones(2))


def test_levels_do_not_nest_and_a_dual_tensor_is_not_made_dual_again():
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
        x = fwAD.make_dual(ng.tensor(1.0), ng.tensor(1.0))
        with pytest.raises(
            RuntimeError, match="already has a forward gradient at the same level 0"
        ):
            fwAD.make_dual(x, ng.tensor(2.0))
        with pytest.raises(RuntimeError, match="Invalid level given to make_dual"):
            fwAD.make_dual(ng.tensor(1.0), ng.tensor(1.0), level=3)
        with pytest.raises(RuntimeError, match="not the last one that was created"):
            fwAD.exit_dual_level(level=3)
    with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
        fwAD.exit_dual_level()


def test_unpack_dual_of_a_non_tensor_is_a_type_error():
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        fwAD.unpack_dual(3.0)


def test_a_level_left_by_an_exception_is_closed():
    with pytest.raises(ZeroDivisionError):
        with fwAD.dual_level():
            fwAD.make_dual(ng.tensor(1.0), ng.tensor(1.0))
            1 / 0
    with fwAD.dual_level() as level:  # a new level can start
        assert level == 0


# ----------------------------------------------------------------------------- semantics
def _both(fn, x=(0.5, -1.0, 2.0), t=(1.0, 2.0, -1.0)):
    """fn's tangent in both libraries (fn takes the library and a dual tensor)."""
    with tfwAD.dual_level():
        out = fn(
            torch,
            tfwAD.make_dual(
                torch.tensor(x, dtype=torch.float64), torch.tensor(t, dtype=torch.float64)
            ),
        )
        want = tfwAD.unpack_dual(out).tangent
        want = None if want is None else want.detach().numpy()
    with fwAD.dual_level():
        dual = fwAD.make_dual(ng.tensor(x, dtype=ng.float64), ng.tensor(t, dtype=ng.float64))
        got = fwAD.unpack_dual(fn(ng, dual)).tangent
        got = None if got is None else got.numpy()
    return got, want


@pytest.mark.parametrize(
    "name,fn",
    [
        ("no_grad-keeps-tangents", lambda lib, x: _under(lib.no_grad(), lambda: x * 2)),
        ("in-place-op", lambda lib, x: (x * 3).mul_(2).add_(x)),
        ("in-place-into-a-plain-tensor", lambda lib, x: lib.zeros(3, dtype=lib.float64).add_(x)),
        ("in-place-exp", lambda lib, x: (x * 1).exp_()),
        ("plain-and-dual", lambda lib, x: x * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)),
        ("write-through-a-view", lambda lib, x: _write_tail(lib, x)),
        ("a-view-sees-its-base-change", lambda lib, x: _view_after_base_write(x)),
    ],
)
def test_tangents_follow_torch_through(name, fn):
    got, want = _both(fn)
    np.testing.assert_allclose(got, want, rtol=1e-10)


def _write_tail(lib, x):
    y = lib.zeros(3, dtype=lib.float64)
    y[1:] = x[1:] * 3  # a plain tensor gets a tangent where a dual value lands
    return y


def _view_after_base_write(x):
    base = x.clone()
    view = base[1:]
    base.mul_(5)  # the view's tangent is a view of the base's: it changes too
    return view


def _under(context, thunk):
    with context:
        return thunk()


@pytest.mark.parametrize(
    "fn",
    [lambda lib, x: x.detach(), lambda lib, x: x > 0, lambda lib, x: x.argmax()],
    ids=["detach", "comparison", "argmax"],
)
def test_no_tangent_where_torch_has_none(fn):
    assert _both(fn) == (None, None)


def test_a_dual_tensor_may_also_require_grad():
    """Reverse mode through the value and through the tangent itself, as in torch."""
    grads, tangents = [], []
    for lib in (ng, torch):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        t = lib.tensor([1.0, 2.0, -1.0], dtype=lib.float64)
        w = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
        module = fwAD if lib is ng else tfwAD
        with module.dual_level():
            d = module.make_dual(x, t)
            # (torch's own softmax tangent cannot be differentiated again: it reports an
            # in-place change of a value it saved, so softmax is left out here)
            y = (d.sin() ** 2 * d).tanh() * d.exp() + (d @ d)
            tangent = module.unpack_dual(y).tangent
            (dx,) = lib.autograd.grad((y * w).sum(), x, retain_graph=True)
            (dtx,) = lib.autograd.grad((tangent * w).sum(), x)
        grads.append((dx.detach().numpy(), dtx.detach().numpy()))
        tangents.append(tangent.detach().numpy())
    np.testing.assert_allclose(tangents[0], tangents[1], rtol=1e-10)
    for mine, theirs in zip(*grads):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10)


def test_forward_mode_leaves_reverse_mode_untouched():
    x = ng.tensor([0.5, -1.0, 2.0], requires_grad=True)
    (x.exp() * x).sum().backward()
    without = x.grad.numpy().copy()
    x.grad = None
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ng.tensor([1.0, 1.0, 1.0]))
        (d.exp() * d).sum().backward()
    assert np.array_equal(x.grad.numpy(), without)


# -- views made before their base receives a tangent --------------------------------------
@pytest.mark.parametrize("lib", [ng, torch], ids=["naivegraph", "torch"])
def test_a_view_made_before_its_base_receives_a_dual_in_place_sees_the_tangent(lib):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        base = lib.zeros(4, dtype=lib.float64)
        middle = base[1:3]
        base.copy_(fw.make_dual(lib.ones(4, dtype=lib.float64), lib.arange(4.0, dtype=lib.float64)))
        assert fw.unpack_dual(middle).tangent.tolist() == [1.0, 2.0]
        tail = base[2:]
        tail.mul_(fw.make_dual(lib.ones(2, dtype=lib.float64), lib.ones(2, dtype=lib.float64)))
        # d(b * m) = db * m + b * dm: [2, 3] * 1 + 1 * 1
        assert fw.unpack_dual(base).tangent.tolist() == [0.0, 1.0, 3.0, 4.0]
        assert fw.unpack_dual(middle).tangent.tolist() == [1.0, 3.0]


# -- custom Functions: their own jvp, with save_for_forward ---------------------------------
def _scaled_product(lib):
    class ScaledProduct(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_forward(x, y)
            ctx.k = k
            return x * y * k

        @staticmethod
        def backward(ctx, g):
            return g, g, None

        @staticmethod
        def jvp(ctx, tx, ty, tk):
            x, y = ctx.saved_tensors
            assert tk is None  # a number has no tangent; a tensor without one gets zeros
            return (tx * y + x * ty) * ctx.k + 100.0  # not the derivative: its own rule

    return ScaledProduct


@pytest.mark.parametrize("lib", [ng, torch], ids=["naivegraph", "torch"])
def test_a_custom_functions_jvp_gives_the_tangent_reading_save_for_forward(lib):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(lib.tensor([1.0, 2.0], dtype=lib.float64), lib.ones(2, dtype=lib.float64))
        y = lib.tensor([3.0, 4.0], dtype=lib.float64)
        primal, tangent = fw.unpack_dual(_scaled_product(lib).apply(x, y, 5.0))
    assert primal.tolist() == [15.0, 40.0]
    assert tangent.tolist() == [115.0, 120.0]


@pytest.mark.parametrize("lib", [ng, torch], ids=["naivegraph", "torch"])
def test_a_custom_function_without_jvp_refuses_forward_mode_as_torch(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    fw = lib.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(lib.ones(2, dtype=lib.float64), lib.ones(2, dtype=lib.float64))
        with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
            Double.apply(x)
        plain = Double.apply(lib.ones(2, dtype=lib.float64))  # no tangent in: no jvp needed
        assert fw.unpack_dual(plain).tangent is None


# -- max() and min() over everything: torch's evenly read tangent ---------------------------
@pytest.mark.parametrize("values", [[1.0, float("nan"), 3.0], [3.0, 1.0, 3.0], [2.0, 5.0, 5.0]])
@pytest.mark.parametrize("name", ["max", "min"])
def test_the_tangent_of_a_full_max_or_min_is_torchs_even_share_nan_at_a_nan(values, name):
    got = []
    for lib in (ng, torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(
                lib.tensor(values, dtype=lib.float32),
                lib.tensor([1.0, 2.0, 4.0], dtype=lib.float32),
            )
            tangent = fw.unpack_dual(getattr(x, name)()).tangent
        got.append((tangent.item(), str(tangent.dtype).replace("torch.", "")))
    assert got[0][1] == got[1][1] == "float32"
    np.testing.assert_array_equal(got[0][0], got[1][0])
    if values[1] != values[1]:
        assert np.isnan(got[0][0])  # no entry equals a NaN result: 0 / 0
