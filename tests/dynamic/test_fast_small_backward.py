"""The small-graph backward (``naivegraph.fast.fastsmall``) changes speed, never results.

Each program is a small graph that a plain ``loss.backward()`` hands to the small pass,
or one just outside what it takes (hooks, a custom ``Function``, one node too many,
``create_graph``, ``inputs=``, anomaly mode).  Every program runs four ways: the layer
on, the small pass off (``fastback``'s pass), the fast backward off, the layer off;
every value must be the same bits, dtypes included, every error the same type and
message, every hook called in the same order with the same values.  Where PyTorch
defines the answer and IEEE makes it exact, torch 2.13 is the oracle.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from typing import Callable, Iterator

import numpy as np
import pytest
from fast_switch import fast_layer_on

import naivegraph as ng
from naivegraph import fast
from naivegraph.dynamic import engine
from naivegraph.fast import fastback, fastsmall

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)  # they compare on with off


@contextmanager
def _switched_off(module) -> Iterator[None]:
    previous = module.on
    module.on = False
    try:
        yield
    finally:
        module.on = previous


def _every_way(program: Callable[[], list]) -> list[list]:
    runs = [program()]
    with _switched_off(fastsmall):
        runs.append(program())
    with _switched_off(fastback):
        runs.append(program())
    with fast.disabled():
        runs.append(program())
    return runs


def _bits(value) -> tuple:
    if isinstance(value, ng.Tensor):
        value = value._data
    if value is None or isinstance(value, (bool, str)):
        return (value,)
    array = np.asarray(value)
    return (str(array.dtype), array.shape, array.tobytes())


def _assert_same_bits(runs: list[list]) -> None:
    first = [_bits(v) for v in runs[0]]
    for other in runs[1:]:
        assert [_bits(v) for v in other] == first


@contextmanager
def _counting_passes() -> Iterator[list]:
    """Counts the passes the small pass took: ``fastsmall.run`` calls that ran the graph
    (returned True, or raised from its loop: the walk itself never raises)."""
    calls: list = []
    original = fastsmall.run

    def counted(*args):
        try:
            took = original(*args)
        except Exception:
            calls.append(args)
            raise
        if took:
            calls.append(args)
        return took

    fastsmall.run = counted
    try:
        yield calls
    finally:
        fastsmall.run = original


# -- programs the small pass takes ------------------------------------------------------
def _reference(dtype):
    def program():
        x = ng.ones([2, 2], dtype=dtype)
        w1, w2, w3 = (ng.tensor(v, dtype=dtype, requires_grad=True) for v in (2.0, 3.0, 4.0))
        l1 = x * w1
        loss = ((l1 + w2) * (l1 * w3)).mean()
        loss.backward()
        return [loss, w1.grad, w2.grad, w3.grad]

    return program


def _every_operator_on_0d(dtype):
    def program():  # 0-d tensors and Python numbers on both sides, sub, div and neg too
        a, b = (ng.tensor(v, dtype=dtype, requires_grad=True) for v in (0.3, -1.7))
        c = (a * b - b / (a + 3)) / 0.7 - (-a) * 0.001 + 2 * a - 1 + b * b
        c.backward()
        return [c, a.grad, b.grad]

    return program


def _five_consumers_summed_in_order():
    # x's gradient is a sum of five float32 terms: another order gives other bits
    x = ng.tensor([0.1, 1e7, -3.3], requires_grad=True)
    a = x * 1.1
    loss = (a * 3.7 + a * a + (a + 1e-3) * 2.9 + x * 1e-7 + a / 0.3).sum()
    loss.backward()
    return [loss, x.grad]


def _same_input_twice_and_broadcasts():
    a = ng.tensor([[1.0], [2.0], [3.0]], dtype=ng.float64, requires_grad=True)  # (3, 1)
    b = ng.tensor([0.5, -1.0, 2.0, 4.0], dtype=ng.float64, requires_grad=True)  # (4,)
    c = ng.tensor(3.0, dtype=ng.float64, requires_grad=True)
    loss = ((a * b + c) / (b * b + 1.0) - c * c).mean()
    loss.backward()
    return [loss, a.grad, b.grad, c.grad]


def _float32_leaf_against_float64():
    w = ng.tensor([1.5, -2.0], dtype=ng.float32, requires_grad=True)
    d = ng.tensor([0.1, 0.3], dtype=ng.float64, requires_grad=True)
    loss = (w * d + w * w).sum()
    loss.backward()
    return [loss, w.grad, d.grad]


def _existing_grads_accumulate():
    w = ng.tensor([1.0, 2.0], requires_grad=True)
    v = ng.tensor(0.5, dtype=ng.float64, requires_grad=True)
    w.grad = ng.tensor([0.25, -0.5])
    (w * v).sum().backward()
    first = [w.grad.clone(), v.grad.clone()]
    (w * w * v).mean().backward()
    return [*first, w.grad, v.grad]


def _views_of_a_leaf():
    x = ng.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    row, column = x[0], x[:, 1]
    loss = (row * row).sum() + (column * x.t()[2][:2]).mean() + x.t().sum()
    loss.backward()
    return [loss, x.grad]


def _means_and_sums_along_dims():
    x = ng.tensor(np.arange(6.0).reshape(2, 3) / 7, requires_grad=True)
    loss = x.mean(dim=0).sum() + x.sum(dim=1, keepdim=True).mean() + x.exp().mean()
    loss.backward()
    return [loss, x.grad]


def _post_accumulate_hooks_in_order():
    seen = []
    a = ng.tensor(2.0, requires_grad=True)
    b = ng.tensor([1.0, 3.0], requires_grad=True)
    a.register_post_accumulate_grad_hook(lambda t: seen.append(("a", t.grad.clone())))
    b.register_post_accumulate_grad_hook(lambda t: seen.append(("b", t.grad.clone())))
    (a * b + b).sum().backward()
    return [a.grad, b.grad] + [name for name, _ in seen] + [g for _, g in seen]


def _retain_graph_then_a_second_pass():
    x = ng.tensor([0.5, 1.5], requires_grad=True)
    y = (x * x * 3.0).sum()
    y.backward(retain_graph=True)
    first = x.grad.clone()
    y.backward()
    return [first, x.grad, y.grad_fn.freed]


def _inf_minus_inf_is_nan_without_a_warning():
    x = ng.tensor([1e38, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):  # the pass ignores numpy's errors, as torch does
            loss = (x * x * 10.0 - x * x * 10.0).sum()
            loss.backward()
    return [loss, x.grad]


def _a_graph_of_limit_nodes(extra: int):
    def program():
        w = ng.tensor(0.75, dtype=ng.float64, requires_grad=True)
        y = w * 1.5
        for _ in range(fastsmall.LIMIT - 2 + extra):  # nodes: w's leaf and the ops
            y = y * w
        y.backward()
        return [y, w.grad]

    return program


# -- programs just outside it: the general passes run them ---------------------------------
def _tensor_and_node_hooks():
    x = ng.tensor([1.0, -2.0, 3.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: g * 2)
    a = x * x
    a.retain_grad()
    a.register_hook(lambda g: seen.append(g.clone()))
    b = a * 3.0
    b.grad_fn.register_prehook(lambda gs: (gs[0] * 3,))
    b.grad_fn.register_hook(lambda gi, go: (gi[0] + 1.0, gi[1]))
    b.sum().backward()
    return [x.grad, a.grad] + seen


def _create_graph_and_inputs():
    x = ng.tensor(0.5, requires_grad=True)
    z = ng.tensor(2.0, requires_grad=True)
    y = x * x * x * z
    y.backward(create_graph=True)
    gx = x.grad
    x.grad = None
    y.backward(inputs=[z])
    return [gx, gx.requires_grad, z.grad, x.grad]


def _anomaly_mode():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly Detection"):
        with ng.autograd.detect_anomaly():
            (x * x * 0.5).sum().backward()
    return [x.grad]


PROGRAMS = {
    "reference_float32": _reference(ng.float32),
    "reference_float64": _reference(ng.float64),
    "every_operator_on_0d_float32": _every_operator_on_0d(ng.float32),
    "every_operator_on_0d_float64": _every_operator_on_0d(ng.float64),
    "five_consumers_summed_in_order": _five_consumers_summed_in_order,
    "same_input_twice_and_broadcasts": _same_input_twice_and_broadcasts,
    "float32_leaf_against_float64": _float32_leaf_against_float64,
    "existing_grads_accumulate": _existing_grads_accumulate,
    "views_of_a_leaf": _views_of_a_leaf,
    "means_and_sums_along_dims": _means_and_sums_along_dims,
    "post_accumulate_hooks_in_order": _post_accumulate_hooks_in_order,
    "retain_graph_then_a_second_pass": _retain_graph_then_a_second_pass,
    "inf_minus_inf_is_nan_without_a_warning": _inf_minus_inf_is_nan_without_a_warning,
    "limit_nodes": _a_graph_of_limit_nodes(0),
    "one_node_over_the_limit": _a_graph_of_limit_nodes(1),
    "tensor_and_node_hooks": _tensor_and_node_hooks,
    "create_graph_and_inputs": _create_graph_and_inputs,
    "anomaly_mode": _anomaly_mode,
}


@pytest.mark.parametrize("program", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_values_are_the_same_bits_four_ways(program):
    _assert_same_bits(_every_way(program))


TAKEN = [
    "reference_float32",
    "reference_float64",
    "every_operator_on_0d_float32",
    "five_consumers_summed_in_order",
    "views_of_a_leaf",
    "means_and_sums_along_dims",
    "post_accumulate_hooks_in_order",
    "limit_nodes",
]
NOT_TAKEN = ["one_node_over_the_limit", "tensor_and_node_hooks", "anomaly_mode"]


@pytest.mark.parametrize("name", TAKEN)
def test_the_small_pass_takes_a_plain_backward_of_a_small_graph(name):
    with _counting_passes() as calls:
        PROGRAMS[name]()
    assert len(calls) >= 1


@pytest.mark.parametrize("name", NOT_TAKEN)
def test_the_small_pass_leaves_hooks_anomaly_mode_and_large_graphs_to_the_general_pass(name):
    with _counting_passes() as calls:
        PROGRAMS[name]()
    assert calls == []


def test_a_backward_with_a_gradient_inputs_or_create_graph_is_not_the_small_pass():
    x = ng.tensor(2.0, requires_grad=True)
    with _counting_passes() as calls:
        (x * x).backward(ng.tensor(1.0))
        (x * x).backward(inputs=[x])
        (x * x).backward(create_graph=True)
        ng.autograd.backward([x * x])
    assert calls == [] and x.grad.item() == 16.0


def test_a_watch_on_engine_execute_sees_a_small_graphs_backward(monkeypatch):
    calls = []
    monkeypatch.setattr(engine, "execute", lambda *args, **kwargs: calls.append(args) or [])
    w = ng.tensor(3.0, requires_grad=True)
    (w * w).backward()
    assert len(calls) == 1 and w.grad is None


# -- errors --------------------------------------------------------------------------------
def _error_of(program: Callable[[], None]) -> tuple[type, str]:
    with pytest.raises(Exception) as caught:
        program()
    return type(caught.value), str(caught.value)


def _second_backward():
    w = ng.tensor(2.0, requires_grad=True)
    y = w * w
    y.backward()
    y.backward()


def _modified_in_place():
    w = ng.tensor([1.0, 2.0], requires_grad=True)
    a = w * 2.0
    y = (a * a).mean()
    a.mul_(3.0)
    y.backward()


def _leaf_data_replaced_by_another_shape():
    w = ng.tensor([1.0, 2.0], requires_grad=True)
    v = ng.tensor([3.0, 4.0])
    y = (w * v).sum()
    v.data = ng.tensor([1.0, 2.0, 3.0])
    y.backward()


def _non_scalar():
    (ng.tensor([1.0, 2.0], requires_grad=True) * 2.0).backward()


def _does_not_require_grad():
    (ng.tensor(1.0) * 2.0).backward()


ERRORS = [
    (_second_backward, RuntimeError, "Trying to backward through the graph a second time"),
    (_modified_in_place, RuntimeError, "modified by an inplace operation"),
    (_leaf_data_replaced_by_another_shape, RuntimeError, "its .data was replaced"),
    (_non_scalar, RuntimeError, "grad can be implicitly created only for scalar outputs"),
    (_does_not_require_grad, RuntimeError, "does not require grad"),
]


@pytest.mark.parametrize(
    ("program", "kind", "phrase"), ERRORS, ids=[e[0].__name__.strip("_") for e in ERRORS]
)
def test_errors_are_the_same_four_ways(program, kind, phrase):
    found = [_error_of(program)]
    for module in (fastsmall, fastback):
        with _switched_off(module):
            found.append(_error_of(program))
    with fast.disabled():
        found.append(_error_of(program))
    assert found.count(found[0]) == 4
    assert found[0][0] is kind and phrase in found[0][1]


def test_a_failed_small_pass_leaves_grads_and_the_graph_as_they_were():
    w = ng.tensor([1.0, 2.0], requires_grad=True)
    w.grad = ng.tensor([0.5, 0.5])
    a = w * 2.0
    y = (a * a).sum() + (w * w).sum()
    a.mul_(3.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    assert w.grad.tolist() == [0.5, 0.5] and not y.grad_fn.freed
    assert not a.grad_fn.freed


def test_after_a_small_pass_saved_values_are_freed_and_unreached_nodes_are_not():
    x = ng.tensor(2.0, requires_grad=True)
    unused = x * x
    y = x * x
    z = y + unused.detach()
    z.backward()
    assert z.grad_fn.freed and y.grad_fn.freed and not unused.grad_fn.freed
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn._saved_self


def test_a_gradient_the_pass_made_becomes_grad_without_a_copy():
    w = ng.tensor(2.0, requires_grad=True)
    x = ng.ones([2, 2])
    (x * w).mean().backward()  # summed down to 0-d: an array of its own
    assert w.grad._data.flags.owndata and w.grad._data.base is None
    assert w.grad.item() == 1.0


# -- torch as the oracle (exact: + - * / on values exact in float32) -----------------------
def test_the_reference_example_gives_torchs_bits_in_float32():
    torch = pytest.importorskip("torch")
    _, *ours = _reference(ng.float32)()
    x = torch.ones(2, 2)
    w = [torch.tensor(v, requires_grad=True) for v in (2.0, 3.0, 4.0)]
    l1 = x * w[0]
    ((l1 + w[1]) * (l1 * w[2])).mean().backward()
    assert [g.dtype for g in ours] == [ng.float32] * 3
    assert [g.numpy().tobytes() for g in ours] == [t.grad.numpy().tobytes() for t in w]
    assert [g.item() for g in ours] == [28.0, 8.0, 10.0]


def test_post_accumulate_hooks_run_in_torchs_order_with_torchs_gradients():
    torch = pytest.importorskip("torch")
    found = []
    for lib in (ng, torch):
        seen = []
        a = lib.tensor(2.0, requires_grad=True)
        b = lib.tensor([1.0, 3.0], requires_grad=True)
        a.register_post_accumulate_grad_hook(
            lambda t, seen=seen: seen.append(("a", t.grad.tolist()))
        )
        b.register_post_accumulate_grad_hook(
            lambda t, seen=seen: seen.append(("b", t.grad.tolist()))
        )
        (a * b + b).sum().backward()
        found.append(seen)
    assert found[0] == found[1] == [("a", 4.0), ("b", [3.0, 3.0])]


def test_a_leaf_with_a_grad_accumulates_as_in_torch():
    torch = pytest.importorskip("torch")
    found = []
    for lib in (ng, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        w.grad = lib.tensor([0.25, -0.5])
        (w * w * 0.5).sum().backward()
        found.append(w.grad.tolist())
    assert found[0] == found[1] == [1.25, 1.5]
