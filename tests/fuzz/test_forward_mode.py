"""Differential fuzzing of forward mode against ``torch.func.jvp``.

The random programs of ``random_programs`` (the generator of the other fuzzers) run with
every input moving along the program's own random direction; the tangent of every pool
entry and of the loss must agree with torch's (rtol 1e-9) in dynamic forward mode
(``ng.autograd.forward_ad``), through ``ng.func.jvp``, and in a static graph
(``ns.jvp``).  Dynamic forward mode must give the same bits with the fast layer off.
Raise the example count with ``NAIVEGRAPH_FUZZ_EXAMPLES=2000``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

torch = pytest.importorskip("torch")

from random_programs import (  # noqa: E402
    FUZZ,
    DynamicBackend,
    StaticBackend,
    TorchBackend,
    _torch_array,
    assert_close,
    build,
    float64_default,
    programs,
)

import naivegraph as ng  # noqa: E402
import naivegraph.autograd.forward_ad as fwAD  # noqa: E402
import naivegraph.static as ns  # noqa: E402
from naivegraph import fast  # noqa: E402

pytestmark = pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning"
)


class _Fed:
    """A backend whose leaves are the tensors given (duals, or torch.func's inputs)."""

    def __init__(self, leaves):
        self._leaves = iter(leaves)

    def leaf(self, array, spec=None, name=None):
        return next(self._leaves)


class _FedTorch(_Fed, TorchBackend):
    def __init__(self, leaves):
        TorchBackend.__init__(self)
        _Fed.__init__(self, leaves)


class _FedDynamic(_Fed, DynamicBackend):
    def __init__(self, leaves):
        DynamicBackend.__init__(self)
        _Fed.__init__(self, leaves)


def torch_tangents(program) -> list[np.ndarray]:
    """torch.func.jvp's tangent of every pool entry, then of the loss."""

    def f(*xs):
        _, pool, loss = build(_FedTorch(xs), program)
        return (*pool, loss)

    primals = tuple(torch.tensor(a) for a in program.input_arrays())
    tangents = tuple(torch.tensor(v) for v in program.directions())
    _, found = torch.func.jvp(f, primals, tangents)
    return [_torch_array(t) for t in found]


def dynamic_tangents(program) -> list[np.ndarray]:
    """The same by ng.autograd.forward_ad (zeros where an entry carries no tangent)."""
    with fwAD.dual_level():
        duals = [
            fwAD.make_dual(ng.tensor(a), ng.tensor(v))
            for a, v in zip(program.input_arrays(), program.directions())
        ]
        _, pool, loss = build(_FedDynamic(duals), program)
        found = []
        for entry in (*pool, loss):
            tangent = fwAD.unpack_dual(entry).tangent
            found.append(np.zeros(tuple(entry.shape)) if tangent is None else tangent.numpy())
    return found


@float64_default()  # compared at float64 precision: placeholders in float64 too
def static_tangents(program) -> list[np.ndarray]:
    """The same by ns.jvp on the program's static graph."""
    B = StaticBackend()
    with ns.Graph() as g:
        leaves, pool, loss = build(B, program)
        found = ns.jvp([*pool, loss], leaves, program.directions())
    run = g.compile([p for p, _ in B.placeholders], found)
    return [np.asarray(v) for v in run(*[a for _, a in B.placeholders])]


def assert_same_tangents(got, want, label: str) -> None:
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        what = "the loss" if k == len(want) - 1 else f"pool entry {k}"
        assert_close(a, b, f"{label}: tangent of {what}")


@FUZZ
@given(program=programs())
def test_fuzz_dynamic_forward_mode_matches_torch_func_jvp(program):
    assert_same_tangents(dynamic_tangents(program), torch_tangents(program), "forward_ad")


@FUZZ
@given(program=programs())
def test_fuzz_ng_func_jvp_matches_torch_func_jvp(program):
    def f(*xs):
        return build(_FedDynamic(xs), program)[2]

    primals = tuple(ng.tensor(a) for a in program.input_arrays())
    tangents = tuple(ng.tensor(v) for v in program.directions())
    _, got = ng.func.jvp(f, primals, tangents)
    assert_close(got.numpy(), torch_tangents(program)[-1], "ng.func.jvp: tangent of the loss")


@FUZZ
@given(program=programs())
def test_fuzz_static_jvp_matches_torch_func_jvp(program):
    assert_same_tangents(static_tangents(program), torch_tangents(program), "ns.jvp")


@FUZZ
@given(program=programs())
def test_fuzz_forward_mode_gives_the_same_bits_with_the_fast_layer_off(program):
    with_fast = dynamic_tangents(program)
    with fast.disabled():
        without = dynamic_tangents(program)
    for a, b in zip(with_fast, without):
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
