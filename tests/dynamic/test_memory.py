"""Memory: no leaks over many training steps, intermediates freed after backward, and
graphs that need no cycle collector (or, with a custom Function, are collected by it)."""

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import naivegraph as ng

STEPS = 10_000


def test_no_leak_over_ten_thousand_training_steps():
    ng.manual_seed(0)
    model = ng.nn.Linear(2, 1)
    opt = ng.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = ng.randn(4, 2), ng.randn(4, 1)
    sizes = []
    tracemalloc.start()
    try:
        for step in range(STEPS):
            opt.zero_grad()
            loss = ng.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            if step % 100 == 0:
                sizes.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    early, late = np.mean(sizes[10:30]), np.mean(sizes[-20:])  # after warm-up
    assert late - early < 64 * 1024, f"memory grew from {early:.0f} to {late:.0f} bytes"
    assert np.isfinite(loss.item())


def test_intermediates_are_freed_after_backward():
    x = ng.randn(50, 50, requires_grad=True)
    h = (x * 2).exp()  # exp saves its output
    z = (h * h).sin()  # mul saves both inputs, sin saves its input
    arrays = [weakref.ref(t._data) for t in (h, z)]
    loss = z.sum()
    loss.backward()
    del h, z, loss
    assert all(ref() is None for ref in arrays)


def test_saved_tensors_released_even_while_output_is_alive():
    x = ng.randn(20, 20, requires_grad=True)
    h = x.exp()
    saved = weakref.ref(h._data)
    y = (h * 3).sum()
    del h
    y.backward()
    assert saved() is None  # only the graph held it, and backward released the graph's copy
    assert y.item() == pytest.approx(3 * np.exp(x.detach().numpy()).sum())


def test_graph_has_no_reference_cycles():
    gc.collect()
    gc.disable()
    try:
        x = ng.randn(10, requires_grad=True)
        y = (x.exp() * x).sigmoid()
        y.retain_grad()
        y.register_hook(lambda g: None)
        loss = (y * y.log_softmax(0)).sum()
        nodes = [weakref.ref(loss.grad_fn), weakref.ref(y.grad_fn)]
        tensors = [weakref.ref(y), weakref.ref(loss)]
        del y, loss
        assert all(r() is None for r in nodes + tensors), "a graph survived without gc"
        # same after a backward with retain_graph
        y = (x * x).tanh()
        loss = y.sum()
        loss.backward(retain_graph=True)
        refs = [weakref.ref(loss.grad_fn), weakref.ref(y.grad_fn), weakref.ref(y)]
        del y, loss
        assert all(r() is None for r in refs)
    finally:
        gc.enable()


class SaveOutput(ng.autograd.Function):
    """exp that saves its *output*: output -> node -> ctx -> output is a cycle."""

    @staticmethod
    def forward(ctx, x):
        out = x.exp()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out


def test_custom_function_saving_its_output_is_collected():
    x = ng.randn(5, requires_grad=True)
    y = SaveOutput.apply(x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()))
    refs = [weakref.ref(y), weakref.ref(y.grad_fn)]
    del y
    gc.collect()
    assert all(r() is None for r in refs)
