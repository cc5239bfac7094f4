"""The straight-line runner's specialised lines (``naivegraph.fast.fastrun``): numpy
called directly where the compiled graph already knows what the op table's forward
would check at every run.  Each line must compute what the forward computes, bit for
bit, and be written only when its facts hold: these tests compare the layer on with
off, against torch where it defines the result, and each fact with the value it
describes."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from fast_switch import both_ways, fast_layer_on
from torch_oracle import assert_sum_close

import naivegraph.static as ns
from naivegraph import fast
from naivegraph.fast import fastrun
from naivegraph.fast.fastrun import ARRAY, NUMPY, Known, _kernel, kernel_namespace
from naivegraph.ops import OPS

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)  # they compare on with off


def assert_same_bits(on, off):
    assert len(on) == len(off)
    for k, (a, b) in enumerate(zip(on, off)):
        assert type(a) is type(b) is np.ndarray, k
        assert (a.dtype, a.shape) == (b.dtype, b.shape), k
        assert a.tobytes() == b.tobytes(), k


def direct_lines(f) -> list[str]:
    """The lines of a compiled function's generated code that call numpy directly."""
    source = fastrun.runner_of(f).source
    return [line.strip() for line in source.splitlines() if "np_" in line or "add_reduce" in line]


def generic_lines(f) -> list[str]:
    """The lines that call an op table's forward (``f_v...``)."""
    source = fastrun.runner_of(f).source
    return [line.strip() for line in source.splitlines() if "= f_v" in line]


# ----------------------------------------------------------------- whole graphs, on vs off
def test_the_reference_example_runs_on_direct_calls_only():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2, 2))
        w1, w2, w3 = ns.Variable(2.0), ns.Variable(3.0), ns.Variable(4.0)
        l1 = x * w1
        loss = ns.mean((l1 + w2) * (l1 * w3))
        grads = ns.gradients(loss, [w1, w2, w3])
    f = g.compile([x], [loss, *grads])
    on, off = both_ways(f, np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert_same_bits(on, off)
    assert [float(a) for a in on] == [180.0, 150.0, 20.0, 45.0]
    assert generic_lines(f) == []
    assert "add_reduce(v7, None, None, None, False) / 4" in fastrun.runner_of(f).source


def test_a_float32_feed_times_a_0d_float64_variable_stays_float32_as_in_torch():
    torch = pytest.importorskip("torch")
    feed = np.array([[0.1, 0.2], [0.3, 0.7]], np.float32)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2, 2), dtype=np.float32)
        w = ns.Variable(np.float64(1.1))
        y = x * w
        loss = ns.mean(y * y)
        (gw,) = ns.gradients(loss, [w])
    f = g.compile([x], [y, loss, gw])
    on, off = both_ways(f, feed)
    assert_same_bits(on, off)
    assert generic_lines(f)[0] == "v2 = f_v2(a0, s1)"  # the promotion casts w: not direct
    tw = torch.tensor(1.1, dtype=torch.float64, requires_grad=True)
    ty = torch.tensor(feed) * tw
    tloss = (ty * ty).mean()
    tloss.backward()
    assert on[0].dtype == np.float32 and on[0].tobytes() == ty.detach().numpy().tobytes()
    assert on[1].dtype == np.float32 and on[1].tobytes() == tloss.detach().numpy().tobytes()
    assert on[2].dtype == np.float64


def test_a_float32_feed_times_a_float64_vector_promotes_to_float64_as_in_torch():
    torch = pytest.importorskip("torch")
    feed = np.array([[0.1, 0.2, 0.3]], np.float32)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(1, 3), dtype=np.float32)
        w = ns.Variable(np.array([1.1, 2.2, 3.3]))
        y = ns.sum(x * w * x)
    f = g.compile([x], [y])
    on, off = both_ways(f, feed)
    assert_same_bits(on, off)
    expected = (torch.tensor(feed) * torch.tensor(w.value) * torch.tensor(feed)).sum()
    assert on[0].dtype == np.float64 and on[0].tobytes() == expected.numpy().tobytes()
    assert all("np_" not in line for line in direct_lines(f))  # float32 with float64


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8])
def test_integer_feeds_and_variables_add_multiply_and_compare_as_in_torch(dtype):
    torch = pytest.importorskip("torch")
    a_value = np.array([[1, 2, 3], [4, 5, 6]], dtype)
    with ns.Graph() as g:
        a = ns.placeholder("a", shape=(2, 3), dtype=dtype)
        k = ns.Variable(np.array([3, 1, 2], dtype), trainable=False)
        s = a * k + a
        product, less, both = s * 3, s < k, ns.logical_and(s > 4, a < k)
    f = g.compile([a], [s, product, less, both])
    on, off = both_ways(f, a_value)
    assert_same_bits(on, off)
    ta, tk = torch.tensor(a_value), torch.tensor(k.value)
    ts = ta * tk + ta
    for got, want in zip(on, [ts, ts * 3, ts < tk, torch.logical_and(ts > 4, ta < tk)]):
        assert got.dtype == want.numpy().dtype and got.tobytes() == want.numpy().tobytes()
    assert generic_lines(f) == []


def test_an_integer_feed_times_a_python_float_goes_through_the_promoting_forward():
    torch = pytest.importorskip("torch")
    feed = np.array([1, 2, 3], np.int32)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(3,), dtype=np.int32)
        y = x * 2.5  # int32 with a Python float: float32, the default float (as torch)
        z = x * 3  # int32 with a Python int: int32
    f = g.compile([x], [y, z])
    on, off = both_ways(f, feed)
    assert_same_bits(on, off)
    assert on[0].dtype == np.float32 and on[1].dtype == np.int32
    assert on[1].tobytes() == (torch.tensor(feed) * 3).numpy().tobytes()
    assert len(generic_lines(f)) == 1 and "np_multiply(a0, c3)" in fastrun.runner_of(f).source


def test_a_python_float_times_an_integer_feed_from_the_left_goes_through_the_forward():
    torch = pytest.importorskip("torch")
    feed = np.array([1, 2, 3], np.int64)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(3,), dtype=np.int64)
        y = 2.5 * x
        z = 3 * x
    f = g.compile([x], [y, z])
    on, off = both_ways(f, feed)
    assert_same_bits(on, off)
    assert on[0].tolist() == [2.5, 5.0, 7.5]  # float32: the default float, as torch's
    assert on[1].tobytes() == (3 * torch.tensor(feed)).numpy().tobytes()
    assert on[0].dtype == np.float32 and on[1].dtype == np.int64
    assert generic_lines(f) == ["v2 = f_v2(c1, a0)"]  # the forward casts x to float32


def test_booleans_compare_and_combine_directly_but_do_not_add_a_python_int():
    feed = np.array([True, False, True])
    with ns.Graph() as g:
        m = ns.placeholder("m", shape=(3,), dtype=np.bool_)
        both = ns.logical_or(m, m >= m)
        counted = m + 1  # bool with a Python int is int64 in torch: the forward casts
    f = g.compile([m], [both, counted])
    on, off = both_ways(f, feed)
    assert_same_bits(on, off)
    assert on[1].dtype == np.int64 and on[1].tolist() == [2, 1, 2]
    assert generic_lines(f) == ["v3 = f_v3(a0, c2)"]  # m + 1; the rest is one fused chain


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("w_shape", [(), (1,), (3,), (1, 3), (2, 1), (2, 3), (1, 1)])
def test_gradients_summed_back_to_a_broadcast_shape_give_the_same_bits(dtype, w_shape):
    rng = np.random.default_rng(len(w_shape))
    feed = rng.standard_normal((2, 3)).astype(dtype)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2, 3), dtype=dtype)
        w = ns.Variable(rng.standard_normal(w_shape).astype(dtype))
        b = ns.Variable(rng.standard_normal(w_shape).astype(dtype))
        loss = ns.mean((x * w + b) * (x + 0.5))
        grads = ns.gradients(loss, [w, b])
    f = g.compile([x], [loss, *grads])
    on, off = both_ways(f, feed)
    assert_same_bits(on, off)
    assert [a.shape for a in on[1:]] == [w_shape, w_shape]


def test_gradients_in_float32_match_torch_bit_for_bit():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    feed = rng.standard_normal((4, 3)).astype(np.float32)
    w0 = rng.standard_normal((1, 3)).astype(np.float32)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(4, 3), dtype=np.float32)
        w = ns.Variable(w0)
        loss = ns.mean(x * w * x)
        (gw,) = ns.gradients(loss, [w])
    f = g.compile([x], [loss, gw])
    on, off = both_ways(f, feed)
    assert_same_bits(on, off)
    tw = torch.tensor(w0, requires_grad=True)
    tx = torch.tensor(feed)
    tloss = (tx * tw * tx).mean()
    tloss.backward()
    np.testing.assert_allclose(on[0], tloss.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(on[1], tw.grad.numpy(), rtol=1e-6)
    assert on[0].dtype == on[1].dtype == np.float32


@pytest.mark.parametrize("batch", [1, 5])
def test_an_unknown_batch_size_keeps_the_forward_for_what_needs_it(batch):
    feed = np.arange(batch * 3.0, dtype=np.float32).reshape(batch, 3)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 3))  # float32, as the Variable: the default
        w = ns.Variable([1.0, 2.0, 3.0])
        loss = ns.mean(x * w)  # its count is the batch size times 3
        (gw,) = ns.gradients(loss, [w])
    f = g.compile([x], [loss, gw])
    on, off = both_ways(f, feed)
    assert_same_bits(on, off)
    assert "np_multiply(a0, s1)" in fastrun.runner_of(f).source
    assert any("f_" in line and "mean" not in line for line in generic_lines(f))


@pytest.mark.parametrize("dim, keepdim", [(0, False), (-1, True), ((0, 2), False), (None, True)])
def test_a_mean_over_dimensions_matches_torch_to_its_summation_order(dim, keepdim):
    torch = pytest.importorskip("torch")
    feed = np.random.default_rng(3).standard_normal((2, 3, 4))
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2, 3, 4), dtype=np.float64)  # torch's float64 bits
        m = ns.mean(x * x, dim=dim, keepdim=keepdim)
    f = g.compile([x], [m])
    on, off = both_ways(f, feed)
    assert_same_bits(on, off)
    t = torch.tensor(feed)
    want = (t * t).mean() if dim is None else (t * t).mean(dim=dim, keepdim=keepdim)
    if dim is None and keepdim:
        want = want.reshape(1, 1, 1)
    assert on[0].shape == tuple(want.shape)
    assert_sum_close(on[0], want.numpy(), terms=feed.size // on[0].size)
    assert "add_reduce" in fastrun.runner_of(f).source


def test_a_placeholder_shape_given_in_numpy_integers_gives_the_same_float32_mean():
    feed = np.array([[0.1, 0.2], [0.3, 0.4]], np.float32)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(np.int64(2), np.int64(2)), dtype=np.float32)
        m = ns.mean(x * x)
    f = g.compile([x], [m])
    on, off = both_ways(f, feed)
    assert_same_bits(on, off)
    assert on[0].dtype == np.float32 and "/ 4\n" in fastrun.runner_of(f).source


def test_a_python_number_constant_on_either_side_is_passed_as_it_is():
    feed = np.array([0.1, 0.2, 0.3], np.float32)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(3,), dtype=np.float32)
        y = 0.999 * x + 1e-3
        z = ns.mean(y * y)
    f = g.compile([x], [y, z])
    on, off = both_ways(f, feed)
    assert_same_bits(on, off)
    assert on[0].dtype == on[1].dtype == np.float32
    assert generic_lines(f) == []


def test_a_mean_of_nothing_is_left_to_the_forward_and_is_nan():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(0, 3))
        m = ns.mean(x * 2.0)
    f = g.compile([x], [m])
    on, off = both_ways(f, np.ones((0, 3)))
    assert_same_bits(on, off)
    assert np.isnan(on[0]) and "add_reduce" not in fastrun.runner_of(f).source


def test_a_direct_line_that_fails_names_its_node_as_the_readable_plan_does():
    with ns.Graph() as g:
        a = ns.placeholder("a", shape=(None, 3))
        b = ns.placeholder("b", shape=(None, 3))
        c = a * b
    f = g.compile([a, b], [c])
    assert "np_multiply(a0, a1)" in fastrun.runner_of(f).source
    with pytest.raises(ValueError, match=r"while running node 'mul_1' \(mul\): operands"):
        f(np.ones((2, 3)), np.ones((4, 3)))
    with fast.disabled(), pytest.raises(ValueError, match=r"while running node 'mul_1'"):
        f(np.ones((2, 3)), np.ones((4, 3)))


def test_results_of_direct_lines_are_fresh_arrays_each_call():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(3,))
        w = ns.Variable(np.array([1.0, 2.0, 3.0]))
        y = x * w
        total = ns.mean(y)
    f = g.compile([x], [y, total, y])
    first = f(np.ones(3))
    assert first[0] is first[2]  # one value fetched twice, as the readable plan gives
    first[0][...] = -1.0
    second = f(np.ones(3))
    assert second[0].tolist() == [1.0, 2.0, 3.0] and float(second[1]) == 2.0
    assert w.value.tolist() == [1.0, 2.0, 3.0]


def test_fetching_a_variable_or_a_feed_keeps_the_checked_path():
    feed = np.ones(3)
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(3,))
        w = ns.Variable(np.array([1.0, 2.0, 3.0]))
        y = x * w
    f = g.compile([x], [y, w, x])
    got_y, got_w, got_x = f(feed)
    got_w[...] = 0.0
    got_x[...] = 0.0
    assert not fastrun.runner_of(f).direct
    assert w.value.tolist() == [1.0, 2.0, 3.0] and feed.tolist() == [1.0, 1.0, 1.0]


def test_updates_are_stored_when_every_result_comes_from_a_direct_line():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        w = ns.Variable(np.array([1.0, 2.0]))
        y = x * w
        new_w = w * 0.5
    f = g.compile([x], [y, new_w], updates=[(w, new_w)])
    got_y, got_new = f(np.ones(2))
    assert got_y.tolist() == [1.0, 2.0] and w.value.tolist() == [0.5, 1.0]
    got_new[...] = 7.0  # the fetched new value is not the Variable's new storage
    assert w.value.tolist() == [0.5, 1.0]
    assert f(np.ones(2))[0].tolist() == [0.5, 1.0] and w.value.tolist() == [0.25, 0.5]


def test_a_fetched_constant_is_a_copy_of_it():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        c = ns.constant(np.array([1.0, 2.0]))
        y = x * c
    f = g.compile([x], [y, c])
    got_y, got_c = f(np.ones(2))
    got_c[...] = 0.0
    assert f(np.ones(2))[0].tolist() == [1.0, 2.0]


def test_a_variable_assigned_between_calls_is_read_by_the_next_call():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        w = ns.Variable(np.array([1.0, 2.0]))
        y = x * w
    f = g.compile([x], [y])
    assert f(np.ones(2))[0].tolist() == [1.0, 2.0]
    w.assign([5.0, 7.0])
    assert f(np.ones(2))[0].tolist() == [5.0, 7.0]


# ----------------------------------------------------------------- each line's facts
_DTYPES = [
    np.dtype(t)
    for t in ("bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64")
] + [np.dtype("complex64"), np.dtype(">f8")]
_SHAPES = [(), (3,), (2, 3), (2, 1)]


def _operand(kind, dtype, shape, seed):
    """A value of the given kind: an ndarray, a numpy scalar, or a Python number."""
    if kind in (int, float):
        return kind(3)
    rng = np.random.default_rng(seed)
    value = np.asarray(rng.standard_normal(shape) * 4).astype(dtype)
    return value[()] if kind == "scalar" else value


def _facts(value):
    if type(value) in (int, float):
        return Known(type(value), None, (), False)
    return Known(ARRAY if type(value) is np.ndarray else NUMPY, value.dtype, value.shape, False)


def _check_line(fn, values):
    """The direct line for ``fn(*values)``, if written, computes what ``fn`` does with
    the layer off, and its facts describe that value."""
    names = [f"x{i}" for i in range(len(values))]
    known = {n: _facts(v) for n, v in zip(names, values)}
    found = _kernel(fn, names, known)
    if found is None:
        return False
    line, facts = found
    namespace = kernel_namespace() | dict(zip(names, values))
    with np.errstate(all="ignore"):
        got = eval(line, namespace)
    with fast.disabled():
        want = fn(*values)
    assert type(got) is type(want)
    assert got.dtype == want.dtype == facts.dtype
    assert got.shape == want.shape
    assert facts.shape is None or facts.shape == got.shape
    assert (type(got) is np.ndarray) if facts.kind == ARRAY else facts.kind == NUMPY
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    return True


@pytest.mark.parametrize("op", ["add", "mul", "eq", "lt", "logical_and"])
@pytest.mark.parametrize("dtype", _DTYPES, ids=str)
def test_binary_lines_compute_what_the_promoting_forward_computes(op, dtype):
    written = 0
    for other in _DTYPES:
        for x_shape in _SHAPES:
            for y_shape in _SHAPES[:3]:
                for kinds in (("array", "array"), ("scalar", "array"), ("array", "scalar")):
                    x = _operand(kinds[0], dtype, x_shape, 1)
                    y = _operand(kinds[1], other, y_shape, 2)
                    written += _check_line(OPS[op].forward, [x, y])
        for number in (int, float):
            x = _operand("array", dtype, (2, 3), 3)
            written += _check_line(OPS[op].forward, [x, _operand(number, None, (), 0)])
            written += _check_line(OPS[op].forward, [_operand(number, None, (), 0), x])
    assert written > 0  # every dtype has at least its own same-dtype lines


@pytest.mark.parametrize("dtype", _DTYPES, ids=str)
@pytest.mark.parametrize("shape", _SHAPES)
@pytest.mark.parametrize("dim, keepdim", [(None, False), (None, True), (0, False), (-1, True)])
def test_mean_lines_compute_what_the_forward_computes(dtype, shape, dim, keepdim):
    x = _operand("array", dtype, shape, 4)
    fn = functools.partial(OPS["mean"].forward, dim=dim, keepdim=keepdim)
    # integers are summed in int64 first; a reduction of '>f8' gives native float64
    assert _check_line(fn, [x]) == (x.dtype.kind in "fc" and x.dtype.isnative)


@pytest.mark.parametrize("dtype", _DTYPES, ids=str)
@pytest.mark.parametrize(
    "shape, target",
    [((2, 3), ()), ((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 3), (2, 1)), ((2, 3), (1,))],
)
def test_sum_to_lines_compute_what_the_forward_computes(dtype, shape, target):
    x = _operand("array", dtype, shape, 5)
    fn = functools.partial(OPS["sum_to"].forward, shape=target)
    assert _check_line(fn, [x]) == (x.dtype.kind in "fc" and x.dtype.isnative)


def test_a_sum_to_its_own_shape_or_from_a_numpy_scalar_is_left_to_the_forward():
    same = functools.partial(OPS["sum_to"].forward, shape=(2, 3))
    assert not _check_line(same, [np.ones((2, 3))])
    to_scalar = functools.partial(OPS["sum_to"].forward, shape=())
    assert not _check_line(to_scalar, [np.float64(2.0)])
