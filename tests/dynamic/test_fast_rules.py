"""The backward rules written out for a dense layer (``naivegraph.fast.fastrules``)
give the op table's rules' bits, dtypes and shapes, and a plain ``backward()`` through
them gives the same gradients with the layer on, with only these rules off, and with
the whole layer off.  Where a rule's shortcut does not apply it must return the table
rule's answer, so the cases include what it steps aside for: vectors, batches, Metas,
mixed dtypes, 0-d values.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from fast_switch import fast_layer_on

import naivegraph as ng
from naivegraph import fast
from naivegraph.fast import fastback, fastrules
from naivegraph.ops import OPS
from naivegraph.ops.core import Meta

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)

SPECIAL = [1.5, -2.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 3.0, -7.25, 1e38, -1e38]


def special(shape: tuple, dtype, shift: int = 0) -> np.ndarray:
    """An array of ``shape`` cycling through every sign, zero, inf and NaN."""
    size = int(np.prod(shape))
    values = np.roll(np.resize(np.array(SPECIAL), size), shift)
    with np.errstate(all="ignore"):
        return values.reshape(shape).astype(dtype)


def same_bits(a, b) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple):  # errors: type and message
        return a == b
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _outcome(rule, args, attrs):
    with np.errstate(all="ignore"):
        try:
            return rule(*args, **attrs)
        except Exception as error:  # noqa: BLE001 - the error is what is compared
            return (type(error).__name__, str(error))


def both_rules(written, table, *args, **attrs):
    """The written-out rule's and the table's rule's answers (or errors), as the
    backward pass calls them (numpy's error state ignoring everything)."""
    return _outcome(written, args, attrs), _outcome(table, args, attrs)


# -- each rule against the table's -----------------------------------------------------------
MATMUL_SHAPES = [((4, 3), (3, 5)), ((1, 1), (1, 1)), ((0, 3), (3, 2)), ((2, 0), (0, 3))]
MATMUL_SHAPES += [((3,), (3, 2)), ((2, 3), (3,)), ((2, 2, 3), (3, 2)), ((2, 3), (2, 3, 2))]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize(("sx", "sy"), MATMUL_SHAPES)
def test_matmuls_rules_give_the_tables_bits(dtype, sx, sy):
    x, y = special(sx, dtype), special(sy, dtype, 5)
    with np.errstate(all="ignore"):
        g = np.matmul(x, y) * dtype(0.5) + dtype(1)
    for i, rule in enumerate((fastrules.mm_grad_self, fastrules.mm_grad_other)):
        for saved_x, saved_y in ((x, y), (Meta(x.shape, x.dtype), y), (x, Meta(y.shape, y.dtype))):
            if (i == 0 and isinstance(saved_y, Meta)) or (i == 1 and isinstance(saved_x, Meta)):
                continue  # the rule reads the other operand: it is saved
            got, want = both_rules(rule, OPS["matmul"].partials[i], g, saved_x, saved_y, None)
            assert same_bits(got, want)


def test_matmuls_rules_on_transposed_views_give_the_tables_bits():
    x = special((5, 4), np.float32).T  # (4, 5), not contiguous
    y = special((3, 5), np.float32, 2).T  # (5, 3)
    g = special((3, 4), np.float32, 7).T  # (4, 3)
    for i, rule in enumerate((fastrules.mm_grad_self, fastrules.mm_grad_other)):
        got, want = both_rules(rule, OPS["matmul"].partials[i], g, x, y, None)
        assert same_bits(got, want)


def test_matmuls_rules_with_a_gradient_of_another_dtype_give_the_tables_answer():
    x, y = special((2, 3), np.float32), special((3, 4), np.float32)
    g = np.ones((2, 4), np.float64)  # the table's matmul refuses mixed dtypes
    for i, rule in enumerate((fastrules.mm_grad_self, fastrules.mm_grad_other)):
        errors = []
        for fn in (rule, OPS["matmul"].partials[i]):
            with pytest.raises(RuntimeError) as caught:
                fn(g, x, y, None)
            errors.append(str(caught.value))
        assert errors[0] == errors[1]
        assert "expected m1 and m2 to have the same dtype" in errors[0]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (7,), (3, 4), (70, 70), (0, 3)])
def test_relus_rule_gives_the_tables_bits(dtype, shape):
    # (70, 70): large enough for fast.where's masked zero; NaN and -0.0 outputs pass g
    out = special(shape, dtype)
    g = special(shape, dtype, 3)
    got, want = both_rules(fastrules.relu_grad, OPS["relu"].partials[0], g, Meta(shape), out)
    assert same_bits(got, want)


def test_relus_rule_with_a_gradient_of_another_dtype_gives_the_tables_answer():
    out = special((3, 4), np.float32)
    g = special((3, 4), np.float64, 1)
    got, want = both_rules(fastrules.relu_grad, OPS["relu"].partials[0], g, Meta((3, 4)), out)
    assert same_bits(got, want) and got.dtype == np.float64


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_the_loss_rules_give_the_tables_bits(dtype, reduction):
    logits = special((6, 5), dtype)
    with np.errstate(all="ignore"):
        logp = OPS["log_softmax"].forward(logits, dim=1)
    target = np.array([0, 4, 2, 1, 3, 4])
    g = np.asarray(dtype(0.75)) if reduction != "none" else special((6,), dtype)
    got, want = both_rules(
        fastrules.nll_loss_grad,
        OPS["nll_loss"].partials[0],
        g,
        Meta(logp.shape, logp.dtype),
        target,
        None,
        reduction=reduction,
    )
    assert same_bits(got, want)
    g = special((6, 5), dtype, 4)
    for dim in (1, -1, 0):
        got, want = both_rules(
            fastrules.log_softmax_grad,
            OPS["log_softmax"].partials[0],
            g,
            Meta(logits.shape, logits.dtype),
            logp,
            dim=dim,
        )
        assert same_bits(got, want)


# -- whole passes: on, these rules off, the layer off ---------------------------------------
def mlp_program(dtype, batch: int = 8, reduction: str = "mean", x_grad: bool = False):
    def program():
        rng = np.random.default_rng(11)
        x = rng.standard_normal((batch, 6)).astype(dtype)
        x[0, :3] = [np.inf, -0.0, np.nan]  # specials through every rule
        xs = ng.tensor(x, requires_grad=x_grad)
        ys = ng.from_numpy(rng.integers(0, 4, batch))
        w1 = ng.tensor(rng.standard_normal((6, 5)).astype(dtype), requires_grad=True)
        b1 = ng.zeros(5, dtype=w1.dtype, requires_grad=True)
        w2 = ng.tensor(rng.standard_normal((5, 4)).astype(dtype), requires_grad=True)
        b2 = ng.zeros(4, dtype=w1.dtype, requires_grad=True)
        logits = (xs @ w1 + b1).relu() @ w2 + b2
        loss = ng.nn.functional.cross_entropy(logits, ys, reduction=reduction)
        loss.backward(ng.ones_like(loss) if reduction == "none" else None)
        grads = [w1.grad, b1.grad, w2.grad, b2.grad] + ([xs.grad] if x_grad else [])
        return [loss] + grads

    return program


def three_ways(program) -> list[list[np.ndarray]]:
    runs = []
    for rules_on, layer_on in ((True, True), (False, True), (True, False)):
        previous = fastrules.on
        fastrules.on = rules_on
        try:
            if layer_on:
                runs.append([t.detach().numpy().copy() for t in program()])
            else:
                with fast.disabled():
                    runs.append([t.detach().numpy().copy() for t in program()])
        finally:
            fastrules.on = previous
    return runs


PROGRAMS = [
    mlp_program(dtype, batch, reduction, x_grad)
    for dtype, batch, reduction, x_grad in itertools.product(
        (np.float16, np.float32, np.float64), (1, 8), ("mean", "sum", "none"), (False, True)
    )
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_an_mlp_gives_the_same_gradients_with_these_rules_on_and_off(program):
    first, *others = three_ways(program)
    for other in others:
        assert all(same_bits(a, b) for a, b in zip(first, other))


def test_a_shared_weight_a_view_and_a_batch_give_the_same_gradients_both_ways():
    def program():
        w = ng.tensor(special((4, 4), np.float32), requires_grad=True)
        x = ng.tensor(special((3, 4), np.float32, 1))
        h = (x @ w).relu() @ w.t()  # w twice, once through a transposed view
        batched = ng.tensor(special((2, 3, 4), np.float32, 2)) @ w  # not a matrix: the table
        v = ng.tensor(special((4,), np.float32, 3)) @ w  # a vector: the table
        (h.sum() + batched.relu().sum() + v.relu().sum()).backward()
        return [h, w.grad]

    first, *others = three_ways(program)
    for other in others:
        assert all(same_bits(a, b) for a, b in zip(first, other))


def test_the_written_rules_run_in_a_plain_backward(monkeypatch):
    def refuse(*args, **attrs):
        raise AssertionError("the table's rule ran")

    for name in ("_readable_mm", "_readable_relu", "_readable_nll", "_readable_log_softmax"):
        monkeypatch.setattr(fastrules, name, (refuse, refuse) if name == "_readable_mm" else refuse)
    for _ in range(2):  # the first pass meets each node class for the first time
        mlp_program(np.float32)()
    assert fastback._direct_rules[("relu", 0)] is fastrules.relu_grad


def test_torch_agrees_on_the_mlps_gradients():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    values = [rng.standard_normal(s) for s in ((8, 6), (6, 5), (5,), (5, 3), (3,))]
    target = rng.integers(0, 3, 8)
    grads = []
    for lib in (ng, torch):
        x, w1, b1, w2, b2 = [lib.tensor(v, requires_grad=i > 0) for i, v in enumerate(values)]
        loss = lib.nn.functional.cross_entropy((x @ w1 + b1).relu() @ w2 + b2, lib.tensor(target))
        loss.backward()
        grads.append([t.grad.numpy().copy() for t in (w1, b1, w2, b2)])
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)
