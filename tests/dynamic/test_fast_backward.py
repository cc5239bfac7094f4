"""The fast backward loop (``naivegraph.fast.fastback``) changes speed, never results.

Each program below runs with the fast layer on, with only the small-graph pass
(``naivegraph.fast.fastsmall``) off, so that a small program runs this loop, with the
fast backward loop off (both passes), and with the whole layer off; every gradient
must be the same bits, dtypes included,
and every error the same type and message.  The programs go where the loop hands a node
back to the readable visitor (hooks, leaves with hooks, custom Functions, views written
in place, saved-tensor hooks, anomaly mode) or steps aside for the whole pass
(``create_graph``, ``inputs=``, ``autograd.grad``), and where it does the work itself
(broadcast gradients summed back to shape, a float32 leaf against float64, integer and
boolean operands, shared subexpressions whose gradients are summed in order).  Where
PyTorch defines the answer, torch 2.13 is the oracle.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

import numpy as np
import pytest
from fast_switch import fast_layer_on

import naivegraph as ng
from naivegraph import fast
from naivegraph.dynamic import engine, tensor_autograd
from naivegraph.fast import fastback, fastsmall

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)  # they compare on with off


@contextmanager
def fast_backward_off() -> Iterator[None]:
    """Only this loop off; the rest of the fast layer stays on."""
    previous = fastback.on
    fastback.on = False
    try:
        yield
    finally:
        fastback.on = previous


@contextmanager
def small_pass_off() -> Iterator[None]:
    """Only the small-graph pass off: a small graph goes to this loop."""
    previous = fastsmall.on
    fastsmall.on = False
    try:
        yield
    finally:
        fastsmall.on = previous


def _every_way(program: Callable[[], list]) -> list[list]:
    """``program``'s results with the layer on, with the small-graph pass off, with the
    loop off, with the layer off."""
    runs = [program()]
    with small_pass_off():
        runs.append(program())
    with fast_backward_off():
        runs.append(program())
    with fast.disabled():
        runs.append(program())
    return runs


def _as_array(value) -> np.ndarray:
    if isinstance(value, ng.Tensor):
        return np.array(value._data)
    return np.array(value)


def _assert_same_bits(runs: list[list]) -> None:
    first = [_as_array(v) for v in runs[0]]
    for other in runs[1:]:
        assert len(other) == len(first)
        for got, want in zip((_as_array(v) for v in other), first):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert got.tobytes() == want.tobytes()


# -- programs ------------------------------------------------------------------------------
def _chain(dtype):
    def program():
        w = ng.tensor(0.5, dtype=dtype, requires_grad=True)
        y = w
        for _ in range(300):
            y = y * 0.999
            y = y + 0.001
        y.backward()
        return [y, w.grad]

    return program


def _scalar_program(dtype):
    def program():  # micrograd's style: 0-d tensors, numbers on both sides, every operator
        w1, w2, b = (ng.tensor(v, dtype=dtype, requires_grad=True) for v in (0.3, -1.7, 0.1))
        x1, x2 = ng.tensor(2.0, dtype=dtype), ng.tensor(-0.7, dtype=dtype)
        a = w1 * x1 + w2 * x2 + b
        c = (a * a - 1.0 / (a + 3)) / 0.7 - (-a) * 0.001
        loss = 2 * c + c * c + 1.5
        loss.backward()
        return [loss, c, w1.grad, w2.grad, b.grad]

    return program


def _reference_example():
    x = ng.ones(2, 2)
    w1 = ng.tensor(1.5, requires_grad=True)
    w2 = ng.tensor(0.5, requires_grad=True)
    w3 = ng.tensor(2.0, requires_grad=True)
    l1 = x * w1
    loss = ((l1 + w2) * (l1 * w3)).mean()
    loss.backward()
    return [loss, w1.grad, w2.grad, w3.grad]


def _shared_subexpressions():
    # x reaches the loss along five paths: its gradient is a sum of five terms whose
    # float32 rounding depends on the order they are added in
    x = ng.tensor([0.1, 1e7, -3.3], dtype=ng.float32, requires_grad=True)
    a = x * 1.1
    parts = [a * 3.7, a * a, (a + 1e-3) * 2.9, x * 1e-7, a.exp().log()]
    loss = parts[0].sum()
    for p in parts[1:]:
        loss = loss + p.sum()
    loss.backward()
    return [loss, x.grad]


def _broadcasting():
    a = ng.tensor([[1.0], [2.0], [3.0]], requires_grad=True)  # (3, 1)
    b = ng.tensor([0.5, -1.0, 2.0, 4.0], requires_grad=True)  # (4,)
    c = ng.tensor(3.0, requires_grad=True)  # ()
    loss = ((a * b + c) / (b * b + 1.0)).sum()
    loss.backward()
    return [loss, a.grad, b.grad, c.grad]


def _broadcasting_over_leading_and_inner_axes():
    a = ng.tensor(np.arange(8.0).reshape(2, 1, 4) / 7, requires_grad=True)
    b = ng.tensor([[0.5], [-1.5], [2.5]], dtype=ng.float32, requires_grad=True)  # (3, 1)
    c = ng.tensor([0.25], requires_grad=True)  # (1,)
    y = a * b - c * a + b / (c + 1.0)  # (2, 3, 4)
    (y * y).sum().backward()
    return [y, a.grad, b.grad, c.grad]


def _float32_leaf_meets_float64():
    # a's gradient is cast to float32 as each product hands it back, then summed in
    # float32: summed in float64 and cast once, it would differ in the last bits
    w = ng.tensor([1.5, -2.0], dtype=ng.float32, requires_grad=True)
    d = ng.tensor([0.1, 0.3], dtype=ng.float64, requires_grad=True)
    a = w * 3.0
    seen = []
    a.register_hook(lambda g: seen.append(g.clone()))
    loss = (a * d + a * ng.tensor([0.2, 0.7], dtype=ng.float64)).sum()
    loss.backward()
    return [loss, w.grad, d.grad] + seen


def _integer_and_boolean_operands():
    w = ng.tensor([1.5, -2.0, 0.25], requires_grad=True)
    n = ng.tensor([2, 3, 4])
    mask = ng.tensor([True, False, True])
    loss = (w * n + w * mask + n * w * w - mask * 1.5 * w).sum()
    loss.backward()
    return [loss, w.grad]


def _rows_and_stacks():
    x = ng.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    rows = [x[0], x[1]]
    y = ng.stack([rows[0] * rows[1], rows[1].exp()]) + ng.cat([rows[0], rows[1]]).sum()
    y.sum().backward()
    return [y, x.grad]


def _hooks_everywhere():
    x = ng.tensor([1.0, -2.0, 3.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: g * 2)
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
    a = x.exp()
    a.retain_grad()
    a.register_hook(lambda g: seen.append(g.clone()))
    b = a * x
    b.grad_fn.register_prehook(lambda gs: (gs[0] * 3,))
    b.grad_fn.register_hook(lambda gi, go: (gi[0] + 1.0, gi[1]))
    (b * b).sum().backward()
    return [x.grad, a.grad] + seen


def _hook_registered_then_removed():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.register_hook(lambda g: g * 10).remove()  # the node keeps an empty hook table
    y.grad_fn.register_prehook(lambda gs: None).remove()
    (y * 3.0).sum().backward()
    return [x.grad]


def _data_replaced_after_the_op():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    w = ng.tensor([3.0, 4.0])
    y = (x * w).sum()
    w.data = ng.tensor([5.0, 7.0])  # backward reads the new values, as torch's does
    y.backward()
    return [x.grad]


def _retain_graph_twice():
    x = ng.tensor([0.5, 1.5], requires_grad=True)
    y = (x * x.sin()).sum()
    y.backward(retain_graph=True)
    first = x.grad.clone()
    y.backward()
    return [first, x.grad]


def _double_backward():
    x = ng.tensor([0.5, 1.5], requires_grad=True)
    y = (x**3).sum()
    (gx,) = ng.autograd.grad(y, x, create_graph=True)
    gx.sum().backward()
    return [gx, x.grad]


def _grad_with_unused_and_inputs():
    x = ng.tensor(2.0, requires_grad=True)
    z = ng.tensor(5.0, requires_grad=True)
    u = ng.tensor(1.0, requires_grad=True)
    y = x * x * z
    gx, gu = ng.autograd.grad(y, [x, u], retain_graph=True, allow_unused=True)
    y.backward(inputs=[z])
    return [gx, z.grad, gu is None, x.grad is None]


class _Cube(ng.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3, x * 2

    @staticmethod
    def backward(ctx, g_cube, g_double):
        (x,) = ctx.saved_tensors
        return g_cube * 3 * x * x + g_double * 2


def _custom_function_with_two_outputs():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    cube, double = _Cube.apply(x * 1.5)
    (cube.sum() + (double * double).sum()).backward()
    return [cube, double, x.grad]


def _view_written_in_place():
    x = ng.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    a = x * 1
    a[0].mul_(ng.tensor([1.0, 2.0, 3.0]))
    (a * a).sum().backward()
    return [a, x.grad]


def _saved_tensor_hooks():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    with ng.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
        y = (x * x.exp()).sum()
    y.backward()
    return [y, x.grad]


def _anomaly_mode():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection"):
        with ng.autograd.detect_anomaly():
            (x * x.log()).sum().backward()
    return [x.grad]


# -- the pass's start, its own rules, and how it writes .grad -------------------------------
def _means_and_sums_of_each_dtype():
    results = []
    for dtype in (ng.float16, ng.float32, ng.float64):
        x = ng.tensor([[0.1, 0.7, 1e3], [3.3, -2.5, 1e-4]], dtype=dtype, requires_grad=True)
        s = ng.tensor(0.3, dtype=dtype, requires_grad=True)
        loss = (x * 1.7).mean() * 3.1 + (x * x).sum() + s.mean() + (s * x).sum(dim=1).mean()
        loss.backward()
        results += [loss, x.grad, s.grad]
    return results


def _mean_of_a_column_read_from_a_transposed_tensor():
    x = ng.tensor(np.arange(12.0).reshape(3, 4) / 7, requires_grad=True)
    t = x.t()[1:]  # non-contiguous: the gradients that reach x are strided too
    (t.mean() * 0.3 + t.sum() * 0.7 + t.mean(dim=0, keepdim=True).sum()).backward()
    return [x.grad]


def _backward_on_a_leaf_and_on_a_one_element_tensor():
    w = ng.tensor(0.5, dtype=ng.float32, requires_grad=True)
    w.backward()
    m = ng.tensor([[0.5]], requires_grad=True)
    (m * 3.0).backward()
    return [w.grad, m.grad]


def _two_outputs_with_gradients_given():
    x = ng.tensor([1.0, -2.0, 0.5], requires_grad=True)
    a, b = x * x, x.exp()
    ng.autograd.backward([a, b.sum()], [ng.tensor([0.1, 0.2, 0.3]), None])
    return [x.grad]


def _gradients_accumulate_over_passes_and_dtypes():
    w = ng.tensor([1.0, 2.0], dtype=ng.float32, requires_grad=True)
    d = ng.tensor([0.3, 0.7], dtype=ng.float64)
    (w * d).sum().backward()  # a float64 gradient cast to the leaf's float32
    first = w.grad.clone()
    (w * w).sum().backward()  # added into the .grad already there
    return [first, w.grad]


def _chain_through_a_node_with_two_outputs():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    cube, double = _Cube.apply(x * 1.5)
    y = -(-(cube * 1.0))  # a chain whose end is one output of two
    (y.sum() + double.sum()).backward()
    return [x.grad]


def _grad_retained_in_a_chain():
    x = ng.tensor(0.5, requires_grad=True)
    a = -x
    a.retain_grad()
    b = -(-a)
    b.backward()
    return [x.grad, a.grad]


PROGRAMS = [
    _chain(ng.float32),
    _chain(ng.float64),
    _scalar_program(ng.float32),
    _scalar_program(ng.float64),
    _reference_example,
    _shared_subexpressions,
    _broadcasting,
    _broadcasting_over_leading_and_inner_axes,
    _float32_leaf_meets_float64,
    _integer_and_boolean_operands,
    _rows_and_stacks,
    _hooks_everywhere,
    _hook_registered_then_removed,
    _data_replaced_after_the_op,
    _retain_graph_twice,
    _double_backward,
    _grad_with_unused_and_inputs,
    _custom_function_with_two_outputs,
    _view_written_in_place,
    _saved_tensor_hooks,
    _anomaly_mode,
    _means_and_sums_of_each_dtype,
    _mean_of_a_column_read_from_a_transposed_tensor,
    _backward_on_a_leaf_and_on_a_one_element_tensor,
    _two_outputs_with_gradients_given,
    _gradients_accumulate_over_passes_and_dtypes,
    _chain_through_a_node_with_two_outputs,
    _grad_retained_in_a_chain,
]
IDS = [
    "chain_float32",
    "chain_float64",
    "scalar_program_float32",
    "scalar_program_float64",
    *(p.__name__.strip("_") for p in PROGRAMS[4:]),
]


@pytest.mark.parametrize("program", PROGRAMS, ids=IDS)
def test_gradients_are_the_same_bits_with_the_fast_backward_on_and_off(program):
    _assert_same_bits(_every_way(program))


# -- errors ----------------------------------------------------------------------------------
def _error_of(program: Callable[[], None]) -> tuple[type, str]:
    with pytest.raises(Exception) as caught:
        program()
    return type(caught.value), str(caught.value)


def _second_backward():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _modified_in_place():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    a = x * 2
    y = (a * a).sum()
    a.add_(1.0)
    y.backward()


def _data_replaced_by_another_shape():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    w = ng.tensor([3.0, 4.0])
    y = (x * w).sum()
    w.data = ng.tensor([1.0, 2.0, 3.0])
    y.backward()


def _gradient_of_the_wrong_shape():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    (x * 2).backward(ng.tensor([1.0, 2.0, 3.0]))


def _raising_hook():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: 1 / 0)
    y.sum().backward()


ERRORS = [
    (_second_backward, RuntimeError, "backward through the graph a second time"),
    (_modified_in_place, RuntimeError, "modified by an inplace operation"),
    (_data_replaced_by_another_shape, RuntimeError, "its .data was replaced"),
    (_gradient_of_the_wrong_shape, RuntimeError, "Mismatch in shape"),
    (_raising_hook, ZeroDivisionError, "division by zero"),
]


@pytest.mark.parametrize(
    ("program", "kind", "phrase"), ERRORS, ids=[e[0].__name__.strip("_") for e in ERRORS]
)
def test_errors_are_the_same_with_the_fast_backward_on_and_off(program, kind, phrase):
    on = _error_of(program)
    with small_pass_off():
        small_off = _error_of(program)
    with fast_backward_off():
        loop_off = _error_of(program)
    with fast.disabled():
        layer_off = _error_of(program)
    assert on == small_off == loop_off == layer_off
    assert on[0] is kind and phrase in on[1]


def test_a_failed_pass_leaves_every_grad_and_the_graph_as_they_were():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    w = ng.tensor([3.0, 4.0], requires_grad=True)
    a = x * w
    y = (a * a).sum() + (x * 2).sum()
    a.mul_(2.0)  # the second product's saved input changed: the pass fails there
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    assert x.grad is None and w.grad is None
    assert not y.grad_fn.freed


# -- the pass is released as the readable engine releases it ------------------------------
def test_after_the_fast_pass_saved_values_are_freed_and_reading_them_says_so():
    torch = pytest.importorskip("torch")
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.sum().backward()
    assert y.grad_fn.freed
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn._saved_self
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    ty = tx * tx
    ty.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        ty.grad_fn._saved_self


def test_nodes_no_gradient_reached_are_not_released():
    x = ng.tensor(2.0, requires_grad=True)
    unused = x * x
    y = x * 3.0
    z = y + unused.detach()
    z.backward()
    assert z.grad_fn.freed and y.grad_fn.freed
    assert not unused.grad_fn.freed


# -- the order ----------------------------------------------------------------------------
def _graphs() -> list:
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    w = ng.tensor(3.0, requires_grad=True)
    chain = x
    for _ in range(50):
        chain = -chain
    a = x * w
    diamond = (a * a + a.exp() * w).sum()
    cube, double = _Cube.apply(a)
    return [
        [chain.grad_fn],
        [diamond.grad_fn],
        [cube.grad_fn, double.grad_fn, diamond.grad_fn],
        [a.grad_fn, diamond.grad_fn, a.grad_fn],
        [w._edge()[0]],
    ]


@pytest.mark.parametrize("index", range(5))
def test_the_order_is_the_engines_order(index):
    roots = _graphs()[index]
    assert fastback.order_of(roots) == engine.topological_order(roots)[::-1]


def test_a_deep_chain_runs_and_its_nodes_are_released():
    x = ng.tensor(2.0, requires_grad=True)
    y = x
    for _ in range(20_000):  # deeper than Python's recursion limit
        y = -y
    y.backward()
    assert x.grad.item() == 1.0 and y.grad_fn.freed


def test_a_gradient_nothing_else_holds_becomes_grad_without_a_copy():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    (x * 3.0).sum().backward()
    first = x.grad
    assert first._data.flags.owndata and first._data.base is None
    (x * 3.0).sum().backward()
    assert x.grad is first and first.tolist() == [6.0, 6.0]  # added in place


def test_a_failed_pass_leaves_grads_already_there_unchanged():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    before = x.grad.clone()
    w = ng.tensor([3.0, 4.0], requires_grad=True)
    a = x * w
    y = (a * a).sum()
    a.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    assert x.grad.tolist() == before.tolist() and w.grad is None


# -- where the loop steps aside ------------------------------------------------------------
def test_the_loop_takes_only_a_plain_pass():
    x = ng.tensor(1.0, requires_grad=True)
    assert fastback.takes(False, None, None)
    assert not fastback.takes(True, None, None)  # create_graph: gradients are tensors
    assert not fastback.takes(False, [x], None)  # autograd.grad
    assert not fastback.takes(False, None, [x])  # backward(inputs=...)
    with fast.disabled():
        assert not fastback.takes(False, None, None)
    with fast_backward_off():
        assert not fastback.takes(False, None, None)
    with pytest.warns(UserWarning), ng.autograd.detect_anomaly():
        assert not fastback.takes(False, None, None)


# -- torch as the oracle --------------------------------------------------------------------
def test_float32_leaf_against_float64_gets_a_float32_gradient_as_in_torch():
    torch = pytest.importorskip("torch")
    w = ng.tensor([1.5, -2.0], dtype=ng.float32, requires_grad=True)
    (w * ng.tensor([0.1, 0.3], dtype=ng.float64)).sum().backward()
    tw = torch.tensor([1.5, -2.0], dtype=torch.float32, requires_grad=True)
    (tw * torch.tensor([0.1, 0.3], dtype=torch.float64)).sum().backward()
    assert w.grad.dtype == ng.float32 and tw.grad.dtype == torch.float32
    assert w.grad.tolist() == tw.grad.tolist()


def test_a_float32_intermediate_receives_float32_gradients_as_in_torch():
    torch = pytest.importorskip("torch")
    grads = []
    for lib, f32, f64 in ((ng, ng.float32, ng.float64), (torch, torch.float32, torch.float64)):
        w = lib.tensor([1.5, -2.0], dtype=f32, requires_grad=True)
        a = w * 3.0
        seen = []
        a.register_hook(lambda g, seen=seen: seen.append(g))
        d = lib.tensor([0.1, 0.3], dtype=f64)
        (a * d + a * lib.tensor([0.2, 0.7], dtype=f64)).sum().backward()
        grads.append((str(seen[0].dtype).split(".")[-1], seen[0].tolist(), w.grad.tolist()))
    assert grads[0] == grads[1]
    assert grads[0][0] == "float32"


def test_broadcast_gradients_are_summed_back_to_each_shape_as_in_torch():
    torch = pytest.importorskip("torch")
    values = ([[1.0], [2.0], [3.0]], [0.5, -1.0, 2.0, 4.0], 3.0)
    # float64 on both sides: the divisions' gradients are compared to 1e-15
    ours = [ng.tensor(v, dtype=ng.float64, requires_grad=True) for v in values]
    theirs = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in values]
    for a, b, c in (ours, theirs):
        ((a * b + c) / (b * b + 1.0)).sum().backward()
    for mine, torchs in zip(ours, theirs):
        assert mine.grad.shape == tuple(torchs.grad.shape)
        np.testing.assert_allclose(mine.grad.numpy(), torchs.grad.numpy(), rtol=1e-15)


def test_integer_and_boolean_operands_give_the_float_leaf_its_gradient_as_in_torch():
    torch = pytest.importorskip("torch")
    w = ng.tensor([1.5, -2.0, 0.25], requires_grad=True)  # float32, the default in both
    tw = torch.tensor([1.5, -2.0, 0.25], requires_grad=True)
    (w * ng.tensor([2, 3, 4]) + w * ng.tensor([True, False, True])).sum().backward()
    (tw * torch.tensor([2, 3, 4]) + tw * torch.tensor([True, False, True])).sum().backward()
    assert w.grad.dtype == ng.float32 and tw.grad.dtype == torch.float32
    assert w.grad.tolist() == tw.grad.tolist() == [3.0, 3.0, 5.0]


def test_the_reference_example_gives_torchs_gradients():
    torch = pytest.importorskip("torch")
    _, g1, g2, g3 = _reference_example()
    x = torch.ones(2, 2, dtype=torch.float64)
    w = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (1.5, 0.5, 2.0)]
    l1 = x * w[0]
    ((l1 + w[1]) * (l1 * w[2])).mean().backward()
    assert [g1.item(), g2.item(), g3.item()] == [t.grad.item() for t in w]


def test_backward_reads_data_replaced_after_the_op_as_torch_does():
    torch = pytest.importorskip("torch")
    (grad,) = _data_replaced_after_the_op()
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([3.0, 4.0], dtype=torch.float64)
    y = (x * w).sum()
    w.data = torch.tensor([5.0, 7.0], dtype=torch.float64)
    y.backward()
    assert grad.tolist() == x.grad.tolist() == [5.0, 7.0]


def test_a_second_backward_with_retain_graph_accumulates_as_in_torch():
    torch = pytest.importorskip("torch")
    first, second = _retain_graph_twice()
    x = torch.tensor([0.5, 1.5], requires_grad=True)  # float32, the default in both
    y = (x * x.sin()).sum()
    y.backward(retain_graph=True)
    torch_first = x.grad.clone()
    y.backward()
    assert first.dtype == second.dtype == ng.float32
    # sin and cos to a few float32 ulps (their last bit depends on the library)
    np.testing.assert_allclose(first.numpy(), torch_first.numpy(), rtol=4e-7)
    np.testing.assert_allclose(second.numpy(), x.grad.numpy(), rtol=4e-7)


# -- a plain backward() straight to the pass (fastback.tensor_backward) ----------------------
def _float32_reference_example():
    x = ng.ones([2, 2])
    w = [ng.tensor(v, requires_grad=True) for v in (2.0, 3.0, 4.0)]
    l1 = x * w[0]
    loss = ((l1 + w[1]) * (l1 * w[2])).mean()
    return loss, w


def test_a_plain_backward_skips_the_engines_entry_and_a_backward_with_a_gradient_does_not(
    monkeypatch,
):
    entered = []
    readable = tensor_autograd._backward  # the engine's entry, as Tensor.backward calls it
    monkeypatch.setattr(
        tensor_autograd, "_backward", lambda *a, **k: entered.append(a) or readable(*a, **k)
    )
    loss, w = _float32_reference_example()
    loss.backward()
    assert entered == [] and [t.grad.item() for t in w] == [28.0, 8.0, 10.0]
    loss, w = _float32_reference_example()
    loss.backward(ng.tensor(1.0))
    assert len(entered) == 1 and [t.grad.item() for t in w] == [28.0, 8.0, 10.0]


def test_a_plain_backward_goes_through_an_execute_put_in_the_engine_by_a_watch(monkeypatch):
    # a checker counting autograd passes replaces engine.execute: it must see them all
    calls = []
    monkeypatch.setattr(engine, "execute", lambda *args, **kwargs: calls.append(args) or [])
    loss, w = _float32_reference_example()
    loss.backward()
    assert len(calls) == 1 and [t.grad for t in w] == [None, None, None]


def test_the_reference_example_gives_the_same_bits_and_owned_gradients_every_way():
    def program():
        loss, w = _float32_reference_example()
        loss.backward()
        return [loss, *(t.grad for t in w)]

    runs = _every_way(program)
    _assert_same_bits(runs)
    assert [float(g) for g in runs[0][1:]] == [28.0, 8.0, 10.0]


def test_a_gradient_summed_down_to_a_0d_input_is_an_array_of_its_own():
    # so that .grad keeps it without a copy (a reshaped view would be copied)
    g = np.array([[0.1, 0.2], [0.3, 0.4]], np.float32)
    for _ in range(2):  # the first call notes the axes, the second uses them
        summed = fastback._summed(g, np.zeros((), np.float32))
        assert summed.base is None and summed.flags.writeable and summed.shape == ()
        assert summed.tobytes() == g.sum(axis=(0, 1), keepdims=True).reshape(()).tobytes()


def test_a_plain_backward_keeps_retain_graph_and_refuses_a_second_pass_without_it():
    loss, w = _float32_reference_example()
    loss.backward(retain_graph=True)
    loss.backward()
    assert [t.grad.item() for t in w] == [56.0, 16.0, 20.0]
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        loss.backward()


def test_a_plain_backward_still_raises_for_a_saved_tensor_changed_in_place():
    w = ng.tensor([1.0, 2.0], requires_grad=True)
    y = w * 1.0
    z = (y * y).sum()
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def test_a_plain_backward_of_a_non_scalar_raises_the_engines_error():
    w = ng.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        (w * 2.0).backward()
