"""The fast layer's cross_entropy (``naivegraph.fast.fastloss``) and its backward
kernels (``fast.nll_loss_grad``, ``fast.log_softmax_grad``): the same bits, nodes and
errors as the readable path, torch as the oracle for names and values.

The MLP step is the one of ``benchmarks/bench_dynamic.py`` (workload (c)).
"""

from __future__ import annotations

import numpy as np
import pytest
from fast_switch import fast_layer_on
from graph_fields import describe as _describe

import naivegraph as ng
from naivegraph import fast
from naivegraph.fast import fastloss
from naivegraph.ops.core import Meta

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.usefixtures(fast_layer_on.__name__)

F = ng.nn.functional


def both_ways(fn):
    """``fn()`` with the fast layer on, then off."""
    on = fn()
    with fast.disabled():
        off = fn()
    return on, off


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def logits(dtype, case: str) -> np.ndarray:
    x = np.random.default_rng(7).standard_normal((6, 5)).astype(dtype) * 3
    if case == "inf":
        x[2, 1] = np.inf
    elif case == "row of -inf":
        x[3] = -np.inf
    elif case == "nan":
        x[0, 0] = np.nan
    elif case == "signed zeros":
        x[1] = [-0.0, 0.0, -0.0, 0.0, -0.0]
    elif case == "huge":
        big = np.finfo(dtype).max / 2
        x[4] = [big, -big, 0.0, 1.0, -1.0]
    return x


TARGET = np.array([0, 4, 2, 1, 3, 4])


def loss_and_grad(x: np.ndarray, target: np.ndarray, reduction: str):
    logits_ = ng.tensor(x, requires_grad=True)
    loss = F.cross_entropy(logits_, ng.tensor(target), reduction=reduction)
    loss.backward(None if reduction != "none" else ng.ones(len(target), dtype=loss.dtype))
    return loss.detach().numpy().copy(), logits_.grad.numpy().copy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", ["plain", "inf", "row of -inf", "nan", "signed zeros", "huge"])
def test_cross_entropy_gives_the_same_bits_with_the_layer_on_and_off(dtype, reduction, case):
    x = logits(dtype, case)
    (loss_on, grad_on), (loss_off, grad_off) = both_ways(
        lambda: loss_and_grad(x, TARGET, reduction)
    )
    assert same_bits(loss_on, loss_off)
    assert same_bits(grad_on, grad_off)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_matches_torch_in_value_gradient_and_nodes(reduction):
    x = logits(np.float64, "plain")
    logits_ = ng.tensor(x, requires_grad=True)
    loss = F.cross_entropy(logits_, ng.tensor(TARGET), reduction=reduction)
    t_logits = torch.tensor(x, requires_grad=True)
    t_loss = torch.nn.functional.cross_entropy(t_logits, torch.tensor(TARGET), reduction=reduction)
    assert type(loss.grad_fn).__name__ == type(t_loss.grad_fn).__name__ == "NllLossBackward0"
    inner, t_inner = loss.grad_fn.next_functions[0][0], t_loss.grad_fn.next_functions[0][0]
    assert type(inner).__name__ == type(t_inner).__name__ == "LogSoftmaxBackward0"
    loss.sum().backward()
    t_loss.sum().backward()
    np.testing.assert_allclose(loss.detach().numpy(), t_loss.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(logits_.grad.numpy(), t_logits.grad.numpy(), rtol=1e-12)


def test_the_fast_cross_entropy_runs_for_a_batch_of_class_indices():
    logits_ = ng.zeros(3, 4, requires_grad=True)
    found = fastloss.cross_entropy(logits_, ng.tensor([0, 1, 3]), "mean")
    assert found is not None
    assert found.item() == pytest.approx(np.log(4))


@pytest.mark.parametrize(
    "target",
    [
        np.array([0, 1, 4]),  # out of range
        np.array([0, -1, 2]),  # negative
        np.array([0.0, 1.0, 2.0]),  # not integers
        np.array([0, 1]),  # wrong batch
        np.zeros((0,), np.int64),  # empty
    ],
)
def test_the_fast_cross_entropy_steps_aside_where_the_readable_path_decides(target):
    logits_ = ng.zeros(3, 4, requires_grad=True)
    assert fastloss.cross_entropy(logits_, ng.tensor(target), "mean") is None


@pytest.mark.parametrize(
    ("target", "reduction", "error", "phrase"),
    [
        ([0, 1, 4], "mean", IndexError, "Target 4 is out of bounds"),
        ([0, -1, 2], "mean", IndexError, "Target -1 is out of bounds"),
        ([0, 1], "mean", ValueError, "expected input of shape (N, C)"),
        ([0, 1, 2], "average", ValueError, "is not a valid value for reduction"),
    ],
)
def test_cross_entropy_raises_the_same_error_with_the_layer_on_and_off(
    target, reduction, error, phrase
):
    def message():
        with pytest.raises(error) as caught:
            F.cross_entropy(ng.zeros(3, 4, requires_grad=True), ng.tensor(target), reduction)
        return str(caught.value)

    on, off = both_ways(message)
    assert on == off
    assert phrase in on


def test_an_index_changed_behind_the_tensor_gives_the_same_gradient_both_ways():
    # from_numpy shares the array: a write through numpy bumps no version, and the
    # one-hot of an index out of range is an empty row in both ways
    def run():
        labels = np.array([0, 1, 2])
        logits_ = ng.tensor(logits(np.float64, "plain")[:3], requires_grad=True)
        loss = F.cross_entropy(logits_, ng.from_numpy(labels))
        labels[1] = 9
        loss.backward()
        return logits_.grad.numpy().copy()

    on, off = both_ways(run)
    assert same_bits(on, off)


def test_a_second_order_gradient_through_cross_entropy_matches_torch():
    x = logits(np.float64, "plain")

    def run():
        logits_ = ng.tensor(x, requires_grad=True)
        loss = F.cross_entropy(logits_, ng.tensor(TARGET))
        (g,) = ng.autograd.grad(loss, logits_, create_graph=True)
        (g.sum() * g).sum().backward()
        return logits_.grad.numpy().copy()

    on, off = both_ways(run)
    assert same_bits(on, off)
    t_logits = torch.tensor(x, requires_grad=True)
    t_loss = torch.nn.functional.cross_entropy(t_logits, torch.tensor(TARGET))
    (t_g,) = torch.autograd.grad(t_loss, t_logits, create_graph=True)
    (t_g.sum() * t_g).sum().backward()
    np.testing.assert_allclose(on, t_logits.grad.numpy(), rtol=1e-9, atol=1e-15)


def test_the_backward_kernels_step_aside_for_tensors_and_unreduced_losses():
    g = np.ones((), np.float32)
    meta = Meta((3, 4), np.float32)
    target = np.array([0, 1, 3])
    assert fast.nll_loss_grad(ng.tensor(1.0), meta, target, "mean") is None
    assert fast.nll_loss_grad(g, meta, target, "none") is None
    out = np.zeros((3, 4), np.float32)
    assert fast.log_softmax_grad(ng.zeros(3, 4), out, 1) is None
    assert fast.log_softmax_grad(np.zeros((3, 4)), out, 1) is None  # float64 g, float32 out


def mlp_run(steps: int = 3):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 20)).astype(np.float32)
    y = rng.integers(0, 10, 32)
    params = [
        (rng.standard_normal((20, 16)) * 0.1).astype(np.float32),
        np.zeros(16, np.float32),
        (rng.standard_normal((16, 10)) * 0.1).astype(np.float32),
        np.zeros(10, np.float32),
    ]
    xs, ys = ng.from_numpy(x), ng.from_numpy(y)
    ws = [ng.from_numpy(p.copy()).requires_grad_() for p in params]
    opt = ng.optim.SGD(ws, lr=0.01)
    losses = []
    for _ in range(steps):
        w1, b1, w2, b2 = ws
        logits_ = (xs @ w1 + b1).relu() @ w2 + b2
        loss = F.cross_entropy(logits_, ys)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach().numpy().copy())
    return losses, [w.detach().numpy().copy() for w in ws]


def test_the_mlp_step_gives_the_same_bits_with_the_layer_on_and_off():
    (losses_on, ws_on), (losses_off, ws_off) = both_ways(mlp_run)
    assert all(same_bits(a, b) for a, b in zip(losses_on, losses_off))
    assert all(same_bits(a, b) for a, b in zip(ws_on, ws_off))


# -- the fused forward (``fastloss._fused``): one pass of numpy, the two ops' nodes ----------
def _fused_off():
    """The two ops through ``apply``, the rest of the layer on."""
    previous = fastloss.fused
    fastloss.fused = False
    return previous


def graph_three_ways(program):
    """``program()``'s graph, described field for field: fused, not fused, layer off."""
    runs = [_describe(program())]
    previous = _fused_off()
    try:
        runs.append(_describe(program()))
    finally:
        fastloss.fused = previous
    with fast.disabled():
        runs.append(_describe(program()))
    return runs


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", ["plain", "inf", "row of -inf", "nan", "signed zeros", "huge"])
@pytest.mark.parametrize("target_dtype", [np.int64, np.int32, np.uint8])
def test_the_fused_cross_entropy_builds_the_two_ops_graph_field_for_field(
    dtype, reduction, case, target_dtype
):
    def program():
        logits_ = ng.tensor(logits(dtype, case), requires_grad=True)
        hidden = logits_ * 1.0  # an inner node's edge, not a leaf's
        target = ng.tensor(TARGET.astype(target_dtype))
        loss = F.cross_entropy(hidden, target, reduction=reduction)
        found = {"logits": logits_, "hidden": hidden, "target": target, "loss": loss}
        loss.backward(None if reduction != "none" else ng.ones(len(TARGET), dtype=loss.dtype))
        found["grad"] = logits_.grad
        return found

    fused, unfused, off = graph_three_ways(program)
    assert fused == unfused == off


def test_the_fused_cross_entropy_without_grad_gives_the_same_tensors():
    def program():
        plain = ng.tensor(logits(np.float32, "plain"))
        wants = ng.tensor(logits(np.float64, "plain"), requires_grad=True)
        found = {"plain": plain, "loss": F.cross_entropy(plain, ng.tensor(TARGET))}
        with ng.no_grad():
            found["no_grad"] = F.cross_entropy(wants, ng.tensor(TARGET), reduction="sum")
        return found

    fused, unfused, off = graph_three_ways(program)
    assert fused == unfused == off


def test_the_fused_forward_runs_for_float32_and_float64_only(monkeypatch):
    calls = []
    fused = fastloss._fused
    monkeypatch.setattr(fastloss, "_fused", lambda *a: calls.append(a[2]) or fused(*a))
    for dtype in (np.float32, np.float64, np.float16):
        F.cross_entropy(ng.tensor(logits(dtype, "plain"), requires_grad=True), ng.tensor(TARGET))
    with ng.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        F.cross_entropy(ng.zeros(6, 5, requires_grad=True), ng.tensor(TARGET))
    assert calls == ["mean", "mean"]
