"""Static mode, round 2: losses with broadcasting, runs and assigns, optimisation that
keeps IEEE results bit for bit, feeds that refuse unsafe casts, no shared storage,
modes that do not mix, and check_numerics.

Each test names the behaviour it pins; torch is the oracle where it has the call.
"""

import warnings

import numpy as np
import pytest

import naivegraph as ng
import naivegraph.static as ns


# -- 8c: mse_loss with a broadcast target averages over the broadcast shape -----------
def _mse_broadcast_graph():
    with ns.Graph() as g:
        w = ns.Variable([1.0, 2.0, 3.0], name="w")
        target = ns.constant(np.zeros((2, 3)))
        loss = ns.mse_loss(w, target)
        dw, = ns.gradients(loss, [w])
    return g, w, loss, dw


def test_mse_loss_broadcast_target_numeric_gradient_matches_torch():
    torch = pytest.importorskip("torch")
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch warns about the broadcast
        expected = torch.nn.functional.mse_loss(x, torch.zeros(2, 3, dtype=torch.float64))
    expected.backward()
    g, w, loss, _ = _mse_broadcast_graph()
    g.forward()
    g.backward(loss)
    assert float(loss.value) == pytest.approx(expected.item())
    np.testing.assert_allclose(w.grad, x.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(w.grad, [2 / 3, 4 / 3, 2.0], rtol=1e-12)


def test_mse_loss_broadcast_target_symbolic_gradient_matches_torch():
    g, w, loss, dw = _mse_broadcast_graph()
    value, grad = g.compile([], [loss, dw])()
    assert float(value) == pytest.approx(14 / 3)
    np.testing.assert_allclose(grad, [2 / 3, 4 / 3, 2.0], rtol=1e-12)


def test_mse_loss_broadcast_input_gradient_sums_over_the_broadcast_axis():
    with ns.Graph() as g:
        w = ns.Variable([[1.0], [2.0]], name="w")   # (2, 1) against a (2, 3) target
        loss = ns.mse_loss(w, np.zeros((2, 3)), reduction="sum")
    g.forward()
    g.backward(loss)
    np.testing.assert_allclose(w.grad, [[6.0], [12.0]])  # 3 columns x 2 x w


# -- 10: feeds refuse casts that lose information ---------------------------------------
def _typed_placeholders():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        i = ns.placeholder("i", shape=(2,), dtype=np.int64)
        u = ns.placeholder("u", shape=(), dtype=np.uint8)
        f32 = ns.placeholder("f32", shape=(), dtype=np.float32)
    return g, x, i, u, f32


@pytest.mark.parametrize("name, value, phrase", [
    ("x", np.array([1 + 2j, 2.0]), "dtype complex128, which cannot be cast to the placeholder's dtype float64"),
    ("i", [1.7, 2.9], "dtype float64, which cannot be cast to the placeholder's dtype int64"),
    ("u", 300, "has values that do not fit its dtype uint8"),
    ("u", -1, "has values that do not fit its dtype uint8"),
    ("f32", 1e300, "has values that do not fit its dtype float32"),
])
def test_feed_with_an_unsafe_cast_is_refused_naming_placeholder_and_dtypes(name, value, phrase):
    g, *_ = _typed_placeholders()
    for run in (lambda: g.forward({name: value}, fetches=[name]),
                lambda: g.compile([name], [name])(value)):
        with pytest.raises(TypeError, match=f"placeholder '{name}'") as info:
            run()
        assert phrase in str(info.value)
    assert len(g.nodes) == 4


@pytest.mark.parametrize("name, value, expected", [
    ("x", [1, 2], np.array([1.0, 2.0])),                 # int -> float is safe
    ("x", np.array([True, False]), np.array([1.0, 0.0])),
    ("i", np.array([1, 2], dtype=np.int32), np.array([1, 2])),
    ("u", 255, np.array(255, dtype=np.uint8)),
    ("f32", 0.5, np.array(0.5, dtype=np.float32)),
])
def test_feed_with_a_safe_cast_is_accepted(name, value, expected):
    g, *_ = _typed_placeholders()
    out, = g.forward({name: value}, fetches=[name])
    assert out.dtype == g[name].dtype
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(g.compile([name], [name])(value)[0], expected)


# -- 11: no result shares storage with a constant, a Variable or a feed ---------------
def test_constant_keeps_a_copy_of_the_array_it_was_built_from():
    arr = np.array([1.0, 2.0])
    with ns.Graph() as g:
        c = ns.constant(arr)
        y = c * 2.0
    arr[0] = 100.0
    np.testing.assert_array_equal(g.compile([], [y])()[0], [2.0, 4.0])
    np.testing.assert_array_equal(g.compile([], [y], optimize=False)()[0], [2.0, 4.0])


def test_literal_operand_is_copied_when_the_node_is_built():
    arr = np.array([1.0, 2.0])
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        y = x + arr
    arr[:] = 0.0
    np.testing.assert_array_equal(g.forward(x=np.zeros(2), fetches=[y])[0], [1.0, 2.0])


def test_assign_keeps_a_copy_of_the_array_assigned():
    with ns.Graph():
        w = ns.Variable([1.0, 2.0], name="w")
    new = np.array([5.0, 6.0])
    w.assign(new)
    new[0] = 0.0
    np.testing.assert_array_equal(w.value, [5.0, 6.0])


def _aliasing_graph():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        w = ns.Variable([1.0, 2.0], name="w")
        c = ns.constant(np.array([7.0, 8.0]))
        plus_minus_zero = x + (-0.0)          # optimised away to x itself
        w_column = w.reshape(2, 1)            # a view of the Variable's array
        x_row = x.reshape(1, 2)               # a view of the fed array
    return g, x, w, c, [x, w, c, plus_minus_zero, w_column, x_row]


@pytest.mark.parametrize("entry", ["forward", "compile", "compile_optimized"])
def test_writing_to_a_result_changes_no_variable_constant_or_feed(entry):
    g, x, w, c, fetches = _aliasing_graph()
    feed = np.array([3.0, 4.0])
    if entry == "forward":
        results = g.forward({x: feed}, fetches=fetches)
    else:
        results = g.compile([x], fetches, optimize=entry == "compile_optimized")(feed)
    assert not any(r is feed for r in results)
    for r in results:
        r[...] = -1.0
    np.testing.assert_array_equal(feed, [3.0, 4.0])
    np.testing.assert_array_equal(w.value, [1.0, 2.0])
    np.testing.assert_array_equal(g.compile([], [c])()[0], [7.0, 8.0])
    np.testing.assert_array_equal(g.compile([x], [x * 1.0])(feed)[0], [3.0, 4.0])


def test_optimized_identity_output_is_not_the_input_array():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        y = x - 0.0
    a = np.array([1.0, 2.0])
    out = g.compile([x], [y], optimize=True)(a)[0]
    assert out is not a and not np.shares_memory(out, a)
    np.testing.assert_array_equal(out, a)


# -- 8f: backward uses the values of the run it follows --------------------------------
@pytest.mark.parametrize("fetch", [False, True])
def test_assign_between_forward_and_backward_does_not_leak_into_the_gradient(fetch):
    with ns.Graph() as g:
        w = ns.Variable(3.0, name="w")
        y = w * w
    if fetch:
        g.forward(fetches=[y])
    else:
        g.forward()
    w.assign(10.0)
    g.backward(y)
    assert float(y.value) == 9.0
    assert float(w.grad) == 6.0          # d(w*w)/dw at the run's w = 3, not 2 * 10
    assert float(w.value) == 10.0        # the assign itself stands
    g.forward()
    g.backward(y)
    assert (float(y.value), float(w.grad)) == (100.0, 20.0)


def test_assign_between_forward_and_backward_through_a_matmul_chain():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(1, 2))
        w = ns.Variable([[1.0], [2.0]], name="w")
        loss = ((x @ w) ** 2).sum()
    g.forward(x=np.array([[1.0, 1.0]]))
    w.assign([[5.0], [5.0]])
    g.backward(loss)
    np.testing.assert_array_equal(w.grad, [[6.0], [6.0]])  # 2 * (1 + 2) * x


# -- 8g: optimisation keeps IEEE results bit for bit ---------------------------------
TINY = np.finfo(np.float64).tiny
SPECIAL = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e308, -1e308, TINY, -TINY, 1.0, -2.5])


def _rules(x):
    """One expression per rewrite rule (and per rule that must *not* fire)."""
    c = ns.constant
    return {
        "x + 0.0": x + 0.0, "0.0 + x": 0.0 + x, "x + (-0.0)": x + (-0.0), "(-0.0) + x": -0.0 + x,
        "x - 0.0": x - 0.0, "x - (-0.0)": x - (-0.0), "x + int 0": x + 0, "x - int 0": x - 0,
        "x * 1": x * 1.0, "1 * x": 1.0 * x, "x * int 1": x * 1, "x / 1": x / 1.0,
        "x ** 1": x ** 1, "-(-x)": -(-x), "x * 0": x * 0.0, "0 * x": 0.0 * x,
        "x * -0.0": x * -0.0, "1 / (x + 0.0)": 1.0 / (x + 0.0),
        "x / 0.0 + x / -0.0": x / 0.0 + x / -0.0,
        "x / c(0.0) + x / c(-0.0)": x / c(0.0) + x / c(-0.0),
        "x / c(nan) + x / c(nan)": x / c(np.nan) + x / c(np.nan),
        "folded -0.0": x * (c(-0.0) * 1.0), "folded 0 * inf": x + c(0.0) * np.inf,
        "x + zeros(n)": x + np.zeros(SPECIAL.shape), "x * ones(n)": x * np.ones(SPECIAL.shape),
        "x + (-zeros)": x + c(-np.zeros(SPECIAL.shape)),
        "reshape": x.reshape(SPECIAL.shape), "fused chain": ns.exp(-(x * 1.0 + 0.0)) / 2.0 - x,
        "cse twins": ns.sqrt(x) + ns.sqrt(x),
    }


def _bits(array):
    array = np.asarray(array)
    return array.dtype, array.shape, array.tobytes()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_rewrite_rule_keeps_results_bit_for_bit_on_special_values(dtype):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=SPECIAL.shape, dtype=dtype)
        rules = _rules(x)
    with np.errstate(over="ignore"):  # 1e308 is inf in float32
        feed = SPECIAL.astype(dtype)
    with np.errstate(all="ignore"):
        raw = g.compile([x], list(rules.values()), optimize=False)(feed)
        fast = g.compile([x], list(rules.values()), optimize=True)(feed)
    for name, a, b in zip(rules, raw, fast):
        assert _bits(a) == _bits(b), f"{name}: {a} became {b}"


def test_optimisation_really_rewrites_the_rules_it_may():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(3,))
        exact = [x + (-0.0), x - 0.0, x * 1.0, 1.0 * x, x / 1.0, x ** 1, -(-x)]
        inexact = [x + 0.0, 0.0 + x, x - (-0.0), x * 0.0]
    _, report = ns.optimize(g, fetches=exact + inexact)
    assert all(report.mapping[e] is report.mapping[x] for e in exact)
    assert not any(report.mapping[e] is report.mapping[x] for e in inexact)


def test_scalar_plus_zeros_vector_keeps_the_broadcast_shape():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        y = x + ns.constant(-np.zeros(3))
    out, = g.compile([x], [y], optimize=True)(np.array(-0.0))
    assert out.shape == (3,)
    assert np.signbit(out).all()


def test_cse_does_not_merge_zero_and_negative_zero_constants():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        y = x / 0.0 + x / -0.0
    with np.errstate(all="ignore"):
        out, = g.compile([x], [y], optimize=True)(np.array(1.0))
    assert np.isnan(out)        # inf + -inf; merged constants would give inf


def test_plus_zero_is_not_dropped_because_it_flips_negative_zero():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        y = 1.0 / (x + 0.0)
    with np.errstate(divide="ignore"):
        out, = g.compile([x], [y], optimize=True)(np.array(-0.0))
    assert out == np.inf


@pytest.mark.parametrize("dtype", [np.int64, np.complex128])
def test_rewrite_rules_keep_integer_and_complex_results_exactly(dtype):
    feed = np.array([0, 1, -3, 7], dtype=dtype)
    if dtype is np.complex128:
        feed = np.array([complex(np.inf, 1), complex(-0.0, -0.0), complex(np.nan, 0), 1j])
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(4,), dtype=dtype)
        outs = [x + 0, x - 0, x * 1, 1 * x, x * 0, 0 * x, -(-x), x + (-0.0), x * 1.0]
    with np.errstate(all="ignore"):
        raw = g.compile([x], outs, optimize=False)(feed)
        fast = g.compile([x], outs, optimize=True)(feed)
    for a, b in zip(raw, fast):
        assert _bits(a) == _bits(b)
