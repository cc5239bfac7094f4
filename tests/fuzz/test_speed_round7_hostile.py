"""Round 7 of the speed work probed where it could part from the readable path and torch:
each operator's own code object (``fastpath.own_code``), the last Python float operand
kept with its float32 value (a loop's constant rounded once), a 0-d float32 result
written into a copied zero instead of ``np.asarray``, and the leaves' ``.grad`` made
inline at the end of the small backward (``fastsmall._write``).

Every program runs with the layer on and off (the same bits, or the same error, either
way) and in torch, exactly: + - * / on float32 are exact in IEEE, so are copies.
"""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from bit_outcomes import bits, outcome, same_bits_as_torch, same_either_way
from fast_switch import fast_layer_on

import naivegraph as ng
from naivegraph.fast import fastpath

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)  # they compare on with off


# -- each operator's own code ----------------------------------------------------------
def test_the_operators_each_have_their_own_code_and_keep_their_names():
    operators = [ng.Tensor.__add__, ng.Tensor.__sub__, ng.Tensor.__mul__]
    operators += [ng.Tensor.__truediv__, ng.Tensor.__radd__, ng.Tensor.__rmul__]
    assert len({id(f.__code__) for f in operators}) == len(operators)
    assert [f.__name__ for f in operators] == [
        *("__add__", "__sub__", "__mul__", "__truediv__", "__radd__", "__rmul__")
    ]
    assert ng.Tensor.sum.__code__ is not ng.Tensor.mean.__code__
    assert ng.Tensor.mean.__name__ == "mean"


def test_own_code_runs_the_same_function_with_its_closure_and_defaults():
    scale = 3

    def times(x, y=2):
        return x * y * scale

    copy = fastpath.own_code(times)
    assert copy.__code__ is not times.__code__
    assert (copy(5), copy(5, 4)) == (30, 60)


def test_mul_and_add_in_turn_build_torchs_nodes_and_gradients():
    def program(m):
        w = m.tensor([0.5, -1.25, 3.0], requires_grad=True)
        y = w
        for _ in range(50):
            y = y * 0.999
            y = y + 0.001
            y = y - 0.0005
            y = y / 1.001
        y.sum().backward()
        return y, w.grad, type(y.grad_fn).__name__

    assert same_bits_as_torch(program)[0] == "ok"


def test_the_reference_chain_of_a_thousand_ops_is_torchs_bits():
    def program(m):
        w = m.tensor(0.5, requires_grad=True)
        y = w
        for _ in range(500):
            y = y * 0.999
            y = y + 0.001
        y.backward()
        return y, w.grad

    assert same_bits_as_torch(program)[0] == "ok"


# -- a loop's float constant, rounded once ---------------------------------------------
EDGES = [0.1, -0.0, 0.0, 1e-45, 1e-46, 3.4028234663852886e38, 3.4028235e38, 3.5e38, 1e39]
EDGES += [math.inf, -math.inf, 2.0**-149, 2.0**-150, 1.0000000596046448, 16777217.0]


@pytest.mark.parametrize("number", EDGES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_the_same_float_twice_in_a_row_gives_torchs_bits(number, op):
    def program(m):
        x = m.tensor(1.5, requires_grad=True)
        apply = getattr(x.__class__, f"__{'truediv' if op == 'div' else op}__")
        first = apply(x, number)
        second = apply(x, number)  # the pair kept from the first call, if any
        (first + second).backward()
        return first, second, x.grad

    assert same_bits_as_torch(program)[0] == "ok"


def test_a_nan_constant_twice_gives_nan_either_way():
    def program(m):
        x = m.tensor(2.0, requires_grad=True)
        values = [x * math.nan, x * math.nan]
        return [bool(np.isnan(v.detach().numpy())) for v in values]

    on = same_either_way(program)
    assert on == ("ok", [True, True])
    assert outcome(program, torch) == on


def test_constants_in_turn_are_each_their_own_float32():
    def program(m):
        x = m.tensor(1.0, requires_grad=True)
        found = []
        for number in [0.1, 0.2, 0.1, 1e39, 0.1, 0.30000000000000004, 0.3]:
            found.append(x * number)
        sum(found[1:], found[0]).backward()
        return (*found, x.grad)

    assert same_bits_as_torch(program)[0] == "ok"


def test_a_float_subclass_constant_goes_the_readable_way_and_gives_torchs_bits():
    class Scaled(float):
        pass

    def program(m):
        x = m.tensor(1.0, requires_grad=True)
        a, b = x * Scaled(0.1), x * 0.1
        return a, b

    assert same_bits_as_torch(program)[0] == "ok"


def test_threads_with_constants_of_their_own_get_their_own_values():
    x = ng.tensor(3.0)
    constants = [0.1 * (k + 1) for k in range(8)]
    wrong = []

    def work(number):
        want = np.float32(3.0) * np.float32(number)
        for _ in range(2000):
            if (x * number).item() != want:
                wrong.append(number)
                return

    threads = [threading.Thread(target=work, args=(c,)) for c in constants]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


# -- a 0-d float32 result written into a copied zero -----------------------------------
PAIRS = [
    (1.0, 2.0**-24),  # a tie: rounds to even
    (1.0, 3 * 2.0**-25),
    (2.0**-126, -(2.0**-127)),  # a subnormal result
    (2.0**-149, 0.5),  # half the smallest subnormal: a tie to zero
    (3.4028234663852886e38, 1.0e31),  # rounds back to the largest float
    (3.4028234663852886e38, 2.0e31),  # rounds up to inf: the readable way
    (-0.0, 0.0),
    (1e-30, 1e-30),
]


@pytest.mark.parametrize(("a", "b"), PAIRS)
@pytest.mark.parametrize("op", ["add", "mul", "sub", "div"])
def test_a_0d_float32_result_is_torchs_bits_and_its_own_array(a, b, op):
    def program(m):
        x = m.tensor(a, requires_grad=True)
        y = m.tensor(b)
        out = getattr(x, op)(y)
        other = getattr(x, op)(y)
        out.detach().numpy()[...] = 7.0  # the next result is not this one's array
        return other, str(out.dtype).removeprefix("torch."), tuple(out.shape)

    assert same_bits_as_torch(program)[0] == "ok"


# -- the leaves' .grad made inline ------------------------------------------------------
def test_two_leaves_sharing_one_gradient_each_get_an_array_of_their_own():
    def program(m):
        a = m.tensor(2.0, requires_grad=True)
        b = m.tensor(5.0, requires_grad=True)
        (a + b).backward()
        a.grad.add_(10.0)  # changes a's gradient only
        return a.grad, b.grad, a.grad.requires_grad, a.grad.grad_fn is None

    assert same_bits_as_torch(program) == (
        "ok",
        [bits(np.float32(11.0)), bits(np.float32(1.0)), False, True],
    )


def test_a_gradient_kept_by_nothing_else_becomes_the_leafs_grad_and_is_writable():
    def program(m):
        w = m.tensor(3.0, requires_grad=True)
        (w * w * 2.0).backward()
        g = w.grad
        g.mul_(2.0)
        return w.grad, g is w.grad

    assert same_bits_as_torch(program) == ("ok", [bits(np.float32(24.0)), True])


def test_a_second_backward_adds_to_the_grad_made_inline():
    def program(m):
        w = m.tensor(0.75, requires_grad=True)
        (w * 4.0).backward()
        first = w.grad.clone()
        (w * 4.0).backward()
        return first, w.grad

    assert same_bits_as_torch(program) == (
        "ok",
        [bits(np.float32(4.0)), bits(np.float32(8.0))],
    )


def test_a_backward_run_in_inference_mode_gives_torchs_outcome():
    def program(m):
        w = m.tensor(0.75, requires_grad=True)
        loss = w * 4.0
        with m.inference_mode():
            loss.backward()
        return w.grad, w.grad.is_inference()

    assert same_bits_as_torch(program)[0] == "ok"


# -- the rules called without a star (one input, two inputs, attributes) -----------------
def test_rules_of_one_and_two_inputs_and_with_attributes_give_the_same_bits_either_way():
    def program(m):
        x = m.tensor([[0.5, -1.25, 2.0], [0.25, 1.5, -0.75]], requires_grad=True)
        w = m.tensor([1.5, -0.5, 2.5], requires_grad=True)
        y = x
        for _ in range(12):  # over fastsmall's LIMIT: the general pass
            y = m.tanh(y * w) + m.sigmoid(y) / 3.0
            y = m.exp(-y) - y.pow(2) * 0.125
        loss = y.sum(dim=0).mean() + y.max(dim=1)[0].sum()
        loss.backward()
        return loss, x.grad, w.grad

    on = same_either_way(program)
    assert on[0] == "ok"
    want = outcome(program, torch)
    for (dtype, shape, raw), (dtype_t, shape_t, raw_t) in zip(on[1], want[1]):
        assert (dtype, shape) == (dtype_t, shape_t)
        found, expected = np.frombuffer(raw, dtype), np.frombuffer(raw_t, dtype_t)
        np.testing.assert_allclose(found, expected, rtol=1e-5)  # tanh, exp: a few ulps
