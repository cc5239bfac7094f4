"""The small training kit: modules, parameters and the optimisers, step for step with torch."""

from __future__ import annotations

import math

import numpy as np
import pytest

import naivegraph as ng

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [-1.0, 1.0, 1.0], [0.0, -2.0, 0.5]])
Y = np.array([[1.0], [-0.5], [0.25], [2.0]])
W = np.array([[0.1, -0.2, 0.3], [0.4, 0.0, -0.1]])
B = np.array([0.05, -0.05])
V = np.array([[0.3, -0.6]])


def _train(lib, make_optimizer, steps: int = 5) -> list[list[np.ndarray]]:
    """A 3-2-1 tanh network fitted to X, Y; the parameters after every step."""
    tensor = lambda a: lib.tensor(a, dtype=lib.float64, requires_grad=True)
    params = [tensor(W), tensor(B), tensor(V)]
    optimizer = make_optimizer(lib, params)
    history = []
    for _ in range(steps):
        w, b, v = params
        hidden = (lib.tensor(X) @ w.t() + b).tanh()
        loss = ((hidden @ v.t() - lib.tensor(Y)) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append([p.detach().numpy().copy() for p in params])
    return history


OPTIMIZERS = {
    "SGD": lambda lib, ps: lib.optim.SGD(ps, lr=0.1),
    "SGD momentum": lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9),
    "SGD nesterov + weight decay": lambda lib, ps: lib.optim.SGD(
        ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01
    ),
    "Adam": lambda lib, ps: lib.optim.Adam(ps, lr=0.05),
    "Adam betas + weight decay": lambda lib, ps: lib.optim.Adam(
        ps, lr=0.05, betas=(0.8, 0.99), weight_decay=0.01
    ),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_matches_torch_step_for_step(name):
    torch = pytest.importorskip("torch")
    ours = _train(ng, OPTIMIZERS[name])
    theirs = _train(torch, OPTIMIZERS[name])
    for step, (mine, reference) in enumerate(zip(ours, theirs)):
        for p, q in zip(mine, reference):
            np.testing.assert_allclose(p, q, rtol=1e-10, atol=1e-12, err_msg=f"step {step + 1}")


def test_sgd_step_is_parameter_minus_lr_times_gradient():
    w = ng.tensor([1.0, -2.0], requires_grad=True)
    (w * w).sum().backward()  # gradient 2w = [2, -4]
    ng.optim.SGD([w], lr=0.25).step()
    assert w.tolist() == [0.5, -1.0]


def test_zero_grad_sets_gradients_to_none_or_zeroes_them_in_place():
    w = ng.tensor([1.0, 2.0], requires_grad=True)
    optimizer = ng.optim.SGD([w], lr=0.1)
    (w * 3).sum().backward()
    grad = w.grad
    optimizer.zero_grad(set_to_none=False)
    assert w.grad is grad and w.grad.tolist() == [0.0, 0.0]
    optimizer.zero_grad()
    assert w.grad is None


def test_an_optimizer_step_is_an_in_place_change_that_saved_tensors_notice():
    w = ng.tensor([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    loss.backward(retain_graph=True)
    ng.optim.SGD([w], lr=0.1).step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_optimizers_reject_what_they_cannot_optimise():
    w = ng.tensor([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="empty parameter list"):
        ng.optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        ng.optim.SGD([w * 2], lr=0.1)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        ng.optim.Adam([np.ones(2)])
    with pytest.raises(ValueError, match="Invalid learning rate"):
        ng.optim.SGD([w], lr=-1.0)


def test_linear_starts_within_pytorch_bound_and_registers_its_parameters():
    ng.manual_seed(0)
    layer = ng.nn.Linear(16, 4)
    bound = 1 / math.sqrt(16)
    assert layer.weight.shape == (4, 16) and layer.bias.shape == (4,)
    assert np.abs(layer.weight.detach().numpy()).max() <= bound
    assert np.abs(layer.bias.detach().numpy()).max() <= bound
    assert all(p.requires_grad and p.is_leaf for p in layer.parameters())
    model = ng.nn.Sequential(layer, ng.nn.Tanh(), ng.nn.Linear(4, 1, bias=False))
    assert [name for name, _ in model.named_parameters()] == ["0.weight", "0.bias", "2.weight"]
    assert len(model) == 3 and model[0] is layer
    assert model(ng.ones(5, 16)).shape == (5, 1)


def test_module_double_casts_parameters_in_place_so_an_existing_optimizer_still_works():
    model = ng.nn.Sequential(
        ng.nn.Linear(2, 3, dtype=ng.float32), ng.nn.Tanh(), ng.nn.Linear(3, 1, dtype=ng.float32)
    )
    weight = model[0].weight
    optimizer = ng.optim.SGD(model.parameters(), lr=0.1)
    assert model.double() is model
    assert model[0].weight is weight and weight.dtype == np.float64
    out = model(ng.ones(4, 2, dtype=ng.float64)).sum()
    assert out.dtype == np.float64
    out.backward()
    before = weight.detach().numpy().copy()
    optimizer.step()
    assert not np.array_equal(weight.detach().numpy(), before)
    assert model.float()[2].bias.dtype == np.float32
    assert model.to("cpu") is model


def test_train_and_eval_reach_every_submodule():
    model = ng.nn.Sequential(ng.nn.Linear(2, 2), ng.nn.Sequential(ng.nn.ReLU()))
    model.eval()
    assert not model.training and not model[1][0].training
    model.train()
    assert model[1][0].training


def test_assigning_to_a_module_before_init_says_to_call_super():
    class Broken(ng.nn.Module):
        def __init__(self):
            self.layer = ng.nn.Linear(1, 1)

    with pytest.raises(AttributeError, match=r"call super\(\).__init__\(\) first"):
        Broken()
