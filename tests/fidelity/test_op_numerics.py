"""Op-table numerics of the second trust round, both modes, checked against torch 2.13."""

import numpy as np
import pytest
from torch_oracle import assert_ulps

import naivegraph as ng
import naivegraph.static as ns

torch = pytest.importorskip("torch")

BASES = [0.0, 0.0, 0.0, 0.0, 2.0]
EXPONENTS = [0.0, 1.0, 2.0, 0.5, 0.0]


def _torch_pow_grads():
    x = torch.tensor(BASES, dtype=torch.float64, requires_grad=True)
    y = torch.tensor(EXPONENTS, dtype=torch.float64, requires_grad=True)
    (x**y).sum().backward()
    return x.grad.numpy(), y.grad.numpy()


def test_pow_gradients_at_zero_base_match_torch_in_dynamic_mode():
    x = ng.tensor(BASES, dtype=ng.float64, requires_grad=True)  # torch's float64 bits
    y = ng.tensor(EXPONENTS, dtype=ng.float64, requires_grad=True)
    (x**y).sum().backward()
    want_x, want_y = _torch_pow_grads()
    np.testing.assert_array_equal(x.grad.numpy(), want_x)
    assert_ulps(y.grad, want_y)  # x ** y * log(x): log's last bit depends on the CPU
    assert x.grad.numpy()[0] == 0.0  # d/dx x**0 at x = 0: not nan


def test_pow_gradients_at_zero_base_match_torch_in_static_mode():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(5,), dtype=np.float64)  # torch's float64 bits
        y = ns.placeholder("y", shape=(5,), dtype=np.float64)
        dx, dy = ns.gradients(ns.sum(x**y), [x, y])
    got_x, got_y = g.compile([x, y], [dx, dy])(np.array(BASES), np.array(EXPONENTS))
    want_x, want_y = _torch_pow_grads()
    np.testing.assert_array_equal(got_x, want_x)
    assert_ulps(got_y, want_y)


@pytest.mark.parametrize("lib", [ng, torch], ids=["naivegraph", "torch"])
def test_where_refuses_a_float_condition(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor"):
        lib.where(lib.tensor([2.0, 0.0]), x, lib.tensor(5.0))


def test_static_where_refuses_a_float_condition_at_build_and_adds_no_node():
    g = ns.Graph()
    with g:
        c = ns.placeholder("c", shape=(2,))
        x = ns.placeholder("x", shape=(2,))
        before = len(g.nodes)
        with pytest.raises(RuntimeError, match="where expected condition to be a boolean"):
            ns.where(c, x, 5.0)
        assert len(g.nodes) == before


# -- dtype promotion: torch's category-then-dimension rule, both modes ----------------------
DTYPES = ["bool", "int32", "int64", "float32", "float64"]
KINDS = ["1d", "0d", "python"]
PYTHON_VALUES = {"bool": True, "int64": 2, "float64": 2.5}  # what a Python number stands for
PROMOTING_OPS = {
    "+": lambda M, a, b: a + b,
    "*": lambda M, a, b: a * b,
    "/": lambda M, a, b: a / b,
    "**": lambda M, a, b: a**b,
    "-": lambda M, a, b: a - b,
    "<": lambda M, a, b: a < b,
    "eq": lambda M, a, b: M.eq(a, b),  # static nodes keep == for identity
    "maximum": lambda M, a, b: M.maximum(a, b),
    "minimum": lambda M, a, b: M.minimum(a, b),
    "where": lambda M, a, b: M.where(
        M.tensor([True, False]) if M is not ns else ns.constant(np.array([True, False])), a, b
    ),
}


def _operand(lib, dtype: str, kind: str):
    if kind == "python":
        return PYTHON_VALUES[dtype]
    values = np.array([1, 2] if kind == "1d" else 3).astype(dtype)
    if dtype == "bool":
        values = values.astype(bool)
    if lib is torch:
        return torch.tensor(values)
    return ng.tensor(values)


def _grid():
    for op in PROMOTING_OPS:
        for da in DTYPES:
            for ka in KINDS:
                for db in DTYPES:
                    for kb in KINDS:
                        if "python" in (ka, kb) and (
                            "1d" not in (ka, kb)
                            or op in ("maximum", "minimum")
                            or (ka == "python" and op == "eq")
                            or (ka == "python" and da not in PYTHON_VALUES)
                            or (kb == "python" and db not in PYTHON_VALUES)
                        ):
                            continue  # torch.maximum takes tensors only, torch.eq a tensor
                            # first; and one operand must have dims
                        if "1d" in (ka, kb):
                            yield op, da, ka, db, kb


GRID = list(_grid())


def _torch_result(op, da, ka, db, kb):
    try:
        return str(
            PROMOTING_OPS[op](torch, _operand(torch, da, ka), _operand(torch, db, kb)).dtype
        ).replace("torch.", "")
    except RuntimeError:
        return RuntimeError


def _expected(op, da, ka, db, kb):
    """torch's dtype: its default float (float32, naivegraph's too) where a Python float or
    a division meets no floating tensor."""
    return _torch_result(op, da, ka, db, kb)


@pytest.mark.parametrize("op, da, ka, db, kb", GRID)
def test_dynamic_result_dtype_follows_torch_promotion(op, da, ka, db, kb):
    want = _expected(op, da, ka, db, kb)
    a, b = _operand(ng, da, ka), _operand(ng, db, kb)
    if want is RuntimeError:
        with pytest.raises(RuntimeError):
            PROMOTING_OPS[op](ng, a, b)
        return
    assert np.dtype(PROMOTING_OPS[op](ng, a, b).dtype).name == want


def _static_operand(dtype: str, kind: str, name: str):
    if kind == "python":
        return PYTHON_VALUES[dtype], None
    shape = (2,) if kind == "1d" else ()
    return ns.placeholder(name, shape=shape, dtype=np.dtype(dtype)), shape


@pytest.mark.parametrize("op, da, ka, db, kb", GRID)
def test_static_result_dtype_follows_torch_promotion_at_build_and_at_run(op, da, ka, db, kb):
    want = _expected(op, da, ka, db, kb)
    g = ns.Graph()
    with g:
        a, sa = _static_operand(da, ka, "a")
        b, sb = _static_operand(db, kb, "b")
        if want is RuntimeError:
            with pytest.raises(RuntimeError):
                PROMOTING_OPS[op](ns, a, b)
            return
        out = PROMOTING_OPS[op](ns, a, b)
    assert out.dtype.name == want
    feeds = {
        node: np.ones(shape, dtype=np.dtype(name))
        for node, shape, name in ((a, sa, da), (b, sb, db))
        if shape is not None
    }
    (value,) = g.forward(feeds, fetches=[out])
    assert np.asarray(value).dtype.name == want


def test_float32_times_a_zero_dim_float64_stays_float32_with_float32_gradients():
    x = ng.ones(3, dtype=ng.float32, requires_grad=True)
    s = ng.tensor(2.0, dtype=ng.float64, requires_grad=True)
    y = x * s
    y.sum().backward()
    tx = torch.ones(3, dtype=torch.float32, requires_grad=True)
    ts = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)
    (tx * ts).sum().backward()
    assert y.dtype == np.float32 and str((tx * ts).dtype) == "torch.float32"
    assert x.grad.dtype == np.float32 and s.grad.dtype == np.float64
    assert x.grad.tolist() == tx.grad.tolist() == [2.0, 2.0, 2.0]
    assert s.grad.item() == ts.grad.item() == 3.0


def test_static_float32_gradient_through_a_zero_dim_float64_constant_stays_float32():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(3,), dtype=np.float32)
        y = x * ns.constant(np.array(2.0))
        (dx,) = ns.gradients(ns.sum(y * y), [x])
    assert y.dtype == np.float32 and dx.dtype == np.float32
    (value,) = g.forward({x: np.ones(3, np.float32)}, fetches=[dx])
    assert value.dtype == np.float32 and value.tolist() == [8.0, 8.0, 8.0]


@pytest.mark.parametrize("lib", [ng, torch], ids=["naivegraph", "torch"])
def test_the_three_promotion_examples_of_the_lesson(lib):
    f32 = lib.float32
    assert (lib.ones(3, dtype=f32) * lib.tensor(2.0)).dtype == f32
    assert (lib.tensor([1, 2]) * lib.tensor(2.0, dtype=f32)).dtype == f32
    i32 = lib.tensor(np.array([1, 2], dtype=np.int32))
    assert (i32 + lib.tensor(3)).dtype == i32.dtype


def test_integer_division_is_true_division_in_the_default_float():
    out, want = ng.tensor([1, 2]) / ng.tensor(2), torch.tensor([1, 2]) / torch.tensor(2)
    assert out.dtype == np.float32 and want.dtype == torch.float32
    assert out.tolist() == want.tolist() == [0.5, 1.0]


def test_comparison_promotes_the_zero_dim_operand_to_the_tensor_dtype_first():
    # torch compares in float32 here: 0.1 rounded to float32 equals the element.
    want = torch.tensor([0.1], dtype=torch.float32) == torch.tensor(0.1, dtype=torch.float64)
    got = ng.tensor(np.array([0.1], np.float32)) == ng.tensor(0.1)
    assert want.tolist() == got.tolist() == [True]


def test_inplace_add_of_a_zero_dim_float64_keeps_float32():
    x = ng.ones(2, dtype=ng.float32)
    x.add_(ng.tensor(1.5))
    tx = torch.ones(2, dtype=torch.float32)
    tx.add_(torch.tensor(1.5, dtype=torch.float64))
    assert x.dtype == np.float32 and x.tolist() == tx.tolist() == [2.5, 2.5]


@pytest.mark.parametrize(
    "make, out_type",
    [
        (lambda M: M.tensor([1, 2]).add_(1.5), "Long"),
        (lambda M: M.tensor([1, 2]).add_(M.tensor(1.5)), "Long"),
        (lambda M: M.tensor([1, 2]).div_(2), "Long"),
        (lambda M: M.tensor([1, 2]).exp_(), "Long"),
        (lambda M: M.tensor([True, False]).add_(1), "Bool"),
    ],
    ids=["int_add_float", "int_add_0d_float", "int_div_", "int_exp_", "bool_add_int"],
)
def test_inplace_result_that_cannot_be_cast_back_raises_torch_error(make, out_type):
    phrase = f"can't be cast to the desired output type {out_type}"
    with pytest.raises(RuntimeError, match=phrase):
        make(torch)
    with pytest.raises(RuntimeError, match=phrase):
        make(ng)


def test_failed_inplace_cast_leaves_the_tensor_unchanged():
    x = ng.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast"):
        x.add_(1.5)  # an int tensor with a Python float: the default float, float32
    assert x.tolist() == [1, 2] and x._version == 0


def test_int32_inplace_add_of_an_int64_tensor_stays_int32():
    x = ng.tensor(np.array([1, 2], np.int32))
    x.add_(ng.tensor([1, 2]))
    assert x.dtype == np.int32 and x.tolist() == [2, 4]


# -- bool subtraction: refused with torch's message ------------------------------------
TWO_BOOLS = "Subtraction, the `-` operator, with two bool tensors is not supported"
ONE_BOOL = "Subtraction, the `-` operator, with a bool tensor is not supported"


@pytest.mark.parametrize(
    "make, phrase",
    [
        (lambda M: M.tensor([True, False]) - M.tensor([True, True]), TWO_BOOLS),
        (lambda M: M.tensor([True, False]) - True, TWO_BOOLS),
        (lambda M: True - M.tensor([True, False]), TWO_BOOLS),
        (lambda M: M.tensor(True) - M.tensor(False), TWO_BOOLS),
        (lambda M: M.tensor([1, 2]) - True, ONE_BOOL),
        (lambda M: True - M.tensor([1, 2]), ONE_BOOL),
        (lambda M: M.tensor([1, 2]) - M.tensor([True, False]), ONE_BOOL),
        (lambda M: M.tensor([True, False]) - M.tensor([1, 2]), ONE_BOOL),
        (lambda M: M.tensor([1.0, 2.0]) - M.tensor([True, False]), ONE_BOOL),
        (lambda M: M.tensor([True, False]) - 1.5, ONE_BOOL),
        (lambda M: M.tensor([1.0]).sub(M.tensor([True])), ONE_BOOL),
    ],
)
def test_subtraction_with_bools_raises_like_torch(make, phrase):
    for lib in (torch, ng):
        with pytest.raises(RuntimeError, match=phrase.replace("`", ".")):
            make(lib)


def test_static_bool_subtraction_is_refused_at_build_and_adds_no_node():
    g = ns.Graph()
    with g:
        m = ns.placeholder("m", shape=(2,), dtype=np.bool_)
        before = len(g.nodes)
        with pytest.raises(RuntimeError, match="with two bool tensors is not supported"):
            m - m
        with pytest.raises(RuntimeError, match="If you are trying to invert a mask, use the"):
            1.0 - m
        assert len(g.nodes) == before


# -- maximum/minimum of 0.0 and -0.0: the first operand, as torch's scalar loop ----------
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_zero_tie_returns_the_first_operand_in_dynamic_mode(name):
    a, b = [0.0, -0.0, 1.0], [-0.0, 0.0, 1.0]
    want = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
    got = getattr(ng, name)(ng.tensor(a), ng.tensor(b))
    assert (
        np.signbit(got.numpy()).tolist()
        == np.signbit(want.numpy()).tolist()
        == [False, True, False]
    )


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_zero_tie_returns_the_first_operand_in_static_mode(name):
    g = ns.Graph()
    with g:
        a = ns.placeholder("a", shape=(2,))
        b = ns.placeholder("b", shape=(2,))
        out = getattr(ns, name)(a, b)
    (value,) = g.compile([a, b], [out], optimize=True)(np.array([0.0, -0.0]), np.array([-0.0, 0.0]))
    assert np.signbit(value).tolist() == [False, True]


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_and_minimum_still_propagate_nan_from_either_side(name):
    nan = float("nan")
    got = getattr(ng, name)(ng.tensor([nan, 1.0, 2.0]), ng.tensor([1.0, nan, 3.0]))
    want = getattr(torch, name)(torch.tensor([nan, 1.0, 2.0]), torch.tensor([1.0, nan, 3.0]))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_maximum_gradient_is_exactly_zero_for_the_beaten_operand_even_for_infinite_grad():
    x = ng.tensor([1.0, 3.0], requires_grad=True)
    y = ng.tensor([2.0, 3.0], requires_grad=True)
    ng.maximum(x, y).backward(ng.tensor([float("inf"), 2.0]))
    tx = torch.tensor([1.0, 3.0], requires_grad=True)
    ty = torch.tensor([2.0, 3.0], requires_grad=True)
    torch.maximum(tx, ty).backward(torch.tensor([float("inf"), 2.0]))
    assert x.grad.tolist() == tx.grad.tolist() == [0.0, 1.0]
    assert y.grad.tolist() == ty.grad.tolist() == [float("inf"), 1.0]


# -- complex values: computed, but never differentiated ------------------------------------
REAL_ONLY = "naivegraph's autograd is real-valued only"


def test_complex_tensor_cannot_be_created_requiring_grad():
    with pytest.raises(RuntimeError, match=REAL_ONLY):
        ng.tensor([1 + 1j, 2.0], requires_grad=True)


def test_requires_grad_on_a_complex_tensor_is_refused_and_leaves_it_unchanged():
    z = ng.tensor([1 + 1j])  # complex64, the default float's complex, as in torch
    with pytest.raises(RuntimeError, match="complex tensor \\(complex64\\) cannot require grad"):
        z.requires_grad_()
    with pytest.raises(RuntimeError, match=REAL_ONLY):
        z.requires_grad = True
    assert z.requires_grad is False and z.tolist() == [1 + 1j]


@pytest.mark.parametrize(
    "make",
    [
        lambda x: x * ng.tensor([1j, 2.0]),
        lambda x: x * 1j,
        lambda x: ng.tensor([1j, 0j]) + x,
    ],
    ids=["complex_tensor", "python_complex", "complex_first"],
)
def test_an_op_mixing_complex_with_a_tensor_that_requires_grad_is_refused(make):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="mixes a complex operand .* requires grad"):
        make(x)
    assert x.grad is None and x.grad_fn is None


def test_complex_arithmetic_without_gradients_still_works_like_torch():
    got = (ng.tensor([1 + 1j, 2.0]) * ng.tensor([2.0, 1j])).abs()
    want = (torch.tensor([1 + 1j, 2.0]) * torch.tensor([2.0, 1j])).abs()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    x = ng.tensor([1.0], requires_grad=True)
    with ng.no_grad():
        assert (x * 1j).dtype == np.complex64  # float32 with a Python complex, as in torch


def test_float32_times_complex_python_number_is_complex64_as_in_torch():
    got = ng.ones(2, dtype=ng.float32) * 1j
    want = torch.ones(2, dtype=torch.float32) * 1j
    assert got.dtype == np.complex64 and str(want.dtype) == "torch.complex64"


def test_static_gradients_through_a_complex_constant_are_refused_and_add_no_node():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2,))
        loss = ns.sum(ns.abs(x * ns.constant(np.array([1j, 2.0]))))
        before = len(g.nodes)
        with pytest.raises(RuntimeError, match="ns.gradients would flow through .* complex"):
            ns.gradients(loss, [x])
        assert len(g.nodes) == before


def test_static_gradients_of_a_complex_variable_are_refused_naming_it():
    g = ns.Graph()
    with g:
        v = ns.Variable(np.array([1 + 1j]), name="v")
        loss = ns.sum(ns.abs(v * v))
        with pytest.raises(RuntimeError, match="flow through 'v', which is complex"):
            ns.gradients(loss, [v])
    assert v.dtype == np.complex128  # not silently made real


# -- .to(...) and full(...) ------------------------------------------------------------------
TO_CALLS = {
    "device_and_dtype": lambda M, t: t.to("cpu", M.float32),
    "dtype_keyword_and_device_keyword": lambda M, t: t.to(dtype=M.float32, device="cpu"),
    "dtype_only": lambda M, t: t.to(M.float32),
    "other_tensor": lambda M, t: t.to(M.tensor([1], dtype=M.int32)),
    "device_only": lambda M, t: t.to(device="cpu"),
    "device_positional": lambda M, t: t.to("cpu"),
    "nothing": lambda M, t: t.to(),
}


@pytest.mark.parametrize("call", TO_CALLS, ids=list(TO_CALLS))
def test_to_converts_like_torch(call):
    t = torch.tensor([1.5, -2.0], dtype=torch.float64, requires_grad=True)
    x = ng.tensor([1.5, -2.0], dtype=ng.float64, requires_grad=True)
    want, got = TO_CALLS[call](torch, t), TO_CALLS[call](ng, x)
    assert np.dtype(got.dtype).name == str(want.dtype).replace("torch.", "")
    assert got.tolist() == want.tolist()
    assert (got is x) == (want is t)
    assert got.requires_grad == want.requires_grad
    assert (got.grad_fn.name() if got.grad_fn else None) == (
        want.grad_fn.name() if want.grad_fn else None
    )


def test_to_float32_keeps_the_graph_and_sends_a_float64_gradient_back():
    x = ng.tensor([1.5, -2.0], dtype=ng.float64, requires_grad=True)
    (x.to("cpu", ng.float32) * 2).sum().backward()
    assert x.grad.dtype == np.float64 and x.grad.tolist() == [2.0, 2.0]


def test_to_with_copy_true_returns_a_new_tensor_even_for_the_same_dtype():
    x = ng.tensor([1.0, 2.0])
    y = x.to(copy=True)
    assert y is not x and y.tolist() == [1.0, 2.0]
    y.add_(1.0)
    assert x.tolist() == [1.0, 2.0]


@pytest.mark.parametrize(
    "call, error, phrase",
    [
        (
            lambda t: t.to("cuda"),
            RuntimeError,
            "runs on the CPU only, so it cannot move a tensor to 'cuda'",
        ),
        (lambda t: t.to(device="mps"), RuntimeError, "CPU only"),
        (lambda t: t.to("cuda:0", ng.float32), RuntimeError, "CPU only"),
        (lambda t: t.to("float32"), RuntimeError, "Invalid device string: 'float32'.*ng.float32"),
        (lambda t: t.to(3), TypeError, "expected a dtype such as ng.float32"),
        (lambda t: t.to("cpu", "cpu"), TypeError, "two devices"),
        (lambda t: t.to(ng.float32, ng.float64), TypeError, "two dtypes"),
    ],
    ids=[
        "cuda",
        "mps_keyword",
        "cuda_with_dtype",
        "dtype_as_string",
        "a_number",
        "two_devices",
        "two_dtypes",
    ],
)
def test_to_refuses_other_devices_and_bad_arguments_clearly(call, error, phrase):
    x = ng.tensor([1.0, 2.0])
    with pytest.raises(error, match=phrase):
        call(x)
    assert x.dtype == np.float32


@pytest.mark.parametrize("fill, want", [(True, "bool"), (3, "int64"), (0.5, "float32")])
def test_full_infers_its_dtype_from_the_fill_as_torch(fill, want):
    got = ng.full((2,), fill)
    torch_dtype = str(torch.full((2,), fill).dtype).replace("torch.", "")
    assert got.dtype.name == want == torch_dtype  # a float fill: the default, float32
    assert got.tolist() == torch.full((2,), fill).tolist()


def test_full_with_an_explicit_dtype_and_full_like_keep_the_asked_dtype():
    assert ng.full((2,), 3, dtype=ng.float32).dtype == np.float32
    assert ng.full_like(ng.tensor([1, 2]), 7).dtype == np.int64


# -- reductions of nothing, unbatched cross_entropy, silent special values --------------------
EMPTY_REDUCTIONS = {
    "max": lambda M: M.zeros(0).max(),
    "min": lambda M: M.zeros(0).min(),
    "argmax": lambda M: M.zeros(0).argmax(),
    "argmin_2d": lambda M: M.zeros(2, 0).argmin(),
    "max_dim": lambda M: M.zeros(0).max(0),
    "min_dim_negative": lambda M: M.zeros(2, 0).min(-1),
    "argmax_dim": lambda M: M.zeros(3, 0).argmax(1),
}


@pytest.mark.parametrize("name", EMPTY_REDUCTIONS, ids=list(EMPTY_REDUCTIONS))
def test_reducing_an_empty_tensor_raises_torch_error(name):
    with pytest.raises(Exception) as want:
        EMPTY_REDUCTIONS[name](torch)
    with pytest.raises(want.type) as got:
        EMPTY_REDUCTIONS[name](ng)
    assert str(got.value) == str(want.value)
    assert "zero-size" not in str(got.value)


def test_max_along_a_nonempty_dim_of_an_empty_tensor_is_empty_as_in_torch():
    values, indices = ng.zeros(0, 2).max(dim=1)
    assert values.shape == indices.shape == (0,)


def test_static_max_of_an_empty_placeholder_is_refused_at_build():
    with ns.Graph():
        x = ns.placeholder("x", shape=(0,))
        with pytest.raises(RuntimeError, match="Expected reduction dim to be specified"):
            ns.max(x)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("target", ["index", "probabilities"])
def test_cross_entropy_of_one_unbatched_sample_matches_torch(reduction, target):
    logits = np.array([0.3, -1.2, 2.0])
    make = {
        "index": lambda M: M.tensor(2),
        "probabilities": lambda M: M.tensor(np.array([0.2, 0.3, 0.5])),
    }[target]  # float64 in both
    x, tx = ng.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    got = ng.nn.functional.cross_entropy(x, make(ng), reduction=reduction)
    want = torch.nn.functional.cross_entropy(tx, make(torch), reduction=reduction)
    assert got.shape == tuple(want.shape) == ()
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)
    got.backward()
    want.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_with_class_probabilities_of_a_batch_matches_torch(reduction):
    logits = np.array([[0.3, -1.2, 2.0], [1.0, 0.0, -1.0]])
    probs = np.array([[0.2, 0.3, 0.5], [0.9, 0.1, 0.0]])
    x, tx = ng.tensor(logits, requires_grad=True), torch.tensor(logits, requires_grad=True)
    got = ng.nn.functional.cross_entropy(x, ng.tensor(probs), reduction=reduction)
    want = torch.nn.functional.cross_entropy(tx, torch.tensor(probs), reduction=reduction)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12)
    got.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    "target, error, phrase",
    [
        (lambda: ng.tensor([1, 2]), ValueError, "1D target must have size 1"),
        (lambda: ng.tensor([[1]]), RuntimeError, "multi-target not supported"),
        (lambda: ng.tensor(5), IndexError, "Target 5 is out of bounds"),
        (lambda: ng.tensor(1.0), TypeError, "class indices of an integer dtype"),
    ],
)
def test_cross_entropy_of_one_sample_refuses_bad_targets_clearly(target, error, phrase):
    with pytest.raises(error, match=phrase):
        ng.nn.functional.cross_entropy(ng.tensor([0.3, -1.2, 2.0]), target())


SPECIAL = [0.0, -1.0, float("inf"), float("nan"), 1e308]
SILENT_PROGRAMS = {
    "log": lambda x: x.log(),
    "sqrt": lambda x: x.sqrt(),
    "divide_by_zero": lambda x: 1.0 / (x * 0.0),
    "exp_overflow": lambda x: (x * 10.0).exp(),
    "inf_minus_inf": lambda x: x * 1e308 - x * 1e308,
    "pow": lambda x: x**-0.5,
    "sum_overflow": lambda x: (x * 1e308).sum() * x,
}


@pytest.mark.parametrize("name", SILENT_PROGRAMS, ids=list(SILENT_PROGRAMS))
def test_special_values_pass_silently_forward_and_backward_as_in_torch(name, recwarn):
    program = SILENT_PROGRAMS[name]
    x = ng.tensor(SPECIAL, dtype=ng.float64, requires_grad=True)  # 1e308 is a float64 value
    tx = torch.tensor(SPECIAL, dtype=torch.float64, requires_grad=True)
    got, want = program(x), program(tx)
    got.sum().backward()
    want.sum().backward()
    np.testing.assert_array_equal(np.isnan(got.detach().numpy()), np.isnan(want.detach().numpy()))
    np.testing.assert_array_equal(np.isnan(x.grad.numpy()), np.isnan(tx.grad.numpy()))
    assert [str(w.message) for w in recwarn] == []


@pytest.mark.parametrize("name", SILENT_PROGRAMS, ids=list(SILENT_PROGRAMS))
def test_special_values_pass_silently_through_a_compiled_static_graph(name, recwarn):
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(len(SPECIAL),), dtype=np.float64)  # 1e308 fits
        out = ns.sum(SILENT_PROGRAMS[name](x))
        (dx,) = ns.gradients(out, [x])
    for optimize in (False, True):
        g.compile([x], [out, dx], optimize=optimize)(np.array(SPECIAL))
    assert [str(w.message) for w in recwarn] == []


# -- hostile probes: integers and booleans where floats are needed, mixed matmul ----------------
FLOATING_UNARY = ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "reciprocal"]


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
@pytest.mark.parametrize("name", FLOATING_UNARY)
def test_floating_unary_op_of_integers_gives_the_default_float_with_torch_values(name, dtype):
    values = np.array([1, 2, 0]).astype(dtype)
    got = getattr(ng.tensor(values), name)()
    want = getattr(torch.tensor(values), name)()
    assert got.dtype == np.float32 and str(want.dtype) == "torch.float32"  # the default
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    "make, error, phrase",
    [
        (lambda M: -M.tensor([True, False]), RuntimeError, "Negation, the `-` operator, on a bool"),
        (lambda M: M.tensor([True]).relu(), RuntimeError, "Boolean inputs not supported for relu"),
        (
            lambda M: M.tensor([True]).abs(),
            NotImplementedError,
            "\"abs_cpu\" not implemented for 'Bool'",
        ),
        (
            lambda M: M.tensor([True]).argmax(),
            RuntimeError,
            "argmax\\(\\): does not support bool input",
        ),
        (
            lambda M: M.tensor([1, 2]).softmax(0),
            NotImplementedError,
            "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'",
        ),
        (
            lambda M: M.tensor([1, 2]).log_softmax(0),
            NotImplementedError,
            "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'",
        ),
        (
            lambda M: M.ones(2, 2, dtype=M.float32) @ M.ones(2, 2, dtype=M.float64),
            RuntimeError,
            "expected m1 and m2 to have the same dtype, but got: float != double",
        ),
        (lambda M: M.ones(2, 3) @ M.ones(3, dtype=M.int64), RuntimeError, "same dtype"),
        (
            lambda M: M.nn.functional.linear(
                M.ones(2, 2, dtype=M.float32),
                M.ones(3, 2, dtype=M.float64),
                M.ones(3, dtype=M.float64),
            ),
            RuntimeError,
            "same dtype",
        ),
    ],
    ids=[
        "neg_bool",
        "relu_bool",
        "abs_bool",
        "argmax_bool",
        "softmax_int",
        "log_softmax_int",
        "matmul_f32_f64",
        "matmul_float_int",
        "linear_f32_input_f64_layer",
    ],
)
def test_ops_torch_refuses_for_these_dtypes_are_refused_alike(make, error, phrase):
    with pytest.raises(error, match=phrase.replace("`", ".")):
        make(torch)
    with pytest.raises(error, match=phrase.replace("`", ".")):
        make(ng)


def test_sign_of_a_mask_is_the_mask_and_sums_of_small_ints_are_int64():
    assert ng.tensor([True, False]).sign().tolist() == torch.tensor([True, False]).sign().tolist()
    for dtype in ("bool", "uint8", "int8", "int32"):
        values = np.array([200, 100, 1]).astype(dtype)
        got, want = ng.tensor(values).sum(), torch.tensor(values).sum()
        assert got.dtype == np.int64 and str(want.dtype) == "torch.int64"
        assert got.item() == want.item()


def test_float32_gradients_stay_float32_through_a_chain_with_float64_scalars():
    def chain(M, x):
        s = M.tensor(np.array(0.5))  # float64 0-d in both
        h = (x * s).exp().log().tanh().sigmoid() + s
        h = M.maximum(h, s) * 2.5 - 1.0
        return (h.softmax(0) * h).sum() / 0.5  # (0-d float32 / 0-d float64 is float64)

    x = ng.tensor(np.array([0.1, -0.3, 2.0], np.float32), requires_grad=True)
    tx = torch.tensor(np.array([0.1, -0.3, 2.0], np.float32), requires_grad=True)
    got, want = chain(ng, x), chain(torch, tx)
    got.backward()
    want.backward()
    assert got.dtype == np.float32 and str(want.dtype) == "torch.float32"
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5)


def test_static_float32_graph_stays_float32_with_python_and_zero_dim_constants():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(3,), dtype=np.float32)
        h = (x * ns.constant(np.array(0.5))).exp() * 2.5 + 1.0
        loss = ns.sum(h.softmax(0) * h)
        (dx,) = ns.gradients(loss, [x])
    assert {h.dtype, loss.dtype, dx.dtype} == {np.dtype(np.float32)}
    got_loss, got_dx = g.compile([x], [loss, dx])(np.array([0.1, -0.3, 2.0], np.float32))
    tx = torch.tensor(np.array([0.1, -0.3, 2.0], np.float32), requires_grad=True)
    th = (tx * torch.tensor(0.5, dtype=torch.float64)).exp() * 2.5 + 1.0
    (th.softmax(0) * th).sum().backward()
    assert got_dx.dtype == np.float32
    np.testing.assert_allclose(got_dx, tx.grad.numpy(), rtol=1e-5)


SPECIAL_INPUT = np.array([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.5, -2.0])
UNARY_ALL = [
    "exp",
    "log",
    "sqrt",
    "sin",
    "cos",
    "tanh",
    "sigmoid",
    "relu",
    "abs",
    "neg",
    "reciprocal",
    "sign",
]


@pytest.mark.parametrize("name", UNARY_ALL)
def test_every_unary_op_matches_torch_on_nan_inf_and_signed_zero(name, recwarn):
    x = ng.tensor(SPECIAL_INPUT, requires_grad=name != "sign")
    tx = torch.tensor(SPECIAL_INPUT, requires_grad=name != "sign")
    got, want = getattr(x, name)(), getattr(tx, name)()
    got_values, want_values = got.detach().numpy(), want.detach().numpy()
    np.testing.assert_allclose(got_values, want_values, rtol=1e-14)
    zero = want_values == 0
    assert np.signbit(got_values[zero]).tolist() == np.signbit(want_values[zero]).tolist()
    if name != "sign":
        got.backward(ng.ones(7))
        want.backward(torch.ones(7, dtype=torch.float64))
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-14)
    assert not recwarn.list


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
@pytest.mark.parametrize("dim", [None, 1])
def test_every_reduction_matches_torch_on_nan_and_inf(name, dim, recwarn):
    data = SPECIAL_INPUT[:6].reshape(2, 3)
    x, tx = ng.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
    if dim is None:
        got, want = getattr(x, name)(), getattr(tx, name)()
    else:
        got, want = getattr(x, name)(dim=dim), getattr(tx, name)(dim=dim)
        if name in ("max", "min"):
            got, want = got[0], want[0]
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    got.sum().backward()
    want.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    assert not recwarn.list


def test_integer_to_a_negative_python_integer_power_raises_torch_error():
    for lib in (torch, ng):
        with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
            lib.tensor([1, 2]) ** -1


def test_integer_tensor_to_negative_integer_tensor_powers_truncates_as_torch():
    base, exponent = [0, 1, -1, 2, -2, 3, -1], [-1, -1, -1, -1, -1, -2, -2]
    want = torch.tensor(base) ** torch.tensor(exponent)
    got = ng.tensor(base) ** ng.tensor(exponent)
    assert got.dtype == np.int64 and got.tolist() == want.tolist() == [0, 1, -1, 0, 0, 0, 1]


@pytest.mark.parametrize("join", ["cat", "stack"])
def test_cat_and_stack_promote_like_torch_and_send_float32_gradients(join):
    x = ng.tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
    n = ng.tensor(np.array([3, 4], np.int32))
    out = getattr(ng, join)([x, n])
    want = getattr(torch, join)(
        [torch.tensor(np.array([1.0, 2.0], np.float32)), torch.tensor(np.array([3, 4], np.int32))]
    )
    assert out.dtype == np.float32 and str(want.dtype) == "torch.float32"
    out.sum().backward()
    assert x.grad.dtype == np.float32 and x.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    "name, args",
    [
        ("add", 2),
        ("sub", 2),
        ("mul", 2),
        ("div", 2),
        ("neg", 1),
        ("exp", 1),
        ("tanh", 1),
        ("lt", 2),
        ("logical_not", 1),
    ],
)
def test_elementwise_forwards_write_into_a_given_buffer_for_the_static_memory_planner(name, args):
    from naivegraph.ops import OPS

    operands = [np.array([0.5, 2.0]), np.array([4.0, 1.0])][:args]
    if name == "logical_not":
        operands = [np.array([True, False])]
    expected = OPS[name].forward(*operands)
    buffer = np.empty_like(expected)
    assert OPS[name].forward.ufunc is not None
    assert OPS[name].forward(*operands, out=buffer) is buffer
    np.testing.assert_array_equal(buffer, expected)


def test_static_dtype_of_an_unknown_shape_placeholder_op_agrees_with_its_run():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", dtype=np.float32)  # shape unknown: dtype inferred by rule
        i = ns.placeholder("i", dtype=np.int32)
        outs = [x * ns.constant(np.array(2.0)), x * 2.5, i + ns.constant(np.array(3)), i * 2.5]
    declared = [o.dtype.name for o in outs]
    values = g.forward({x: np.ones(2, np.float32), i: np.ones(2, np.int32)}, fetches=outs)
    assert (
        declared
        == [np.asarray(v).dtype.name for v in values]
        == ["float32", "float32", "int32", "float32"]  # int32 * 2.5: the default float
    )


def test_mse_loss_of_integer_tensors_is_refused_like_torch():
    for lib in (torch, ng):
        with pytest.raises(NotImplementedError, match="\"mse_cpu\" not implemented for 'Long'"):
            lib.nn.functional.mse_loss(lib.tensor([1, 2]), lib.tensor([1, 3]))
    got = ng.nn.functional.mse_loss(ng.tensor([1.0, 2.0]), ng.tensor([1, 3]))
    assert got.dtype == np.float64 and got.item() == 0.5


INPLACE_OPS = ["add_", "sub_", "mul_", "div_", "pow_"]


def _inplace_grid():
    for da in DTYPES:
        for db in DTYPES:
            for kb in KINDS:
                if kb == "python" and db not in PYTHON_VALUES:
                    continue
                for op in INPLACE_OPS:
                    yield da, op, db, kb


def _inplace_outcome(lib, da, op, db, kb):
    target = _operand(lib, da, "1d")
    try:
        result = getattr(target, op)(_operand(lib, db, kb))
    except RuntimeError as error:  # NotImplementedError included
        return type(error), None, None
    values = result.numpy() if lib is ng else result.detach().numpy()
    return None, np.dtype(values.dtype).name, values.astype(float).tolist()


@pytest.mark.parametrize("da, op, db, kb", list(_inplace_grid()))
def test_inplace_op_keeps_dtype_or_refuses_exactly_as_torch(da, op, db, kb):
    torch.set_default_dtype(torch.float64)  # Python floats mean float64 in both
    try:
        want = _inplace_outcome(torch, da, op, db, kb)
    finally:
        torch.set_default_dtype(torch.float32)
    got = _inplace_outcome(ng, da, op, db, kb)
    assert got[:2] == want[:2]
    if want[2] is not None:
        np.testing.assert_allclose(got[2], want[2], rtol=1e-6)


def test_dtype_aliases_mean_what_torch_and_the_cast_methods_mean():
    x = ng.tensor([1.5])
    assert np.dtype(ng.float) == np.float32 == x.float().dtype == x.to(ng.float).dtype
    assert np.dtype(ng.double) == np.float64 == x.double().dtype
    assert np.dtype(ng.long) == np.int64 == x.long().dtype
    assert str(torch.float) == "torch.float32" and str(torch.double) == "torch.float64"


@pytest.mark.parametrize(
    "make",
    [
        lambda M: M.tensor(np.array([1.0, 2.0, 3.0])).clamp(
            min=M.tensor(np.array(1.5)), max=M.tensor(np.full(3, 2.5))
        ),
        lambda M: M.tensor(np.array([1.0, 2.0, 3.0], np.float32)).clamp(min=M.tensor(1.5)),
        lambda M: M.tensor([1, 2, 3]).clamp(min=2),
        lambda M: M.tensor([1, 2, 3]).clamp(max=2),
        lambda M: M.tensor(np.array([float("nan"), -1.0])).clamp(min=0.0, max=1.0),
    ],
    ids=["tensor_bounds", "float32_with_0d_float64_bound", "int_min", "int_max", "nan"],
)
def test_clamp_values_and_dtype_match_torch(make):
    got, want = make(ng), make(torch)
    assert got.dtype.name == str(want.dtype).replace("torch.", "")
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def _bits(values) -> list:
    """Values with the sign of each zero visible: -0.0 and 0.0 compare equal."""
    return [(float(v), bool(np.signbit(v))) for v in np.asarray(values).ravel()]


@pytest.mark.parametrize(
    "bounds",
    [{"min": 0.0}, {"max": -0.0}, {"min": -0.0}, {"max": 0.0}, {"min": 0.0, "max": 0.0}],
    ids=["min_0", "max_minus_0", "min_minus_0", "max_0", "both_0"],
)
def test_clamp_keeps_a_signed_zero_that_equals_its_bound_as_torch(bounds):
    values = [-0.0, 0.0, -1.0, 2.0]
    got = ng.tensor(values, dtype=ng.float64).clamp(**bounds).numpy()
    want = torch.tensor(values, dtype=torch.float64).clamp(**bounds).numpy()
    assert _bits(got) == _bits(want)


def test_clamp_of_minus_zero_at_a_zero_minimum_stays_minus_zero():
    got = ng.tensor([-0.0, 0.0, -1.0, 2.0], dtype=ng.float64).clamp(min=0.0)
    assert _bits(got.numpy()) == [(0.0, True), (0.0, False), (0.0, False), (2.0, False)]


def test_clamp_of_minus_zero_keeps_its_sign_in_static_mode():
    with ns.Graph() as g:
        x = ns.placeholder("x", (2,))
        low = ns.clamp(x, min=0.0)
    assert _bits(g.run(low, {x: np.array([-0.0, -1.0])})) == [(0.0, True), (0.0, False)]


def test_square_root_power_gradient_at_minus_zero_and_minus_inf_is_torchs_rsqrt():
    # torch differentiates x ** 0.5 as 0.5 * x ** -0.5 and takes x ** -0.5 as rsqrt(x),
    # 1 / sqrt(x): -inf at -0.0 and nan at -inf (C's pow gives +inf and 0 there).
    values = [-0.0, 0.0, -float("inf"), float("inf"), 4.0]
    x = ng.tensor(values, dtype=ng.float64, requires_grad=True)
    (x**0.5).sum().backward()
    grad = x.grad.numpy()
    assert grad[0] == -float("inf") and grad[1] == float("inf") and np.isnan(grad[2])
    assert grad[3] == 0.0 and grad[4] == 0.25
    inverse = (ng.tensor(values, dtype=ng.float64) ** -0.5).numpy()
    assert inverse[0] == -float("inf") and np.isnan(inverse[2]) and inverse[4] == 0.5
    t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    (t**0.5).sum().backward()
    np.testing.assert_array_equal(grad, t.grad.numpy())


def test_clamp_of_integers_by_a_float_bound_gives_the_default_float():
    got, want = ng.tensor([1, 2, 3]).clamp(min=1.5), torch.tensor([1, 2, 3]).clamp(min=1.5)
    assert got.dtype == np.float32 and want.dtype == torch.float32
    assert got.tolist() == want.tolist() == [1.5, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        ng.tensor([1, 2, 3]).clamp_(min=1.5)


def test_clamp_gradient_flows_inside_tensor_bounds_and_a_grad_bound_is_refused():
    x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x.clamp(min=ng.tensor(1.5), max=ng.tensor([2.5, 2.5, 2.5])).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0]
    with pytest.raises(RuntimeError, match="a min bound that requires grad is not supported"):
        x.clamp(min=ng.tensor(1.5, requires_grad=True))


def test_gradients_of_inf_and_minus_inf_summing_to_nan_are_silent_in_both_modes(recwarn):
    inf = float("inf")
    x = ng.tensor([1.0], requires_grad=True)
    (x * inf + x * -inf).sum().backward()  # two paths meet in the engine's sum
    (x * inf).sum().backward()  # and accumulate into .grad
    tx = torch.tensor([1.0], requires_grad=True)
    (tx * inf + tx * -inf).sum().backward()
    assert np.isnan(x.grad.item()) and np.isnan(tx.grad.item())
    g = ns.Graph()
    with g:
        p = ns.placeholder("p", shape=(1,))
        (dp,) = ns.gradients(ns.sum(p * inf + p * -inf), [p])
    assert np.isnan(g.compile([p], [dp])(np.array([1.0]))[0]).all()
    with g:
        v = ns.Variable(np.array([1.0]), name="v")
        out = ns.sum(v * inf + v * -inf)
    g.forward(fetches=[out])
    g.backward(out)  # the numeric backward sums at the Variable too
    assert np.isnan(v.grad).all()
    assert not recwarn.list


@pytest.mark.parametrize(
    "compute",
    [
        lambda M, n: M.ones(1, dtype=M.float32) + n,
        lambda M, n: n - M.ones(1, dtype=M.float32),
        lambda M, n: M.ones(1, dtype=M.float64) * n,
        lambda M, n: M.ones(1, dtype=M.float32).add_(n),
        lambda M, n: M.ones(1, dtype=M.float32).clamp(max=n),
    ],
    ids=["add", "rsub", "mul_float64", "add_", "clamp"],
)
@pytest.mark.parametrize("number", [2**70, 2**64, -(2**63) - 1])
def test_a_python_int_beyond_64_bits_is_refused_as_torch_not_rounded_to_a_float(compute, number):
    with pytest.raises(OverflowError):
        compute(torch, number)
    with pytest.raises(OverflowError, match="int too big to convert"):
        compute(ng, number)


def test_python_ints_within_64_bits_still_promote_as_torch():
    for number in (2**63 - 1, 2**63, -(2**63)):
        got = (ng.ones(1, dtype=ng.float32) + number).numpy()
        want = (torch.ones(1, dtype=torch.float32) + number).numpy()
        assert got.dtype == np.float32 and got.tolist() == want.tolist()


def test_a_python_int_beyond_64_bits_is_refused_in_static_mode():
    with ns.Graph():
        x = ns.placeholder("x", (1,))
        with pytest.raises(OverflowError, match="int too big to convert"):
            x + 2**70
