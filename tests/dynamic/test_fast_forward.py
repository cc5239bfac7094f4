"""The fast layer's ``+ - * /`` (``naivegraph.fast.fastpath``) build what the readable
path builds: the same value bits, dtype, errors, and a ``grad_fn`` node equal field for
field (edges, saved values and the arrays they are, version stamps, weak references).

Every case runs twice in one process, with the layer on and off, and compares; torch
2.13 is the oracle where the behaviour is PyTorch's (names, saved attributes, errors).
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from fast_switch import fast_layer_on

import naivegraph as ng
from naivegraph import fast
from naivegraph.dynamic.node import OpNode
from naivegraph.fast import fastpath

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)  # they compare on with off

OPERATORS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
}
DTYPES = ["bool", "uint8", "int8", "int32", "int64", "float16", "float32", "float64"]
DTYPES += ["complex64", "complex128"]
NUMBERS = [2, -3, 0, 2.5, -0.0, 1e300, float("inf"), float("nan"), True, 1 + 2j, 2**53 + 1]
NUMBERS += [2**63, 300]


from graph_fields import describe as _describe  # noqa: E402


def _run(program):
    """``program()``'s description, or the error it raised (type and message)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning would be a difference
        try:
            return _describe(program())
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            return ("raised", type(error).__name__, str(error))


def _same_on_and_off(program):
    on = _run(program)
    with fast.disabled():
        off = _run(program)
    assert on == off
    return on


def _readable_calls(monkeypatch) -> list:
    """The ops that went through the readable ``apply`` (the fast path stepped aside)."""
    calls = []
    readable = ng.Tensor._ng_apply

    def spy(op, args, attrs):
        calls.append(op.name)
        return readable(op, args, attrs)

    monkeypatch.setattr(ng.Tensor, "_ng_apply", staticmethod(spy))
    return calls


# -- values, dtypes and errors ---------------------------------------------------------------
def _tensor(dtype: str, shape: tuple, requires_grad: bool = False):
    values = np.array([1.5, -2.0, 0.0, 3.0, 7.0, -0.0])[: max(1, int(np.prod(shape)))]
    data = values.reshape(shape) if shape else np.array(values[0])
    t = ng.tensor(data.astype(dtype))
    if requires_grad and t.dtype.kind == "f":
        t.requires_grad_()
    return t


@pytest.mark.parametrize("symbol", OPERATORS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (2, 3)])
def test_a_tensor_and_a_python_number_give_the_readable_paths_bits_or_error(symbol, dtype, shape):
    fn = OPERATORS[symbol]
    for number, grad, reflected in itertools.product(NUMBERS, (False, True), (False, True)):

        def program(number=number, grad=grad, reflected=reflected):
            x = _tensor(dtype, shape, grad)
            y = fn(number, x) if reflected else fn(x, number)
            return {"x": x, "y": y}

        _same_on_and_off(program)


@pytest.mark.parametrize("symbol", OPERATORS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_two_tensors_give_the_readable_paths_bits_nodes_or_error(symbol, dtype):
    fn = OPERATORS[symbol]
    shapes = [((), ()), ((2, 3), ()), ((), (2, 3)), ((2, 3), (2, 3)), ((2, 1), (1, 3))]
    shapes += [((2, 3), (3, 2))]  # not broadcastable: the readable path's error
    for (sx, sy), gx, gy, other in itertools.product(
        shapes, (False, True), (False, True), (dtype, "float64", "float32", "int64")
    ):

        def program(sx=sx, sy=sy, gx=gx, gy=gy, other=other):
            x, y = _tensor(dtype, sx, gx), _tensor(other, sy, gy)
            return {"x": x, "y": y, "z": fn(x, y)}

        _same_on_and_off(program)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("symbol", OPERATORS)
def test_0d_floating_arithmetic_is_the_ufuncs_to_the_bit(dtype, symbol):
    # 0-d operands take Python's or numpy's scalar arithmetic: the bits must be the ufunc's
    rng = np.random.default_rng(0)
    special = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-310, 5e-324, 1e308]
    special += [65504.0, 6e-8, 1e-45, 3.4e38, 0.1, 1 / 3]
    xs = np.concatenate([special, rng.standard_normal(60) * 10.0 ** rng.integers(-8, 8, 60)])
    fn = OPERATORS[symbol]

    def program():
        out = {}
        for i, (a, b) in enumerate(itertools.product(xs[:30], xs[::3])):
            x = ng.tensor(np.array(a, dtype=dtype), requires_grad=i % 2 == 0)
            y = ng.tensor(np.array(b, dtype=dtype))
            out[f"x{i}"], out[f"t{i}"], out[f"n{i}"] = x, fn(x, y), fn(x, float(b))
        return out

    _same_on_and_off(program)


def test_a_division_by_zero_is_numpys_inf_and_nan_not_pythons_error():
    def program():
        x = ng.tensor(1.0, requires_grad=True)
        z = ng.tensor(0.0)
        return {"x": x, "a": x / 0.0, "b": x / 0, "c": x / z, "d": (x * 0) / 0.0}

    described = _same_on_and_off(program)
    assert ("raised",) != described[:1]
    x = ng.tensor(1.0, requires_grad=True)
    assert (x / 0.0).item() == np.inf and np.isnan(((x * 0) / 0.0).item())


def test_numpys_error_state_is_ignored_and_left_as_it_was():
    before = np.geterr()
    with np.errstate(all="raise"):
        x = ng.tensor(1e308, dtype=ng.float64, requires_grad=True)
        h = ng.tensor(np.float16(60000.0))
        f = ng.tensor(np.ones(3, np.float32) * 3e38)
        results = [x * 10.0, x / 0.0, h * 2.0, f * f, f + 3e38, x - float("inf")]
        rounded = ng.tensor(1e308)  # too large for float32, the default: inf, as in torch
        assert np.geterr()["over"] == "raise"
    assert np.geterr() == before
    assert [float(r.sum()) for r in results[:3]] == [np.inf, np.inf, np.inf]
    assert np.isinf(results[3]._data).all() and np.isinf(results[4]._data).all()
    assert rounded.dtype == ng.float32 and rounded.item() == np.inf


def test_a_python_int_out_of_an_integer_dtypes_range_is_the_readable_error():
    for dtype, number in [("int8", 1000), ("uint8", -1), ("int32", 2**40), ("int64", 2**70)]:

        def program(dtype=dtype, number=number):
            x = _tensor(dtype, (2,))
            return {"x": x, "y": x + number}

        assert _same_on_and_off(program)[0] == "raised"


# -- the node ----------------------------------------------------------------------------------
def test_the_chain_and_the_reference_example_build_the_same_graphs():
    def chain():
        w = ng.tensor(0.5, requires_grad=True)
        ys = {"w": w}
        y = w
        for i in range(6):
            y = y * 0.999 if i % 2 == 0 else y + 0.001
            ys[f"y{i}"] = y
        return ys

    def reference():
        x = ng.ones([2, 2])
        w1, w2, w3 = (ng.tensor(v, requires_grad=True) for v in (2.0, 3.0, 4.0))
        l1 = x * w1
        l2, l3 = l1 + w2, l1 * w3
        l4 = l2 * l3
        return {"x": x, "w1": w1, "w2": w2, "w3": w3, "l1": l1, "l2": l2, "l3": l3, "l4": l4}

    _same_on_and_off(chain)
    _same_on_and_off(reference)


def test_the_fast_path_runs_these_cases_and_steps_aside_for_others(monkeypatch):
    calls = _readable_calls(monkeypatch)
    w = ng.tensor(0.5, requires_grad=True)
    x = ng.ones([2, 2])
    ints = ng.tensor([1, 2])
    for y in (w * 0.5, w + 1, w - w, x / w, x * x, ints + 3, ints * ints, w.float() * 2.0):
        assert y is not None
    assert calls == []
    w * np.float64(2.0), w * ng.tensor(2.0, dtype=ng.float64), x * True, ints / 2
    w.detach() + (1 + 2j), ng.tensor([True]) + True, w * np.array([1.0])
    assert calls == ["mul", "mul", "mul", "div", "add", "add", "mul"]


def test_the_fast_path_steps_aside_under_anomaly_mode_hooks_and_dual_levels(monkeypatch):
    calls = _readable_calls(monkeypatch)
    w = ng.tensor(0.5, requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with ng.autograd.detect_anomaly():
            w * 2.0
    with ng.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        w * w
    with ng.autograd.forward_ad.dual_level():
        ng.autograd.forward_ad.make_dual(ng.tensor(1.0), ng.tensor(1.0)) * 3.0
    with fast.disabled():
        w * 2.0
    assert [name for name in calls if name == "mul"] == ["mul", "mul", "mul", "mul"]


def test_a_tensor_subclass_that_redefines_autograd_state_gets_the_readable_path(monkeypatch):
    class Odd(ng.Tensor):
        @property
        def grad_fn(self):  # type: ignore[override]
            return None

        @grad_fn.setter
        def grad_fn(self, value):
            pass

    calls = _readable_calls(monkeypatch)
    odd = Odd(2.0)
    odd * 2.0
    ng.tensor(1.0) + odd
    param = ng.nn.Parameter(ng.tensor(2.0))
    assert (param * 2.0).grad_fn.name() == "MulBackward0"
    assert calls == ["mul", "add"]


def test_no_grad_records_nothing_and_the_values_match():
    def program():
        w = ng.tensor([0.5, 2.0], requires_grad=True)
        with ng.no_grad():
            a, b = w * 3.0, w / w
        return {"w": w, "a": a, "b": b}

    described = _same_on_and_off(program)
    assert ("a", "version", 0, ("NoneType", "None")) in described


def test_saved_tensors_and_version_stamps_are_torchs():
    torch = pytest.importorskip("torch")
    for lib in (ng, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 1.0
        c = lib.tensor([3.0, 4.0])
        y = b * c  # c needs no gradient: b is not saved (torch saves what it will read)
        assert y.grad_fn._saved_self is None and y.grad_fn._saved_other is c
        y2 = b * b.detach().requires_grad_()
        assert y2.grad_fn._saved_self is b
        z = b * 2.0
        assert z.grad_fn._saved_other == 2.0
        q = b / c
        assert type(q.grad_fn).__name__ == "DivBackward0"
        assert q.grad_fn.next_functions[1] == (None, 0)
        assert type(y.grad_fn.next_functions[0][0]).__name__ == "MulBackward0"
        s = b - 1
        assert type(s.grad_fn).__name__ == "SubBackward0"
        assert type(s.grad_fn.next_functions[0][0]).__name__ == "MulBackward0"


@pytest.mark.parametrize("lib_name", ["ng", "torch"])
def test_an_in_place_change_after_the_op_breaks_backward_with_torchs_error(lib_name):
    lib = ng if lib_name == "ng" else pytest.importorskip("torch")
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    b = w * 1.0
    y = b * b
    b.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    c = w * 1.0
    z = c * 2.0  # the number's partial reads nothing of c: c is not saved
    c.add_(1)
    z.sum().backward()
    assert w.grad.tolist() == [2.0, 2.0]


def test_version_errors_and_second_backward_errors_match_the_readable_path():
    def in_place():
        w = ng.tensor([1.0, 2.0], requires_grad=True)
        b = w * 1.0
        y = b / w
        w2 = b * 3
        b.add_(1)
        y.sum().backward()
        return {"w": w, "w2": w2}

    def twice():
        w = ng.tensor(2.0, requires_grad=True)
        y = (w * w) * 3.0
        y.backward(retain_graph=True)
        y.backward()
        y2 = w * w
        y2.backward()
        y2.backward()
        return {"w": w}

    def stamped():  # operands already changed in place: their versions are not 0
        w = ng.tensor([1.0, 2.0], requires_grad=True)
        b, c = w * 1.0, w * 2.0
        b.add_(1)
        c.mul_(3)
        c.mul_(3)
        return {"w": w, "b": b, "c": c, "y": b * c, "z": b / c, "s": c - b, "t": c * 2.0}

    assert _same_on_and_off(in_place)[0] == "raised"
    assert any(entry[:3] == ("c", "version", 2) for entry in _same_on_and_off(stamped))
    assert "second time" in _same_on_and_off(twice)[2]


def test_hooks_retain_grad_and_double_backward_see_no_difference():
    def program():
        w = ng.tensor([1.0, -2.0], requires_grad=True)
        seen = []
        a = w * w
        a.retain_grad()
        a.register_hook(lambda g: seen.append(g.clone()) or g * 2)
        a.grad_fn.register_hook(lambda gi, go: seen.append(gi[0].clone()))
        b = a / 3.0 - w
        (g,) = ng.autograd.grad(b.sum(), w, create_graph=True)
        (g * g).sum().backward()
        return {"w": w, "a": a, "g": g, "wg": w.grad, **{f"s{i}": s for i, s in enumerate(seen)}}

    _same_on_and_off(program)


def test_the_node_is_built_field_for_field_as_op_node_init_would():
    # a node class with a field the fast path does not know would be built by its class
    assert fastpath._BY_HAND
    fields = {n for k in OpNode.__mro__ for n in vars(k).get("__slots__", ())}
    assert "output_ref" in fields and "sources" in fields


def test_torch_agrees_on_values_dtypes_and_names_of_the_chain_and_reference():
    torch = pytest.importorskip("torch")
    for lib in (ng, torch):
        w = lib.tensor(0.5, dtype=lib.float64, requires_grad=True)
        y = w
        for _ in range(50):
            y = y * 0.999
            y = y + 0.001
        y.backward()
        assert type(y.grad_fn).__name__ == "AddBackward0"
        assert y.dtype == lib.float64
    x = ng.tensor(0.5, dtype=ng.float64, requires_grad=True)
    t = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    a, b = x, t
    for _ in range(50):
        a, b = a * 0.999 + 0.001, b * 0.999 + 0.001
    a.backward()
    b.backward()
    assert a.item() == b.item() and x.grad.item() == t.grad.item()


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int32", "uint8"])
def test_torch_agrees_on_a_0d_tensor_and_a_python_number(dtype):
    # (an integer tensor with a Python float, or divided, is float64 here by design: the
    # readable path's promotion, which this path leaves to it)
    torch = pytest.importorskip("torch")
    floating = dtype.startswith("float")
    for number in (3, 0.1, 2.5) if floating else (3, 5):
        for symbol, fn in OPERATORS.items():
            if symbol == "/" and not floating:
                continue
            a = fn(ng.tensor(np.array(7, dtype=dtype)), number)
            b = fn(torch.tensor(7, dtype=getattr(torch, dtype)), number)
            assert str(a.dtype) == str(b.dtype).replace("torch.", "")
            assert a.item() == pytest.approx(b.item(), rel=1e-3)


# -- negation: ``-x`` and ``x.neg()`` ----------------------------------------------------------
NEGATIONS = {"-x": lambda x: -x, "x.neg()": lambda x: x.neg()}


@pytest.mark.parametrize("spelling", NEGATIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (2, 3)])
def test_negation_gives_the_readable_paths_bits_node_or_error(spelling, dtype, shape):
    fn = NEGATIONS[spelling]
    for grad in (False, True):

        def program(grad=grad):
            x = _tensor(dtype, shape, grad)
            y = fn(x)
            return {"x": x, "y": y, "z": fn(y)}

        _same_on_and_off(program)


def test_negation_of_special_values_is_the_ufuncs_to_the_bit():
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, 1e308, 1 / 3]

    def program():
        out = {}
        for dtype in ("float16", "float32", "float64"):
            for i, v in enumerate(values):
                x = ng.tensor(np.array(v, dtype=dtype), requires_grad=i % 2 == 0)
                out[f"{dtype}{i}"], out[f"-{dtype}{i}"] = x, -x
        for dtype in ("int8", "uint8", "int64"):  # the most negative integer wraps around
            x = ng.tensor(np.array(np.iinfo(dtype).min, dtype=dtype))
            out[dtype], out["-" + dtype] = x, -x
        return out

    _same_on_and_off(program)


def test_negation_chains_views_and_stamped_operands_build_the_same_graphs():
    def program():
        w = ng.tensor([1.0, -2.0, 3.0], requires_grad=True)
        a = w * 1.0
        a.add_(1)  # version 1
        v = a[1:]  # a view: its negation is no view
        ys = {"w": w, "a": a, "v": v, "nv": -v, "nt": -(w.t()), "nn": -(-(-w))}
        ys["mix"] = -(ys["nn"] * 2.0) + ys["nn"]
        return ys

    _same_on_and_off(program)


def test_negation_backward_retain_graph_and_double_backward_see_no_difference():
    def program():
        w = ng.tensor([1.0, -2.0], requires_grad=True)
        y = -(w * w)
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        (g,) = ng.autograd.grad((-(-w * w)).sum(), w, create_graph=True)
        (-g).sum().backward()
        z = -w
        z.sum().backward()
        z.sum().backward()  # neg keeps nothing: a second pass is allowed, as in torch
        return {"w": w, "y": y, "g": g, "z": z, "wg": w.grad}

    _same_on_and_off(program)


def test_negation_nodes_share_one_saved_list_that_nothing_writes():
    w = ng.tensor([1.0, 2.0], requires_grad=True)
    a, b = -w, -(-w)
    assert a.grad_fn.saved is b.grad_fn.saved
    shared = list(a.grad_fn.saved)
    with ng.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        c = -a  # the readable path: its own list
    (a + b + c).sum().backward()
    assert a.grad_fn.saved == shared and b.grad_fn.saved == shared
    assert c.grad_fn.saved is not a.grad_fn.saved
    assert w.grad.tolist() == [1.0, 1.0]  # -w + w + w


def test_negation_steps_aside_for_bool_complex_anomaly_hooks_and_dual_levels(monkeypatch):
    calls = _readable_calls(monkeypatch)
    w = ng.tensor(0.5, requires_grad=True)
    -w, w.neg(), -ng.tensor([1, 2]), -ng.tensor([1.0, 2.0], dtype=ng.float32)
    with ng.no_grad():
        -w
    assert calls == []
    with pytest.raises(RuntimeError, match="Negation, the `-` operator, on a bool tensor"):
        -ng.tensor([True])
    -ng.tensor(1 + 2j)
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with ng.autograd.detect_anomaly():
            -w
    with ng.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        w.neg()
    with ng.autograd.forward_ad.dual_level():
        -ng.autograd.forward_ad.make_dual(ng.tensor(1.0), ng.tensor(1.0))
    with fast.disabled():
        -w
    assert calls == ["neg"] * 6


def test_torch_agrees_on_the_negation_node_its_edges_and_gradient():
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (ng, torch):
        w = lib.tensor([1.5, -2.0], dtype=lib.float64, requires_grad=True)
        y = -(-(w * 3.0))
        assert type(y.grad_fn).__name__ == "NegBackward0"
        inner = y.grad_fn.next_functions[0][0]
        assert type(inner).__name__ == "NegBackward0"
        assert type(inner.next_functions[0][0]).__name__ == "MulBackward0"
        assert y.grad_fn.next_functions[0][1] == 0
        z = -w
        assert type(z.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"
        (y.sum() + z.sum()).backward()
        seen.append((y.tolist(), w.grad.tolist(), str(y.dtype).split(".")[-1]))
    assert seen[0] == seen[1]


def test_a_negations_output_ref_answers_its_tensor_then_none_like_the_readable_ones():
    w = ng.tensor([1.0, 2.0], requires_grad=True)
    y = -w
    node = y.grad_fn
    assert node.output_ref() is y
    del y
    assert node.output_ref() is None


def test_negations_drawn_with_their_tensors_alive_or_gone_look_the_same():
    pytest.importorskip("graphviz")
    from naivegraph.render import render

    def program():
        w = ng.tensor(2.0, requires_grad=True)
        y = -(-(-w))
        z = -y
        return render(z, params={"w": w}).source

    on = program()
    with fast.disabled():
        off = program()
    assert on == off


def test_a_number_on_the_left_builds_the_readable_paths_node_with_the_tensor_first():
    def program():
        w = ng.tensor([1.5, -2.0], requires_grad=True)
        i = ng.tensor([1, 2])
        out = {"w": w, "i": i, "a": 2.0 + w, "b": 3 * w, "c": 2 * i, "d": 2.5 * i}
        out["e"], out["f"] = np.ones(2) + w, np.float64(2.0) * w  # not numbers: readable
        out["g"], out["h"] = True * w, (1 + 2j) + w.detach()
        return out

    _same_on_and_off(program)
    torch = pytest.importorskip("torch")
    for lib in (ng, torch):
        w = lib.tensor([1.5, -2.0], dtype=lib.float64, requires_grad=True)
        y = 2.0 * (1.0 + w)
        assert type(y.grad_fn).__name__ == "MulBackward0"
        assert type(y.grad_fn.next_functions[0][0]).__name__ == "AddBackward0"
        assert y.grad_fn._saved_other == 2.0


# -- a dense layer: ``x @ w`` and ``x.relu()`` (``naivegraph.fast.fastlinear``) ---------------
MATMUL_SHAPES = [((2, 3), (3, 4)), ((1, 1), (1, 1)), ((0, 3), (3, 2)), ((2, 0), (0, 3))]
MATMUL_SHAPES += [((3,), (3, 2)), ((2, 3), (3,)), ((3,), (3,)), ((2, 2, 3), (3, 2))]
MATMUL_SHAPES += [((2, 3), (2, 3, 2)), ((2, 3), (2, 3)), ((), (2, 3)), ((2, 3), ())]
SPECIAL = [1.5, -2.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 3.0, -7.25, 1e38, -1e38]


def _array(dtype: str, shape: tuple, requires_grad: bool = False):
    """A tensor of ``shape`` cycling through ``SPECIAL`` (every sign, zero, inf and NaN)."""
    size = int(np.prod(shape))
    values = np.resize(np.array(SPECIAL), size).reshape(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 1e38 and inf are out of an integer's range
        t = ng.tensor(values.astype(dtype))
    if requires_grad and t.dtype.kind == "f":
        t.requires_grad_()
    return t


@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul_gives_the_readable_paths_bits_nodes_or_error(dtype):
    for (sx, sy), gx, gy, other in itertools.product(
        MATMUL_SHAPES, (False, True), (False, True), (dtype, "float64", "float32")
    ):

        def program(sx=sx, sy=sy, gx=gx, gy=gy, other=other):
            x, y = _array(dtype, sx, gx), _array(other, sy, gy)
            return {"x": x, "y": y, "z": x @ y}

        _same_on_and_off(program)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4), (0, 3), (70, 70)])
def test_relu_gives_the_readable_paths_bits_node_or_error(dtype, shape):
    # (70, 70) is large enough for the masked-zero trick of the readable forward
    for grad in (False, True):

        def program(grad=grad):
            x = _array(dtype, shape, grad)
            y = x.relu()
            return {"x": x, "y": y, "z": y.relu()}

        _same_on_and_off(program)


def test_a_dense_layer_on_views_and_stamped_operands_builds_the_same_graphs():
    def program():
        w = _array("float32", (4, 3), True)
        x = _array("float32", (6, 4))
        a = w * 1.0
        a.mul_(2.0)  # version 1: its stamp in the product's node
        ys = {"w": w, "x": x, "a": a}
        ys["wt"] = w.t()  # a transposed view: not contiguous
        ys["p"] = x[::2] @ a  # a strided row view times a stamped non-leaf
        ys["q"] = (a.t() @ x.t()).relu()
        ys["r"] = ys["wt"] @ ys["wt"].t()
        ys["s"] = ys["q"][1:].relu()  # relu of a view
        ys["t"] = x[:, 1:3] @ a[1:3]
        return ys

    _same_on_and_off(program)


def test_the_mlp_steps_forward_builds_the_same_graph_and_backward_the_same_grads():
    def program():
        rng = np.random.default_rng(3)
        xs = ng.from_numpy(rng.standard_normal((8, 12)).astype(np.float32))
        ys = ng.from_numpy(rng.integers(0, 5, 8))
        w1 = ng.from_numpy(rng.standard_normal((12, 6)).astype(np.float32)).requires_grad_()
        b1 = ng.zeros(6, dtype=ng.float32, requires_grad=True)
        w2 = ng.from_numpy(rng.standard_normal((6, 5)).astype(np.float32)).requires_grad_()
        b2 = ng.zeros(5, dtype=ng.float32, requires_grad=True)
        h = (xs @ w1 + b1).relu()
        logits = h @ w2 + b2
        loss = ng.nn.functional.cross_entropy(logits, ys)
        loss.backward(retain_graph=True)
        return {"xs": xs, "w1": w1, "b1": b1, "w2": w2, "b2": b2, "h": h, "loss": loss}

    described = _same_on_and_off(program)
    assert any(part[0] == "MmBackward0" for part in described)
    assert any(part[0] == "ReluBackward0" for part in described)


def test_matmul_and_relu_backward_version_errors_and_double_backward_match():
    def program():
        w = ng.tensor([[1.0, -2.0, 0.5], [3.0, -0.0, 2.0], [-1.0, 4.0, 0.25]], requires_grad=True)
        x = ng.tensor([[0.5, 1.0, -3.0], [2.0, -1.0, 1.5]])
        y = (x @ w).relu()
        g = ng.autograd.grad(((y * y) @ w).sum(), w, create_graph=True)[0]
        g.sum().backward()
        out = {"w": w, "y": y, "g": g, "wg": w.grad}
        r = (w * 1.0).relu()
        r.add_(1.0)  # relu saved its output: backward must refuse
        try:
            r.sum().backward()
        except RuntimeError as error:
            out["error"] = ng.tensor(len(str(error)))
        return out

    described = _same_on_and_off(program)
    assert any(part[0] == "error" for part in described)


def test_the_dense_layer_path_runs_2d_floats_and_steps_aside_for_the_rest(monkeypatch):
    calls = _readable_calls(monkeypatch)
    w = ng.ones(3, 2, requires_grad=True)
    x = ng.ones(4, 3)
    (x @ w).relu(), x.double() @ w.double(), (x.float() @ w.float().detach()).relu()
    with ng.no_grad():
        (x @ w).relu()
    assert calls == []
    ng.ones(3) @ w, x @ ng.ones(3), ng.ones(2, 4, 3) @ w  # vectors and batches
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
        x.double() @ w
    with pytest.raises(RuntimeError):
        x @ x  # (4, 3) @ (4, 3): the readable path's error
    ng.tensor([[1, 2]]) @ ng.tensor([[3], [4]]), ng.tensor([-1, 2]).relu()
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        ng.tensor([True]).relu()
    assert calls.count("matmul") == 6 and calls.count("relu") == 2
    del calls[:]
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with ng.autograd.detect_anomaly():
            (x @ w).relu()
    with ng.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        (x @ w).relu()
    with ng.autograd.forward_ad.dual_level():
        dual = ng.autograd.forward_ad.make_dual(x, ng.ones(4, 3))
        (dual @ w).relu()
    with fast.disabled():
        (x @ w).relu()
    assert calls == ["matmul", "relu"] * 4


def test_torch_agrees_on_the_dense_layers_nodes_saved_values_and_gradients():
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (ng, torch):
        x = lib.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=lib.float32)
        w = lib.tensor([[1.0, -1.0], [2.0, 0.25]], dtype=lib.float32, requires_grad=True)
        p = x @ w
        assert type(p.grad_fn).__name__ == "MmBackward0"
        assert p.grad_fn._saved_self is x  # x needs no gradient: w is not kept
        assert p.grad_fn.next_functions[0] == (None, 0)
        assert type(p.grad_fn.next_functions[1][0]).__name__ == "AccumulateGrad"
        r = p.relu()
        assert type(r.grad_fn).__name__ == "ReluBackward0"
        assert r.grad_fn._saved_result.tolist() == r.tolist()
        assert r._version == 0
        q = r @ w
        assert q.grad_fn._saved_self is r and q.grad_fn._saved_mat2 is w
        q.sum().backward()
        seen.append((q.tolist(), w.grad.tolist(), r.tolist(), str(q.dtype).split(".")[-1]))
    assert seen[0] == seen[1]


# -- whole-tensor reductions: ``x.sum()`` and ``x.mean()`` -----------------------------------
REDUCTIONS = {
    "x.sum()": lambda x: x.sum(),
    "x.mean()": lambda x: x.mean(),
    "x.sum(dim=None)": lambda x: x.sum(dim=None),
    "x.mean(None, False)": lambda x: x.mean(None, False),
    "x.sum(0)": lambda x: x.sum(0),
    "x.mean(keepdim=True)": lambda x: x.mean(keepdim=True),
}


@pytest.mark.parametrize("spelling", REDUCTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (2, 3), (0, 3)])
def test_whole_reductions_give_the_readable_paths_bits_node_or_error(spelling, dtype, shape):
    fn = REDUCTIONS[spelling]
    for grad in (False, True):

        def program(grad=grad):
            if shape == (0, 3):
                x = ng.zeros(shape, dtype=getattr(ng, dtype), requires_grad=grad)
            else:
                x = _tensor(dtype, shape, grad)
            y = fn(x)
            return {"x": x, "y": y, "z": fn(y * 2)}

        _same_on_and_off(program)


def test_whole_reductions_of_special_and_overflowing_values_are_the_readable_bits():
    rows = [[np.inf, -np.inf, 1.0], [np.nan, 2.0, -0.0], [6e4, 6e4, 6e4], [-0.0, -0.0, -0.0]]
    rows += [[1e308, 1e308, 1.0], [1 / 3, 2 / 3, 1e-8]]

    def program():
        out = {}
        for dtype in ("float16", "float32", "float64"):
            for i, row in enumerate(rows):
                x = ng.tensor(np.array(row, dtype=dtype), requires_grad=i % 2 == 0)
                out[f"{dtype}{i}"], out[f"s{dtype}{i}"], out[f"m{dtype}{i}"] = x, x.sum(), x.mean()
        return out

    _same_on_and_off(program)


def test_whole_reductions_in_a_graph_backward_and_double_backward_see_no_difference():
    def program():
        w = ng.tensor([[1.0, -2.0], [0.5, 4.0]], requires_grad=True)
        x = ng.ones([2, 2])
        l1 = x * w
        loss = ((l1 + w) * (l1 * 3.0)).mean()
        loss.backward(retain_graph=True)
        loss.backward()
        (g,) = ng.autograd.grad((w * w).sum(), w, create_graph=True)
        g.mean().backward()
        t = w.t().sum() + w[1:].mean() + (-w).sum()  # views and a negation feed them
        t.backward()
        return {"w": w, "x": x, "loss": loss, "g": g, "t": t, "wg": w.grad}

    _same_on_and_off(program)


def test_whole_reductions_step_aside_for_dims_ints_anomaly_hooks_and_dual_levels(monkeypatch):
    calls = _readable_calls(monkeypatch)
    w = ng.tensor([0.5, 1.5], requires_grad=True)
    w.sum(), w.mean(), ng.tensor([1.0], dtype=ng.float32).mean()
    with ng.no_grad():
        w.mean()
    assert calls == []
    w.sum(0), w.mean(keepdim=True), ng.tensor([1, 2]).sum(), ng.zeros(0).mean()
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        ng.tensor([1, 2]).mean()
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with ng.autograd.detect_anomaly():
            w.mean()
    with ng.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        w.sum()
    with ng.autograd.forward_ad.dual_level():
        ng.autograd.forward_ad.make_dual(ng.tensor([1.0]), ng.tensor([1.0])).mean()
    with fast.disabled():
        w.sum()
    assert calls == ["sum", "mean", "sum", "mean", "mean", "sum", "mean", "sum"]


def test_torch_agrees_on_the_whole_reductions_nodes_values_and_gradients():
    torch = pytest.importorskip("torch")
    seen = []
    for lib in (ng, torch):
        w = lib.tensor([[1.5, -2.0], [0.25, 3.0]], dtype=lib.float32, requires_grad=True)
        m, s = (w * 2.0).mean(), w.sum()
        assert type(m.grad_fn).__name__ == "MeanBackward0"
        assert type(s.grad_fn).__name__ == "SumBackward0"
        assert type(m.grad_fn.next_functions[0][0]).__name__ == "MulBackward0"
        assert type(s.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"
        (m + s).backward()
        seen.append((m.item(), s.item(), w.grad.tolist(), str(m.dtype).split(".")[-1]))
    assert seen[0] == seen[1]


# -- 0-d float32, the default dtype: float64 arithmetic rounded once ---------------------------
def _float32_operands(n: int) -> np.ndarray:
    """float32 values over the whole range: normals of every exponent, subnormals, and
    neighbours of values whose products or quotients land on a rounding tie."""
    rng = np.random.default_rng(32)
    bits = rng.integers(0, 2**31 - 2**23, n, dtype=np.uint32)  # finite, positive
    values = bits.view(np.float32) * rng.choice(np.float32([1, -1]), n)
    ties = np.float32([1 + 2**-23, 1 + 2**-12, 3, 1 / 3, 0.1, 2**-126, 2**-149, 2**127])
    return np.concatenate([values, ties, -ties, np.float32([0.0, -0.0])])


@pytest.mark.parametrize("symbol", OPERATORS)
def test_0d_float32_arithmetic_is_numpys_float32_arithmetic_to_the_bit(symbol):
    # The fast path computes x <op> y in float64 and rounds once to float32.  For + - * /
    # that is float32's correctly rounded result, as double rounding is innocuous when
    # 53 >= 2 * 24 + 2 (Figueroa 1995); checked here against numpy's own float32 loop,
    # subnormal and overflowing results included (those step aside to the readable path).
    xs = _float32_operands(1500)
    ys = np.roll(xs, 7)
    fn = OPERATORS[symbol]
    with np.errstate(all="ignore"):
        expected = fn(xs, ys)  # numpy's float32 loop
    got = np.array([fn(ng.tensor(a), ng.tensor(b))._data for a, b in zip(xs, ys)])
    assert got.dtype == np.float32 and got.tobytes() == expected.tobytes()


def test_a_python_float_meets_a_float32_tensor_rounded_to_float32_first():
    # numpy (and torch) convert the Python number to float32 before the float32 operation:
    # Python's float64 product of the unrounded number would be another value
    x = ng.tensor(0.5, dtype=ng.float32, requires_grad=True)
    for number in (0.999, 0.1, 1 / 3, 1e-50, 2.0**-140, -7.25, 16777217):
        with np.errstate(all="ignore"):
            expected = np.float32(0.5) * np.float32(number)
        assert (x * number)._data.tobytes() == np.array(expected, np.float32).tobytes()
    five = ng.tensor(5.0, dtype=ng.float32)
    assert (five * 0.001).item() == np.float32(0.0050000004)  # float32(5) * float32(0.001)
    assert np.float32(5.0 * 0.001) == np.float32(0.005)  # the unrounded number's product


def test_0d_float32_with_numbers_ints_and_specials_gives_the_readable_paths_bits():
    numbers = [0.999, 0.001, 0.1, 1 / 3, -0.0, 1e-50, 1e300, -1e300, float("inf")]
    numbers += [float("nan"), 3.4e38, 2, -3, 0, 2**24, 2**24 + 1, -(2**24) - 1, 2**60]
    starts = [0.5, -1.5, 0.0, -0.0, 3e38, 1e-45, float("inf"), float("nan")]

    def program():
        out = {}
        for i, (a, number) in enumerate(itertools.product(starts, numbers)):
            x = ng.tensor(a, dtype=ng.float32, requires_grad=i % 2 == 0)
            out[f"x{i}"] = x
            for symbol, fn in OPERATORS.items():
                out[f"{symbol}{i}"] = fn(x, number)
            out[f"r{i}"], out[f"m{i}"], out[f"n{i}"] = number + x, number * x, -x
        return out

    _same_on_and_off(program)


def test_the_float32_chain_and_its_backward_are_the_readable_paths():
    def chain():
        w = ng.tensor(0.5, dtype=ng.float32, requires_grad=True)
        ys = {"w": w}
        y = w
        for i in range(40):
            y = y * 0.999 if i % 2 == 0 else y + 0.001
            ys[f"y{i}"] = y
        z = -(y / ng.tensor(3.0, dtype=ng.float32)) - w
        z.backward()
        ys["z"], ys["grad"] = z, w.grad
        return ys

    described = _same_on_and_off(chain)
    grad = next(entry for entry in described if entry[0] == "grad")
    assert grad[1] == "<f4"  # the gradient is float32, as torch's


def test_0d_float32_arithmetic_runs_on_the_fast_path(monkeypatch):
    calls = _readable_calls(monkeypatch)
    w = ng.tensor(0.5, dtype=ng.float32, requires_grad=True)
    y = (w * 0.999 + 0.001 - w / ng.tensor(4.0, dtype=ng.float32)) * 3
    -y, 2.0 * y, y.sum(), y.mean()
    assert calls == []
    assert y.dtype == ng.float32 and y.grad_fn.saved_out is fastpath._META_0D_F32
    w * 1e300, w / 0.0, w * 2.0**127 * 4.0  # an overflowing number, a zero divisor, a result
    assert calls == ["mul", "div", "mul"]


def test_torch_agrees_on_the_float32_chain_to_the_bit():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (ng, torch):
        w = lib.tensor(0.5, dtype=lib.float32, requires_grad=True)
        y = w
        for _ in range(50):
            y = y * 0.999
            y = y + 0.001
            y = y / 1.001 - 0.0001
        y.backward()
        results.append((y.detach().numpy().tobytes(), w.grad.numpy().tobytes()))
    assert results[0] == results[1]


def test_0d_float32_results_at_the_edge_of_overflow_are_the_readable_paths():
    # the largest float32 times (1 + 2**-24) is a tie that rounds to even: inf in float32;
    # one float64 step below it rounds to the largest float32
    largest = float(np.finfo(np.float32).max)
    edge = 2.0**128 - 2.0**103
    with np.errstate(over="ignore"):
        assert np.float32(edge) == np.inf and np.float32(np.nextafter(edge, 0)) == largest

    def program():
        x = ng.tensor(largest, dtype=ng.float32, requires_grad=True)
        out = {"x": x}
        for i, number in enumerate([1 + 2**-24, 1 + 2**-23, 1 + 2**-25, 1.0, -1 - 2**-24]):
            out[f"m{i}"], out[f"a{i}"] = x * number, x + number * 2.0**104
        return out

    _same_on_and_off(program)
