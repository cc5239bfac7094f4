"""dot, norm, sort, var/std, prod, index_select and index_add as torch has them: values,
dtypes, gradients (float64, against torch), torch's errors and warnings, the version
counter of ``index_add_``, and the same ops in static mode and through ONNX."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import naivegraph as ng
import naivegraph.static as ns

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)
X = RNG.normal(size=(3, 4))
ZEROS = np.array([[2.0, 0.0, 3.0, 0.0], [0.0, 1.5, -2.0, 4.0], [0.5, 0.0, 0.0, 0.0]])
TIES = np.array([3.0, 1.0, 3.0, np.nan, 1.0, 2.0, np.nan])
INF = float("inf")


def _index(lib):
    return lib.tensor([2, 0, 2])


# name -> (function of (lib, *tensors), input arrays)
CALLS = {
    "dot": (lambda lib, a, b: a.dot(b), [X[0], X[1]]),
    "norm default": (lambda lib, a: a.norm(), [X]),
    "norm zero vector": (lambda lib, a: a.norm(dim=1), [np.array([[0.0, 0.0], [3.0, -4.0]])]),
    "norm p1 with zeros": (lambda lib, a: a.norm(1), [ZEROS]),
    "norm inf ties": (lambda lib, a: a.norm(INF), [np.array([1.0, -3.0, 3.0, 2.0])]),
    "norm -inf dim": (lambda lib, a: a.norm(-INF, dim=0), [X]),
    "norm p3 keepdim": (lambda lib, a: lib.norm(a, 3, dim=1, keepdim=True), [ZEROS]),
    "norm p0.5": (lambda lib, a: a.norm(0.5, dim=1), [ZEROS]),
    "norm fro dims": (lambda lib, a: a.norm("fro", dim=(0, 1)), [X]),
    "sort": (lambda lib, a: a.sort().values, [X]),
    "sort descending dim0": (lambda lib, a: lib.sort(a, 0, descending=True)[0], [X]),
    "sort ties and NaN": (lambda lib, a: a.sort(descending=True).values, [TIES]),
    "var": (lambda lib, a: a.var(), [X]),
    "var dim correction": (lambda lib, a: a.var(1, correction=0, keepdim=True), [X]),
    "std unbiased": (lambda lib, a: lib.std(a, 0, unbiased=False), [X]),
    "std of constants": (lambda lib, a: a.std(1), [np.ones((2, 3))]),
    "prod": (lambda lib, a: a.prod(), [X]),
    "prod one zero": (lambda lib, a: a.prod(), [np.array([2.0, 0.0, 3.0])]),
    "prod two zeros": (lambda lib, a: a.prod(), [np.array([2.0, 0.0, 0.0, 3.0])]),
    "prod dim with zeros": (lambda lib, a: a.prod(1), [ZEROS]),
    "prod dim0 keepdim with zeros": (lambda lib, a: lib.prod(a, 0, keepdim=True), [ZEROS]),
    "index_select": (lambda lib, a: a.index_select(1, _index(lib)), [X]),
    "index_add": (lambda lib, a, s: a.index_add(1, _index(lib), s, alpha=2.5), [X, X[:, :3]]),
}


def _run(lib, name):
    f, arrays = CALLS[name]
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    return inputs, f(lib, *inputs)


@pytest.mark.parametrize("name", list(CALLS))
def test_values_dtypes_grad_fn_and_gradients_match_torch(name):
    ng_in, got = _run(ng, name)
    torch_in, want = _run(torch, name)
    assert type(got.grad_fn).__name__ == type(want.grad_fn).__name__
    assert got.dtype == want.detach().numpy().dtype and got.shape == tuple(want.shape)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-13)
    weights = RNG.normal(size=got.shape)
    (got * ng.tensor(weights)).sum().backward()
    (want * torch.tensor(weights)).sum().backward()
    for a, b in zip(ng_in, torch_in):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, atol=1e-15)


def test_the_gradient_of_the_2_norm_at_the_zero_vector_is_zero_as_in_torch():
    x = ng.zeros(3, requires_grad=True)
    x.norm().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_the_0_norm_counts_and_leaves_the_gradient_undefined_as_torch_does():
    x = ng.tensor([1.0, 0.0, -2.0], requires_grad=True)
    count = x.norm(0)
    count.backward()
    assert count.item() == 2.0 and x.grad is None


def test_prod_gradients_with_zeros_are_exact():
    x = ng.tensor([2.0, 0.0, 3.0], requires_grad=True)
    x.prod().backward()
    assert x.grad.tolist() == [0.0, 6.0, 0.0]
    y = ng.tensor([[2.0, 0.0, 0.0], [1.0, 2.0, 3.0]], requires_grad=True)
    y.prod(1).sum().backward()
    assert y.grad.tolist() == [[0.0, 0.0, 0.0], [6.0, 3.0, 2.0]]


@pytest.mark.parametrize(
    "values", [[0.0, 2.0, 3.0], [2.0, 0.0, 3.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]
)
def test_prod_hessian_keeps_the_rows_and_columns_of_its_zeros(values):
    got = ng.autograd.functional.hessian(lambda x: x.prod(), ng.tensor(values, dtype=ng.float64))
    want = torch.autograd.functional.hessian(
        lambda x: x.prod(), torch.tensor(values, dtype=torch.float64)
    )
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    if values == [0.0, 2.0, 3.0]:
        assert got.tolist() == [[0.0, 3.0, 2.0], [3.0, 0.0, 0.0], [2.0, 0.0, 0.0]]


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_prod_double_backward_along_a_dim_with_zeros_matches_torch(dim, keepdim):
    grads = []
    for lib in (ng, torch):
        x = lib.tensor(ZEROS[:2, :3].tolist(), dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(x.prod(dim, keepdim=keepdim).sum(), x, create_graph=True)
        weights = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=lib.float64)
        (gg,) = lib.autograd.grad((g * weights).sum(), x)
        grads.append((g.detach().numpy(), gg.numpy()))
    # out / x and torch's products of the others may round apart in the last bit
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-15, atol=0)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-15, atol=0)


def test_an_empty_list_of_dims_reduces_every_dim_as_torch():
    x = ng.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=ng.float64, requires_grad=True)
    total, mean = x.sum(dim=()), x.mean(dim=[])
    assert total.shape == () and total.item() == 10.0 and mean.item() == 2.5
    assert total.grad_fn.name() == "SumBackward1"
    assert x.sum(dim=(), keepdim=True).tolist() == [[10.0]]
    (total + mean).backward()
    assert x.grad.tolist() == [[1.25, 1.25], [1.25, 1.25]]
    assert ng.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=ng.float64).std(
        dim=()
    ).item() == pytest.approx(
        torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64).std(dim=()).item(), rel=1e-15
    )


@pytest.mark.parametrize(
    "reduce",
    [
        lambda x: x.sum(dim=(0, 0)),
        lambda x: x.mean(dim=(1, -1)),
        lambda x: x.var(dim=[0, -2]),
        lambda x: x.squeeze((1, 1)),
    ],
)
def test_a_dim_named_twice_is_refused_with_torchs_error(reduce):
    with pytest.raises(RuntimeError, match="appears multiple times in the list of dims"):
        reduce(torch.ones(2, 1))
    with pytest.raises(RuntimeError, match="appears multiple times in the list of dims"):
        reduce(ng.ones(2, 1))


def test_static_sum_over_an_empty_list_of_dims_reduces_every_dim():
    with ns.Graph() as g:
        a = ns.placeholder("a", (None, 2))
        total = ns.sum(a, dim=())
        (grad,) = ns.gradients(total + ns.mean(a, dim=()), [a])
    assert total.shape == ()
    value, gradient = g.run([total, grad], {a: np.array([[1.0, 2.0], [3.0, 4.0]])})
    assert value == 10.0 and gradient.tolist() == [[1.25, 1.25], [1.25, 1.25]]


def test_sort_returns_values_and_indices_stably_with_nan_largest():
    result = ng.tensor(TIES).sort()
    want = torch.tensor(TIES).sort()
    assert type(result).__name__ == "sort" and result._fields == ("values", "indices")
    np.testing.assert_array_equal(result.values.numpy(), want.values.numpy())
    assert result.indices.tolist() == want.indices.tolist() == [1, 4, 5, 0, 2, 3, 6]
    descending = ng.tensor([True, False, True]).sort(descending=True, stable=True)
    assert descending.indices.tolist() == [0, 2, 1]
    assert ng.argsort(ng.tensor([3, 1, 2])).tolist() == [1, 2, 0]


def test_integer_prod_multiplies_in_int64_as_torch():
    for dtype in (np.int32, np.uint8, np.bool_):
        assert ng.tensor(np.array([1, 1, 1], dtype=dtype)).prod().dtype == np.int64
    assert ng.tensor([1.0, 2.0], dtype=ng.float32).prod().dtype == np.float32


@pytest.mark.parametrize("method", ["var", "std"])
def test_one_element_gives_nan_with_torchs_warning_at_the_callers_line(method):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = getattr(ng.tensor([2.0]), method)()
    assert np.isnan(result.item())
    (warning,) = caught
    assert warning.category is UserWarning and warning.filename == __file__
    assert str(warning.message).startswith(f"{method}(): degrees of freedom is <= 0.")


# expression -> the error torch raises (type and the key phrase)
MISTAKES = {
    "a.dot(b4)": (RuntimeError, "inconsistent tensor size, expected tensor [3] and src [4]"),
    "m.dot(a)": (RuntimeError, "1D tensors expected, but got 2D and 1D tensors"),
    "a.dot(a.double())": (RuntimeError, "expected both vectors to have same dtype"),
    "lib.tensor([True]).dot(lib.tensor([True]))": (NotImplementedError, '"dot" not implemented'),
    "lib.tensor([1, 2]).norm()": (RuntimeError, "Expected a floating point or complex tensor"),
    "lib.zeros(0).norm(float('inf'))": (RuntimeError, "cannot compute the inf norm on an empty"),
    "a.norm(p='abc')": (RuntimeError, "Order abc not supported"),
    "lib.tensor([1, 2]).var()": (RuntimeError, "std and var only support floating point"),
    "lib.tensor([1, 2]).std()": (RuntimeError, "std and var only support floating point"),
    "m.var(0, unbiased=True, correction=0)": (TypeError, "var() received an invalid combination"),
    "a.sort(dim=2)": (IndexError, "Dimension out of range"),
    "m.index_add(0, lib.tensor([5]), lib.ones(1, 3))": (
        RuntimeError,
        "index 5 is out of bounds for dimension 0 with size 2",
    ),
    "m.index_add(0, lib.tensor([0]), lib.ones(1, 3).double())": (
        RuntimeError,
        "index_add_(): self (Float) and source (Double) must have the same scalar type",
    ),
    "m.index_add(0, lib.tensor([[0]]), lib.ones(1, 3))": (IndexError, "Index is supposed to be"),
    "m.index_add(0, lib.tensor([0.0]), lib.ones(1, 3))": (RuntimeError, "int32/int64 for index"),
    "m.index_add(0, lib.tensor([0, 1]), lib.ones(1, 3))": (
        RuntimeError,
        "Number of indices (2) should be equal to source.size(dim): (1), for dim: 0",
    ),
    "m.index_add(0, lib.tensor([0]), lib.ones(1, 4))": (
        RuntimeError,
        "source tensor shape must match self tensor shape",
    ),
    "m.index_add(0, [0], lib.ones(1, 3))": (TypeError, "must be Tensor, not list"),
    "m.index_select(0, lib.tensor([0, 5]))": (IndexError, "index out of range in self"),
    "lib.tensor([1]).add(lib.tensor([1]), alpha=0.5)": (
        RuntimeError,
        "For integral input tensors, argument alpha must not be a floating point number",
    ),
}


def _mistake_namespace(lib) -> dict:
    return {"lib": lib, "a": lib.ones(3), "b4": lib.ones(4), "m": lib.ones(2, 3)}  # float32


@pytest.mark.parametrize("expression", list(MISTAKES))
def test_mistakes_raise_torchs_error(expression):
    error, phrase = MISTAKES[expression]
    with pytest.raises(error, match=_literal(phrase)):
        eval(expression, _mistake_namespace(torch))
    with pytest.raises(error, match=_literal(phrase)):
        eval(expression, _mistake_namespace(ng))


def _literal(phrase: str) -> str:
    return re.escape(phrase)


def test_index_add_in_place_bumps_the_version_and_records_index_add_backward():
    base = ng.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    source = ng.tensor([[10.0, 20.0]], requires_grad=True)
    y = base * 1
    before = y._version
    out = y.index_add_(0, ng.tensor([1]), source, alpha=2)
    assert out is y and y._version == before + 1
    assert type(y.grad_fn).__name__ == "IndexAddBackward0"
    assert y.tolist() == [[1.0, 2.0], [23.0, 44.0]]
    y.sum().backward()
    assert source.grad.tolist() == [[2.0, 2.0]] and base.grad.tolist() == [[1.0, 1.0]] * 2


def test_a_leaf_that_requires_grad_refuses_index_add_in_place():
    leaf = ng.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        leaf.index_add_(0, ng.tensor([0]), ng.ones(1))
    assert leaf.tolist() == [0.0, 0.0, 0.0]


def test_static_mode_builds_the_ops_and_differentiates_through_them_twice():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 4), dtype=np.float64)  # compared to 1e-12
        outputs = [
            ns.norm(x),
            ns.norm(x, 1, dim=1),
            ns.var(x, 0),
            ns.std(x),
            ns.prod(x, 1),
            ns.sort(x, 1).values,
            ns.index_select(x, 1, np.array([0, 0, 3])),
            ns.index_add(x, 1, np.array([0, 0]), x[:, :2] * 3.0, alpha=2),
            ns.dot(x[0], x[1]),
        ]
        loss = sum(ns.sum(o) for o in outputs)
        (grad,) = ns.gradients(loss, [x])
        (second,) = ns.gradients(ns.sum(grad * grad), [x])
    got = g.forward(x=X, fetches=[loss, grad, second])
    t = ng.tensor(X, requires_grad=True)
    dynamic = [
        t.norm(),
        t.norm(1, dim=1),
        t.var(0),
        t.std(),
        t.prod(1),
        t.sort(1).values,
        t.index_select(1, ng.tensor([0, 0, 3])),
        t.index_add(1, ng.tensor([0, 0]), t[:, :2] * 3.0, alpha=2),
        t[0].dot(t[1]),
    ]
    total = sum(o.sum() for o in dynamic)
    (dgrad,) = ng.autograd.grad(total, [t], create_graph=True)
    (dsecond,) = ng.autograd.grad((dgrad * dgrad).sum(), [t])
    for a, b in zip(got, [total, dgrad, dsecond]):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-12)


def test_the_ops_export_to_onnx_with_naivegraphs_values():
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from naivegraph.export import to_onnx

    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 4), dtype=np.float64)
        s = ns.placeholder("s", shape=(3, 4), dtype=np.float32)
        i = ns.placeholder("i", shape=(5,), dtype=np.int32)
        outputs = [ns.dot(s[0], s[1]), ns.dot(i, i), ns.prod(i), ns.argsort(i, descending=True)]
        for p in (2, 1, INF, -INF, 0, 3, 0.5):
            outputs += [ns.norm(x, p), ns.norm(s, p, dim=1), ns.norm(x, p, dim=0, keepdim=True)]
        outputs += [ns.var(x), ns.var(x, 1), ns.std(s, 0, keepdim=True, correction=0)]
        outputs += [ns.prod(x), ns.prod(s, 1), ns.prod(x, 0, keepdim=True), x.add(x, alpha=2)]
        outputs += [*ns.sort(s, 1), *ns.sort(s, 0, descending=True), ns.sort(x).values]
        outputs += [ns.index_select(x, 1, np.array([0, 3, 3])), x.sub(x * 2, alpha=3)]
        outputs += [ns.index_add(x, 1, np.array([0, 0, 2]), x[:, :3], alpha=2.0)]
        (grad,) = ns.gradients(sum(ns.sum(o) for o in outputs if o.dtype.kind == "f"), [x])
    outputs.append(grad)
    feeds = {
        x: X,
        s: np.array([[1, 0, 2, 2], [0, 0, 1, 3], [-1, 2, 2, -1]], np.float32),
        i: np.array([1, 2, 3, 0, 2], np.int32),
    }
    model = to_onnx(g, list(feeds), outputs)
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = session.run(None, {p.name: v for p, v in feeds.items()})
    want = g.compile(list(feeds), outputs, optimize=False)(*feeds.values())
    for node, a, b in zip(outputs, got, want):
        assert a.dtype == b.dtype and a.shape == b.shape, node.name
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, err_msg=node.name)
