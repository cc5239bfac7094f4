"""Every op declares in its table entry which values its gradient rules read (``saves``);
nothing reads a rule's code to find out.  The declarations keep exactly what the former
reading of each partial's bytecode kept, and a rule that reads a value its op does not
declare fails with an error that says what to write."""

from __future__ import annotations

import dis
import inspect
import itertools

import numpy as np
import pytest

import naivegraph as ng
import naivegraph.static as ns
from naivegraph import fast
from naivegraph.ops import OPS, F, Meta, defop, op_function
from naivegraph.ops.core import BUILT_IN, UnsavedValueError

F64 = np.float64


# ----------------------------------------------------------------------------------
# The declarations are what the bytecode analysis found
# ----------------------------------------------------------------------------------
#: the partials that were marked by hand, as the code named an input it read the
#: shape of only: (op, input) -> the positions whose values the partial reads
_MARKED_BY_HAND = {
    ("matmul", 0): {1},
    ("matmul", 1): {0},
    ("bmm", 0): {1},  # matmul's partials
    ("bmm", 1): {0},
    ("conv2d", 0): {1},
    ("conv2d", 1): {0},
    ("conv2d", 2): set(),
    ("conv2d_input_grad", 0): {1},
    ("conv2d_input_grad", 1): {0},
    ("conv2d_weight_grad", 0): {1},
    ("conv2d_weight_grad", 1): {0},
}


def _bytecode_reads(partial, n_inputs: int) -> frozenset | None:
    """The former ``inputs_read``: the input positions a partial's code loads."""
    if partial is None:
        return frozenset()
    code = getattr(partial, "__code__", None)
    if code is None or code.co_cellvars or code.co_flags & inspect.CO_VARARGS:
        return None  # not plain Python, or a parameter captured by an inner function
    loaded: set[str] = set()
    for instruction in dis.get_instructions(code):
        if instruction.opname.startswith("LOAD_FAST"):
            value = instruction.argval
            loaded.update(value if isinstance(value, tuple) else (value,))
    names = code.co_varnames[1 : 1 + n_inputs]  # (g, *inputs, out, **attrs)
    return frozenset(i for i, name in enumerate(names) if name in loaded)


def _kept_by_bytecode(op, needs: tuple) -> frozenset:
    """The former ``OpDef.saves_for``: the flat ``saves`` narrowed to what the needed
    partials' code reads (the output always, all of ``saves`` when a read is unknown)."""
    reads = [
        frozenset(_MARKED_BY_HAND[op.name, i])
        if (op.name, i) in _MARKED_BY_HAND
        else _bytecode_reads(p, len(op.partials))
        for i, p in enumerate(op.partials)
    ]
    if any(r is None for r in reads):
        return op.saves
    read = set().union(*(r for r, need in zip(reads, needs) if need))
    return frozenset(k for k in op.saves if k == "out" or k in read)


def _gradient_cases():
    for name in sorted(BUILT_IN):
        op = OPS[name]
        if op.partials is None:
            continue
        for needs in itertools.product((False, True), repeat=len(op.partials)):
            if any(need and p is not None for need, p in zip(needs, op.partials)):
                yield pytest.param(name, needs, id=f"{name}-{''.join(map(str, map(int, needs)))}")


@pytest.mark.parametrize("name, needs", list(_gradient_cases()))
def test_an_op_keeps_what_its_partials_bytecode_read(name, needs):
    op = OPS[name]
    assert op.saves_for(needs) == _kept_by_bytecode(op, needs)


def test_every_built_in_op_with_a_gradient_declares_per_input_what_it_reads():
    for name in BUILT_IN:
        op = OPS[name]
        if op.partials is not None:
            assert len(op.saves_by_input) == len(op.partials), name
            for reads, partial in zip(op.saves_by_input, op.partials):
                assert (reads is None) == (partial is None), name
                assert reads <= op.saves if reads is not None else True, name


def test_a_product_declares_that_each_gradient_reads_the_other_factor():
    assert OPS["mul"].saves_by_input == (frozenset({1}), frozenset({0}))
    assert OPS["mul"].saves_for((False, True)) == {0}
    assert OPS["matmul"].saves_for((True, False)) == {1}
    assert OPS["exp"].saves_for((True,)) == {"out"}


def test_the_table_is_read_without_disassembling_code():
    import naivegraph.ops.core as core

    source = inspect.getsource(core)
    assert "import dis" not in source and "get_instructions" not in source


# ----------------------------------------------------------------------------------
# A rule that reads what its op does not declare
# ----------------------------------------------------------------------------------
@pytest.fixture(params=["fast", "readable"])
def fast_setting(request):
    previous = fast.enabled
    fast.set_enabled(request.param == "fast")
    yield request.param
    fast.set_enabled(previous)


@pytest.fixture
def undeclared_cube():
    """x ** 3 whose partial reads x while the entry declares only the output."""
    defop(
        "cube_t",
        lambda x: x * x * x,
        [lambda g, x, out: g * 3.0 * x * x],
        saves=("out",),
        elementwise=True,
    )
    yield op_function("cube_t")
    OPS.pop("cube_t", None)


def test_a_partial_reading_an_undeclared_input_fails_in_dynamic_backward(
    undeclared_cube, fast_setting
):
    x = ng.tensor([1.0, 2.0], dtype=ng.float64, requires_grad=True)
    y = undeclared_cube(x)
    with pytest.raises(UnsavedValueError) as caught:
        y.sum().backward()
    message = str(caught.value)
    assert "op 'cube_t': the partial for input 0 reads the value of input 0" in message
    assert "defop('cube_t', ..., saves=(0, \"out\"))" in message
    assert x.grad is None


def test_a_partial_reading_an_undeclared_input_fails_in_static_gradients(
    undeclared_cube, fast_setting
):
    with ns.Graph("undeclared"):
        a = ns.placeholder("a", shape=(2,), dtype=F64)
        with pytest.raises(UnsavedValueError, match=r"saves=\(0, \"out\"\)"):
            ns.gradients(undeclared_cube(a).sum(), [a])


def test_a_per_input_declaration_missing_a_value_names_the_dict_to_write(fast_setting):
    defop(
        "scaled_t",
        np.multiply,
        [lambda g, x, y, out: g * y, lambda g, x, y, out: g * x],
        saves={0: (), 1: (0,)},
        elementwise=True,
    )
    try:
        x = ng.tensor([2.0], dtype=ng.float64, requires_grad=True)
        w = ng.tensor([5.0], dtype=ng.float64)
        with pytest.raises(UnsavedValueError) as caught:
            op_function("scaled_t")(x, w).sum().backward()
    finally:
        OPS.pop("scaled_t", None)
    message = str(caught.value)
    assert "the partial for input 0 reads the value of input 1" in message
    assert "saves={0: (1,), 1: (0,)}" in message


def test_an_op_with_a_gradient_must_say_what_it_saves():
    with pytest.raises(TypeError) as caught:
        defop("softplus_u", np.exp, [lambda g, x, out: g * out])
    assert "defop('softplus_u', ...) needs saves=" in str(caught.value)
    assert 'saves=("out",) if it reads the result' in str(caught.value)
    assert "softplus_u" not in OPS


def test_an_op_without_a_gradient_needs_no_saves():
    defop("exp_u", np.exp)
    try:
        assert OPS["exp_u"].saves == frozenset() and not OPS["exp_u"].differentiable
    finally:
        OPS.pop("exp_u")


def test_a_per_input_declaration_covers_every_input_with_a_partial():
    with pytest.raises(ValueError, match=r"one entry per input with a partial, \[0\]"):
        defop("mul_u", np.multiply, [lambda g, x, y, out: g * y, None], saves={0: (1,), 1: ()})
    with pytest.raises(ValueError, match=r"one entry per input with a partial, \[0, 1\]"):
        defop(
            "mul_u",
            np.multiply,
            [lambda g, x, y, out: g * y, lambda g, x, y, out: g * x],
            saves={0: (1,)},
        )
    assert "mul_u" not in OPS


def test_a_declared_value_is_an_input_position_or_out():
    with pytest.raises(ValueError, match=r"saves lists 1, which is neither an input position 0..0"):
        defop("exp_u", np.exp, [lambda g, x, out: g * out], saves=(1,))
    with pytest.raises(ValueError, match="saves lists 'output'"):
        defop("exp_u", np.exp, [lambda g, x, out: g * out], saves=("output",))
    assert "exp_u" not in OPS


def test_a_meta_refuses_every_read_of_its_value():
    meta = Meta((2,), F64)
    reads = [
        lambda: meta + 1.0,
        lambda: 2.0 * meta,
        lambda: np.ones(2) * meta,
        lambda: -meta,
        lambda: meta > 0,
        lambda: np.asarray(meta),
        lambda: F.exp(meta),
        lambda: meta[0],
    ]
    for read in reads:
        with pytest.raises(UnsavedValueError, match="backward kept only its shape and dtype"):
            read()
    assert meta.shape == (2,) and meta.ndim == 1 and meta.dtype == F64
