"""A program's outcome as bits, run with the fast layer on and off and in torch: the
differential checks of the hostile tests (``tests/fuzz/test_*_hostile.py``).

A program takes the module (``ng`` or ``torch``) and returns a sequence of values;
tensors and arrays are compared by dtype, shape and bytes, flags, strings and tuples
as they are, and an error by its type and message."""

from __future__ import annotations

import numpy as np
import pytest
from fast_switch import both_ways

import naivegraph as ng

torch = pytest.importorskip("torch")

SECOND_TIME = "Trying to backward through the graph a second time"
IN_PLACE = "one of the variables needed for gradient computation has been modified by an inplace"


def bits(value):
    """dtype, shape and bytes of a tensor, array or number (None stays None)."""
    if value is None:
        return None
    if isinstance(value, (torch.Tensor, ng.Tensor)):
        value = value.detach().numpy()
    array = np.asarray(value)
    return str(array.dtype), array.shape, array.tobytes()


def outcome(program, module):
    """``program(module)`` as bits, or the error's type and message."""
    try:
        found = program(module)
    except Exception as error:  # the error is part of the comparison
        return type(error).__name__, str(error)
    return "ok", [v if isinstance(v, (bool, str, tuple)) else bits(v) for v in found]


def three_ways(program):
    """The program's outcome with the layer on, off, and in torch."""
    on, off = both_ways(outcome, program, ng)
    return on, off, outcome(program, torch)


def same_either_way(program):
    """The outcome with the layer on, asserted the same with it off."""
    on, off = both_ways(outcome, program, ng)
    assert on == off
    return on


def same_bits_as_torch(program):
    """The outcome with the layer on, asserted the same off and in torch."""
    on, off, want = three_ways(program)
    assert on == off
    assert on == want
    return on
