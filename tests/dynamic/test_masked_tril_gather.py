"""``masked_fill``, ``tril`` / ``triu`` and ``gather`` (with ``scatter_add``, its
gradient) as torch's: the ops of attention masks, causal masks and label picks in
PyTorch tutorials.  Each output entry is a copy of an input entry or of the fill
value, so values and gradients are compared with torch bit for bit, with the fast
layer on and off; errors by type and torch's key phrase."""

from __future__ import annotations

import numpy as np
import pytest
from bit_outcomes import bits, outcome, same_bits_as_torch

import naivegraph as ng
import naivegraph.static as ns

torch = pytest.importorskip("torch")

X = np.array([[1.5, -2.0, 0.5, 4.0], [3.0, -0.75, 2.5, -1.0], [0.25, 6.0, -3.5, 2.0]])


def _namespace(m) -> dict:
    return {
        "m": m,
        "x": m.tensor(X, dtype=m.float32),
        "d": m.tensor(X),  # float64
        "a": m.tensor([[5, -6, 7], [1, 0, -2]]),
        "b": m.tensor([[True, False, True], [False, False, True]]),
        "z": m.zeros(0, 3),
        "s": m.tensor(2.5),
        "i": m.tensor([[3, 0, 3, 1], [2, 2, 0, 1]]),
    }


VALUE_PROGRAMS = [
    # masked_fill: a number, a 0-d tensor, a broadcast mask, every dtype
    "x.masked_fill(x > 0, 0.0)",
    "x.masked_fill(x < 0, float('-inf'))",
    "x.masked_fill(x[0] > 0, -1)",
    "x.masked_fill(m.tensor([[True], [False], [True]]), 9.5)",
    "x.masked_fill(m.tensor(True), 2)",
    "x[0].masked_fill(x > 0, 1.0)",  # out of place, the result takes the mask's shape
    "x.masked_fill(x > 0, m.tensor(7.25, dtype=m.float64))",
    "d.masked_fill(d > 0, s)",
    "a.masked_fill(a > 0, 1.7)",
    "a.masked_fill(a < 0, m.tensor(-2.9))",
    "b.masked_fill(b, 0)",
    "b.masked_fill(~b, 2)",
    "z.masked_fill(z > 0, 1.0)",
    "s.masked_fill(s > 0, 0.0)",
    "m.masked_fill(x, x > 1, 3)",
    "x.clone().masked_fill_(x > 0, 1.0)",
    "a.clone().masked_fill_(a == 0, m.tensor(4))",
    # tril / triu: diagonal offsets past either side, batches, dtypes, empties
    "x.tril()",
    "x.triu()",
    "x.tril(1)",
    "x.tril(-1)",
    "x.triu(diagonal=2)",
    "x.triu(-2)",
    "x.tril(10)",
    "x.triu(10)",
    "x.tril(-10)",
    "x.triu(m.tensor(1))",
    "a.masked_fill(a > 0, True)",
    "a.masked_fill(a > 0, -9.0e18)",
    "m.tril(x.reshape(2, 2, 3), -1)",
    "m.triu(x.reshape(3, 2, 2), diagonal=1)",
    "a.tril()",
    "b.triu(1)",
    "z.tril()",
    "m.ones(3, 0).triu()",
    "x.clone().tril_(1)",
    "a.clone().triu_(-1)",
    # gather: repeats, negative dims, dtypes, smaller index than self, empty, 0-d
    "x.gather(1, i)",
    "x.gather(-1, i)",
    "x.gather(0, i % 3)",
    "x.gather(-2, i[:1] % 3)",
    "x.gather(1, i[:, :2])",
    "x.gather(1, i.int())",
    "d.gather(1, i)",
    "a.gather(1, i[:, :2] % 3)",
    "b.gather(0, m.tensor([[1, 0, 1]]))",
    "x.gather(1, m.zeros(3, 0, dtype=m.int64))",
    "x[0].gather(0, m.zeros(2, 0, dtype=m.uint8))",  # an empty index passes every check
    "x.scatter_add(0, m.zeros(0, dtype=m.float32), x[:0, 0])",
    "s.gather(0, m.tensor(0))",
    "s.gather(0, m.tensor([0, 0]))",
    "x[0].gather(0, m.tensor(3))",
    "m.gather(x, 1, i)",
    # scatter_add: repeated positions add up
    "m.zeros(2, 4).scatter_add(1, i, m.ones(2, 4))",
    "x.scatter_add(0, i % 3, x[:2])",
    "a.scatter_add(1, i[:, :3] % 3, a)",
    "m.scatter_add(d, 1, i, d[:2])",
]


@pytest.mark.parametrize("program", VALUE_PROGRAMS)
def test_values_and_dtypes_are_torchs_bit_for_bit(program):
    def run(m):
        result = eval(program, _namespace(m))
        return [result, str(result.dtype).split(".")[-1]]

    assert same_bits_as_torch(run)[0] == "ok"


GRADIENT_PROGRAMS = [
    ("x.masked_fill(x > 0, 0.0)", "MaskedFillBackward0"),
    ("x.masked_fill(x[1] > 0, float('nan'))", "MaskedFillBackward0"),
    ("x.masked_fill(m.tensor([[True], [False], [True]]), 1)", "MaskedFillBackward0"),
    ("x[1].masked_fill(x > 0, 0.0)", "MaskedFillBackward0"),  # summed back over the rows
    ("x.masked_fill(x < 0, v)", "MaskedFillBackward1"),
    ("m.masked_fill(x, x < 0, v * 2)", "MaskedFillBackward1"),
    ("(x * 1).masked_fill_(x > 0, 5.0)", "MaskedFillBackward0"),
    ("(x * 1).masked_fill_(x > 0, v)", "MaskedFillBackward1"),
    ("x.tril()", "TrilBackward0"),
    ("x.tril(-1)", "TrilBackward0"),
    ("m.tril(x, 2)", "TrilBackward0"),
    ("x.reshape(3, 2, 2).triu(1)", "TriuBackward0"),
    ("m.triu(x, diagonal=-1)", "TriuBackward0"),
    ("(x * 1).triu_(1)", "TriuBackward0"),
    ("(x * 1).tril_(-2)", "TrilBackward0"),
    ("x.gather(1, i)", "GatherBackward0"),
    ("x.gather(-2, i % 3)", "GatherBackward0"),
    ("x.gather(1, i[:, :1])", "GatherBackward0"),
    ("m.gather(x, 0, m.tensor([[2, 2, 2, 2]]))", "GatherBackward0"),
    ("x.gather(1, m.zeros(3, 0, dtype=m.int64))", "GatherBackward0"),
    ("x.scatter_add(1, i, v * x[:2])", "ScatterAddBackward0"),
]


@pytest.mark.parametrize(("program", "node"), GRADIENT_PROGRAMS)
def test_gradients_and_grad_fn_are_torchs_exactly(program, node):
    def run(m):
        x = m.tensor(X, dtype=m.float64, requires_grad=True)
        v = m.tensor(-1.25, dtype=m.float64, requires_grad=True)
        names = {**_namespace(m), "x": x, "v": v}
        y = eval(program, names)
        upstream = m.arange(1, y.numel() + 1, dtype=m.float64).reshape(y.shape)
        y.backward(upstream)
        return [y, type(y.grad_fn).__name__, x.grad, v.grad]

    found = same_bits_as_torch(run)
    assert found[0] == "ok"
    assert found[1][1] == node


def test_a_masked_entry_gets_an_exact_zero_even_when_its_gradient_is_inf():
    def run(m):
        x = m.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = x.masked_fill(m.tensor([True, False, True]), 0.0)
        y.backward(m.tensor([float("inf"), 1.0, float("nan")]))
        return [x.grad]

    assert same_bits_as_torch(run)[1][0] == bits(np.array([0.0, 1.0, 0.0], dtype=np.float32))


def test_gather_adds_the_gradients_of_a_repeated_index():
    x = ng.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    x.gather(1, ng.tensor([[2, 0, 2, 2]])).backward(ng.tensor([[1.0, 10.0, 100.0, 1000.0]]))
    assert x.grad.tolist() == [[10.0, 0.0, 1101.0]]


def _edges(fn):
    return [None if f is None else (type(f).__name__, _edges(f)) for f, _ in fn.next_functions]


@pytest.mark.parametrize(
    "program",
    [
        "x.masked_fill(x > 0, 1.0)",
        "x.masked_fill(x > 0, v)",
        "x.masked_fill(x > 0, k)",
        "k.masked_fill(k > 0, v)",
        "(x * 1).masked_fill_(k > 0, v)",
        "x.tril(1)",
        "(x * 2).triu_()",
        "x.gather(0, i % 3)",
        "(x * 1).gather(1, i)",
    ],
)
def test_next_functions_are_torchs(program):
    def run(m):
        names = {
            **_namespace(m),
            "x": m.tensor(X, requires_grad=True),
            "v": m.tensor(0.5, requires_grad=True),
            "k": m.tensor(X * 2),
        }
        return [str(_edges(eval(program, names).grad_fn))]

    assert outcome(run, ng) == outcome(run, torch)


# errors: ``(program, torch's type, torch's key phrase)``; the phrase is in both messages
ERRORS = [
    ("x.masked_fill(x, 1.0)", RuntimeError, "masked_fill_ only supports boolean masks"),
    ("x.masked_fill(i[:1], 0)", RuntimeError, "but got mask with dtype long int"),
    ("x.masked_fill(m.ones(3, 4, dtype=m.uint8), 0)", RuntimeError, "dtype unsigned char"),
    ("x.masked_fill(x > 0, m.tensor([1.0]))", RuntimeError, "only supports a 0-dimensional"),
    ("x.masked_fill(x > 0, 'a')", TypeError, "masked_fill()"),
    ("x.clone().masked_fill_(m.ones(2, 3, 4, dtype=m.bool), 1.0)", RuntimeError, "broadcast"),
    ("a.masked_fill(a > 0, float('nan'))", RuntimeError, "converted to type int64_t without"),
    ("a.int().masked_fill(a > 0, 3e9)", RuntimeError, "converted to type int without overflow"),
    ("x.masked_fill(x > 0, m.tensor(1 + 2j))", RuntimeError, "converted to type float without"),
    ("x.scatter_add(1, i, d[:2])", RuntimeError, "Expected self.dtype to be equal to src.dtype"),
    ("x.gather(True, i)", TypeError, "argument 'dim' (position 1) must be int, not bool"),
    ("x.scatter_add(1.0, i, d)", TypeError, "argument 'dim' (position 1) must be int, not float"),
    ("x.tril(True)", TypeError, "argument 'diagonal' (position 1) must be int, not bool"),
    ("x[0].tril()", RuntimeError, "tril: input tensor must have at least 2 dimensions"),
    ("m.triu(s)", RuntimeError, "triu: input tensor must have at least 2 dimensions"),
    ("x.tril(1.5)", TypeError, "argument 'diagonal' (position 1) must be int, not float"),
    ("x.gather(1, i.float())", RuntimeError, "gather(): Expected dtype int32/int64 for index"),
    ("x.gather(1, i + 2)", RuntimeError, "index 5 is out of bounds for dimension 1 with size 4"),
    ("x.gather(1, i - 3)", RuntimeError, "index -3 is out of bounds for dimension 1 with size 4"),
    ("x.gather(1, i[0])", RuntimeError, "Index tensor must have the same number of dimensions"),
    ("x.gather(2, i)", IndexError, "Dimension out of range"),
    ("x.gather(0, m.zeros(1, 5, dtype=m.int64))", RuntimeError, "Size does not match at dim"),
    ("x.gather(1, m.zeros(4, 1, dtype=m.int64))", RuntimeError, "Size does not match at dim"),
]


@pytest.mark.parametrize(("program", "kind", "phrase"), ERRORS)
def test_refusals_say_what_torch_says(program, kind, phrase):
    def run(m):
        return [eval(program, _namespace(m))]

    for m in (ng, torch):
        with pytest.raises(kind) as caught:
            run(m)
        assert phrase in str(caught.value), (m.__name__, str(caught.value))


def test_a_non_bool_mask_is_refused_with_what_to_do():
    with pytest.raises(RuntimeError, match=r"compare first.*mask\.bool\(\)"):
        ng.ones(3).masked_fill(ng.tensor([1, 0, 1]), 0.0)


def test_in_place_on_a_leaf_that_requires_grad_is_refused_as_torch_and_changes_nothing():
    for m in (ng, torch):
        for write in (
            lambda x: x.masked_fill_(x > 0, 0.0),
            lambda x: x.tril_(),
            lambda x: x.triu_(1),
        ):
            x = m.tensor(X, requires_grad=True)
            with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
                write(x)
            assert x.detach().numpy().tolist() == X.tolist()


def test_in_place_on_a_non_leaf_rewrites_its_history_and_bumps_its_version():
    def run(m):
        x = m.tensor(X, requires_grad=True)
        y = x * 2
        before = y._version
        z = y.masked_fill_(x < 0, -1.0).tril_(1)
        (z * z).sum().backward()
        return [f"{z is y} {y._version - before}", type(y.grad_fn).__name__, y, x.grad]

    found = same_bits_as_torch(run)
    assert found[1][:2] == ["True 2", "TrilBackward0"]


def test_a_mask_saved_for_backward_then_written_in_place_is_caught():
    def run(m):
        x = m.tensor(X, requires_grad=True)
        mask = x.detach() > 0
        y = x.masked_fill(mask, 0.0)
        mask.zero_()
        y.sum().backward()
        return [x.grad]

    on = outcome(run, ng)
    assert on[0] == "RuntimeError" and "modified by an inplace operation" in on[1]
    assert outcome(run, torch)[0] == "RuntimeError"


def test_gradients_twice_through_gather_and_masked_fill_are_torchs():
    def run(m):
        x = m.tensor(X, dtype=m.float64, requires_grad=True)
        y = (x.gather(1, _namespace(m)["i"]) ** 2).masked_fill(m.tensor([[True], [False]]), 0.0)
        (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
        (g * g).sum().backward()
        return [g, x.grad]

    assert same_bits_as_torch(run)[0] == "ok"


def test_static_mode_gives_dynamic_modes_values_and_gradients():
    index = np.array([[3, 0, 3, 1], [2, 2, 0, 1]])
    mask = np.array([[True, False, True, False]])
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(None, 4), dtype=np.float64)
        y = x.masked_fill(mask, 0.5).tril(-1) + ns.triu(x, 1)
        picked = ns.gather(y * x, 1, index[:, :3])
        loss = (picked * picked).sum()
        (grad,) = ns.gradients(loss, [x])
    got_loss, got_grad = g.compile([x], [loss, grad])(X[:2])

    t = torch.tensor(X[:2], requires_grad=True)
    ty = t.masked_fill(torch.tensor(mask), 0.5).tril(-1) + torch.triu(t, 1)
    tp = torch.gather(ty * t, 1, torch.tensor(index[:, :3]))
    want = (tp * tp).sum()
    want.backward()
    assert bits(got_loss) == bits(want)
    assert bits(got_grad) == bits(t.grad)
