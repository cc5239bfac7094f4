"""``&``, ``|``, ``^`` and ``~`` are torch's bitwise operators: bitwise on integer tensors,
logical on bool masks, refused on floating tensors with torch's words.  They were the
logical ops, so ``tensor([5, 6, 7]) & 3`` gave ``[True, True, True]`` and ``^`` did not
exist."""

from __future__ import annotations

import numpy as np
import pytest
from bit_outcomes import outcome

import naivegraph as ng
import naivegraph.static as ns

torch = pytest.importorskip("torch")

PROGRAMS = [
    "a & 3",
    "a | 8",
    "a ^ 1",
    "~a",
    "3 & a",
    "3 | a",
    "3 ^ a",
    "a & b",
    "b & a",
    "b ^ b",
    "~b",
    "b & True",
    "True ^ b",
    "b | 0",
    "a.int() & a",
    "a & m.tensor(3)",
    "a.bitwise_and(3)",
    "a.bitwise_or(b)",
    "a.bitwise_xor(6)",
    "a.bitwise_not()",
    "m.bitwise_xor(a, 2)",
    "m.bitwise_and(b, b)",
    "m.bitwise_not(a)",
    "m.tensor([-8, 3], dtype=m.int8) | m.tensor([1, 1], dtype=m.int8)",
    "(a > 5) & (a < 7)",
    "~(a > 5)",
]


@pytest.mark.parametrize("program", PROGRAMS)
def test_bitwise_operators_give_torchs_values_and_dtypes(program):
    def run(m):
        a = m.tensor([5, 6, 7])
        b = m.tensor([True, False, True])
        result = eval(program, {"m": m, "a": a, "b": b})
        return result, str(result.dtype).removeprefix("torch.")

    assert outcome(run, ng) == outcome(run, torch)


@pytest.mark.parametrize(
    ("program", "kernel"),
    [
        ("f & 1", "bitwise_and_cpu"),
        ("a & 2.5", "bitwise_and_cpu"),
        ("f | f", "bitwise_or_cpu"),
        ("f ^ f", "bitwise_xor_cpu"),
        ("f.bitwise_not()", "bitwise_not_cpu"),
    ],
)
def test_a_bitwise_operator_on_floats_is_refused_with_torchs_words(program, kernel):
    def run(m):
        f = m.tensor([1.5, 2.0])
        a = m.tensor([5, 6])
        return (eval(program, {"f": f, "a": a}),)

    kind, message = outcome(run, ng)
    assert (kind, message.split(":")[0]) == outcome(run, torch)
    assert f"\"{kernel}\" not implemented for 'Float'" in message
    assert "integer or bool tensors" in message


def test_inverting_a_float_tensor_is_torchs_type_error():
    def run(m):
        return (~m.tensor([1.5]),)

    kind, message = outcome(run, ng)
    assert kind == "TypeError" == outcome(run, torch)[0]
    assert message.startswith(outcome(run, torch)[1])
    assert "logical_not()" in message


def test_in_place_bitwise_operators_write_the_tensor_and_its_views():
    def run(m):
        a = m.tensor([5, 6, 7])
        view = a[1:]
        a &= 3
        c = m.tensor([1, 2])
        c ^= m.tensor([3, 3])
        d = m.tensor([1, 2])
        d |= 4
        return a, view, c, d

    assert outcome(run, ng) == outcome(run, torch)
    assert outcome(run, ng)[1][1][2] == np.array([2, 3]).tobytes()


def test_an_in_place_bitwise_operator_that_would_widen_a_mask_is_refused():
    def run(m):
        b = m.tensor([True, False])
        b &= 2
        return (b,)

    kind, message = outcome(run, ng)
    assert (kind, message.split(":")[0]) == outcome(run, torch)


def test_static_graphs_have_the_bitwise_operators_too():
    g = ns.Graph()
    with g:
        a = ns.placeholder("a", shape=(3,), dtype=np.int64)
        y = (a & 3) ^ (~a | 1)
    (found,) = g.run([y], {a: np.array([5, 6, 7])})
    x = np.array([5, 6, 7])
    np.testing.assert_array_equal(found, (x & 3) ^ (~x | 1))
