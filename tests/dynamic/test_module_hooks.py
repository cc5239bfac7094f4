"""Hooks as torch runs them, each against torch 2.13: a post-accumulate-grad hook that
updates its parameter in place, inference tensors' version counter, and module forward
pre-hooks, forward hooks and full backward hooks (arguments, replacements, order,
removal, the nodes they put in the graph)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import naivegraph as ng

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(11)


def _linear(lib, weight, bias):
    layer = lib.nn.Linear(*weight.shape[::-1]).to(lib.float64)
    with lib.no_grad():
        layer.weight.copy_(lib.tensor(weight))
        layer.bias.copy_(lib.tensor(bias))
    return layer


# -- post-accumulate-grad hooks -------------------------------------------------------------
@pytest.mark.parametrize("fast", [True, False])
def test_a_post_accumulate_grad_hook_updates_its_parameter_in_place_as_torchs_docstring(fast):
    weight, bias, x = RNG.normal(size=(2, 3)), RNG.normal(size=2), RNG.normal(size=(4, 3))
    finals, modes = [], []
    for lib in (ng, torch):
        layer = _linear(lib, weight, bias)
        for p in layer.parameters():
            p.register_post_accumulate_grad_hook(lambda p: p.add_(p.grad, alpha=-0.1))
            p.register_post_accumulate_grad_hook(
                lambda p, lib=lib: modes.append(lib.is_grad_enabled())
            )
        previous = ng.fast.enabled
        ng.fast.set_enabled(fast)
        try:
            for _ in range(3):
                layer.zero_grad()
                (layer(lib.tensor(x)) ** 2).sum().backward()
        finally:
            ng.fast.set_enabled(previous)
        finals.append([p.detach().numpy().copy() for p in layer.parameters()])
    for a, b in zip(*finals):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert set(modes) == {False}


def test_a_post_accumulate_grad_hook_runs_with_grad_mode_on_under_create_graph():
    modes = []
    for lib in (ng, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        w.register_post_accumulate_grad_hook(lambda p, lib=lib: modes.append(lib.is_grad_enabled()))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # torch's note on the .grad cycle
            (w * w).sum().backward(create_graph=True)
        w.grad = None
    assert modes == [True, True]


def test_a_post_accumulate_grad_hook_that_returns_a_number_is_refused_as_in_torch():
    for lib in (ng, torch):
        w = lib.tensor([1.0], requires_grad=True)
        w.register_post_accumulate_grad_hook(lambda p: 5)
        with pytest.raises(TypeError, match="'int'"):
            (w * 2).sum().backward()


# -- inference tensors ----------------------------------------------------------------------
def test_tensors_made_under_inference_mode_have_no_version_counter():
    for lib in (ng, torch):
        x = lib.ones(2)
        with lib.inference_mode():
            made = [lib.zeros(2), x + 1, x * x, x @ x, x.sum(), x.relu(), x.exp()]
        for t in made:
            assert t.is_inference()
            with pytest.raises(
                RuntimeError, match="Inference tensors do not track version counter"
            ):
                t._version
        assert not x.is_inference() and x._version == 0 and not (x + 1).is_inference()
        with lib.inference_mode(False):
            assert not lib.ones(1).is_inference()


# -- module forward hooks ---------------------------------------------------------------------
def test_forward_pre_hooks_and_forward_hooks_replace_and_observe_as_in_torch():
    weight, bias, x = RNG.normal(size=(1, 2)), RNG.normal(size=1), RNG.normal(size=(3, 2))
    results = []
    for lib in (ng, torch):
        layer, log = _linear(lib, weight, bias), []
        pre = layer.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
        post = layer.register_forward_hook(lambda m, args, out: out + 1)
        layer.register_forward_hook(lambda m, args, out, log=log: log.append(("last", len(args))))
        layer.register_forward_hook(
            lambda m, args, out, log=log: log.append(("first",)), prepend=True
        )
        replaced = layer(lib.tensor(x)).detach().numpy()
        pre.remove(), post.remove()
        plain = layer(lib.tensor(x)).detach().numpy()
        layer.register_forward_pre_hook(lambda m, args: args[0] * 3)  # not a tuple: wrapped
        tripled = layer(lib.tensor(x)).detach().numpy()
        results.append((replaced, plain, tripled, log))
    for a, b in zip(results[0][:3], results[1][:3]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert results[0][3] == results[1][3]


def test_hooks_with_kwargs_see_and_replace_keyword_arguments():
    logs = []
    for lib in (ng, torch):
        layer, log = lib.nn.Linear(2, 2), []
        layer.register_forward_pre_hook(
            lambda m, args, kwargs, log=log: log.append(("pre", len(args), sorted(kwargs))),
            with_kwargs=True,
        )
        layer.register_forward_pre_hook(
            lambda m, args, kwargs: ((), {"input": kwargs["input"] * 0}), with_kwargs=True
        )
        layer.register_forward_hook(
            lambda m, args, kwargs, out, log=log: log.append(
                ("post", sorted(kwargs), out.shape[0])
            ),
            with_kwargs=True,
        )
        out = layer(input=lib.ones(3, 2))
        assert np.allclose(out.detach().numpy(), layer.bias.detach().numpy())
        logs.append(log)
    assert logs[0] == logs[1]
    for lib in (ng, torch):
        layer = lib.nn.Linear(2, 2)
        layer.register_forward_pre_hook(lambda m, a, k: 5, with_kwargs=True)
        with pytest.raises(
            RuntimeError, match="must return None or a tuple of \\(new_args, new_kwargs\\)"
        ):
            layer(lib.ones(1, 2))


# -- full backward hooks ------------------------------------------------------------------------
def _gradients(values):
    return [None if g is None else np.asarray(g.detach().numpy()).tolist() for g in values]


def test_a_full_backward_hook_gets_torchs_grad_input_and_grad_output():
    logs = []
    for lib in (ng, torch):

        class Two(lib.nn.Module):
            def forward(self, a, b, scale):
                return a * b * scale, a + b

        module, log = Two(), []
        module.register_full_backward_hook(
            lambda m, gi, go, log=log: log.append((_gradients(gi), _gradients(go)))
        )
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        y, z = module(a, lib.tensor([3.0, 4.0]), 3.0)
        assert y.grad_fn.name() == z.grad_fn.name() == "BackwardHookFunctionBackward"
        names = [n.name() if n else None for n, _ in y.grad_fn.next_functions]
        (y.sum() + z.sum() * 2).backward()
        logs.append((log, names, a.grad.tolist()))
    assert logs[0] == logs[1]


def test_a_full_backward_hook_may_replace_the_input_gradient():
    weight, bias, x = RNG.normal(size=(2, 2)), RNG.normal(size=2), RNG.normal(size=(1, 2))
    results = []
    for lib in (ng, torch):
        layer = _linear(lib, weight, bias)
        layer.register_full_backward_hook(lambda m, gi, go: (gi[0] * 10,))
        inputs = lib.tensor(x, requires_grad=True)
        layer(inputs).sum().backward()
        results.append((inputs.grad.numpy(), layer.weight.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    for lib in (ng, torch):
        layer = lib.nn.Linear(2, 2)
        layer.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        with pytest.raises(
            RuntimeError, match="invalid number of grad_input, got 2, but expected 1"
        ):
            layer(lib.ones(1, 2, requires_grad=True)).sum().backward()


def test_a_full_backward_hook_fires_at_the_outputs_when_no_input_needs_a_gradient():
    logs = []
    for lib in (ng, torch):
        layer, log = lib.nn.Linear(2, 1), []
        layer.register_full_backward_hook(
            lambda m, gi, go, log=log: log.append((gi, _gradients(go)))
        )
        with pytest.warns(
            UserWarning, match="Full backward hook is firing when gradients are computed"
        ):
            layer(lib.ones(1, 2)).sum().backward()
        logs.append(log)
    assert logs[0] == logs[1] == [((None,), [[[1.0]]])]


def test_removing_a_backward_hook_restores_the_plain_graph():
    layer = ng.nn.Linear(2, 1)
    handle = layer.register_full_backward_hook(lambda m, gi, go: None)
    assert layer(ng.ones(1, 2)).grad_fn.name() == "BackwardHookFunctionBackward"
    handle.remove()
    assert layer(ng.ones(1, 2)).grad_fn.name() == "AddmmBackward0"
    with ng.no_grad():
        layer.register_full_backward_hook(lambda m, gi, go: None)
        assert layer(ng.ones(1, 2)).grad_fn is None
