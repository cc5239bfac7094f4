"""The checkers of lessons 3 and 5 on a sixth round of wrong answers: a hook that keeps
state between calls, is right for small gradients only, or nearly doubles; an answer
read off x.grad after a backward run in the cell, or nudged in its 5th digit; a gradf
that goes through numpy or torch and adds 0 * x; a derivatives that changes the
caller's x, calls torch or leaves grad mode off; an optimizer with a small weight
decay, a head that is not one linear layer; a predict that changes x, leaves a hook on
the model or casts or nudges the output.  Each is refused with a hint naming the
mistake and no answer; the right forms are still accepted."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from checker_results import never_states, outcome, rejected_on_first_try
from lesson_answers_01_05 import derivatives, predict_inference_mode

import naivegraph as ng
from naivegraph.lessons import exercises as ex

# -- 03-1 ----------------------------------------------------------------------------------

CALLS = [0]
LOG: list = []


def hook_counting_in_a_global_list(grad):
    CALLS[0] += 1
    return grad * 2 if CALLS[0] <= 10_000 else grad


def hook_counting_in_a_closure():
    count = 0

    def hook(grad):
        nonlocal count
        count += 1
        return grad * 2 if count <= 10_000 else grad

    return hook


class CountingHook:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, grad):
        self.calls += 1
        return grad * 2


@pytest.mark.parametrize(
    "hook, name",
    [
        (hook_counting_in_a_global_list, "CALLS"),
        (hook_counting_in_a_closure(), "count"),
        (CountingHook(), "calls"),
    ],
)
def test_03_1_a_hook_that_keeps_state_between_calls_is_refused(hook, name, capsys):
    result = rejected_on_first_try(
        capsys, ex.check_double_hook, hook, says="keeps state between calls"
    )
    assert f"({name})" in result.message
    never_states(result, "grad * 2", "2 * grad")


def test_03_1_a_hook_counting_past_twelve_calls_is_refused(capsys):
    calls = []

    def hook(grad):
        calls.append(1)
        return grad * 2 if len(calls) <= 12 else grad

    result = rejected_on_first_try(capsys, ex.check_double_hook, hook, says="on every call")
    assert "call 13 of your hook" in result.message


def test_03_1_a_hook_right_for_small_gradients_only_is_refused(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_double_hook,
        lambda grad: grad * 2 if grad.numel() <= 4 else grad,
        says="whatever its size or shape",
    )
    assert "(10, 10, 10)" in result.message
    never_states(result, "grad * 2")


@pytest.mark.parametrize(
    "hook", [lambda grad: grad * 2.00001, lambda grad: grad * 2 + 1e-7], ids=["scaled", "added"]
)
def test_03_1_a_hook_that_nearly_doubles_is_refused(hook, capsys):
    result = rejected_on_first_try(capsys, ex.check_double_hook, hook, says="not exactly")
    never_states(result, "grad * 2", "* 2")


def test_03_1_a_cast_to_float64_is_named_not_the_shape(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_double_hook,
        lambda grad: (grad * 2).double(),
        says="returns a tensor of dtype float64",
    )
    assert "same shape" not in result.message


def test_03_1_the_second_hint_gives_no_code(capsys):
    ex.check_double_hook(lambda grad: grad + 2)
    capsys.readouterr()
    result = outcome(capsys, ex.check_double_hook, lambda grad: grad + 2)
    assert "build the new one from the one it receives" in result.message
    never_states(result, "times a number", "grad * 2", "* 2")


def hook_clone_then_mul(grad):
    g = grad.clone()
    g.mul_(2)
    return g


def hook_logging_tensors(grad):
    LOG.append(grad.detach())
    return grad * 2


@pytest.mark.parametrize(
    "hook",
    [lambda grad: grad + grad, hook_clone_then_mul, lambda g: 2 * g, hook_logging_tensors],
    ids=["sum", "clone-mul_", "lambda", "logs-tensors"],
)
def test_03_1_right_hooks_are_still_accepted(hook, capsys):
    assert outcome(capsys, ex.check_double_hook, hook).passed


# -- 03-2 and 03-3 -------------------------------------------------------------------------


def test_03_2_a_value_read_after_a_backward_in_the_cell_is_refused(capsys):
    global x  # the lesson's x, as the notebook's cells leave it
    x = ng.tensor(3.0, requires_grad=True)
    y = x**2
    y.backward(retain_graph=True)
    y.backward()  # the learner's cell
    try:
        result = ex.check_accumulated_grad(x.grad.item())  # called from the cell itself
        assert result.status == "fail" and "PREDICT" in result.message, result.message
        assert "Re-run the cells above" in result.message
        never_states(result, "12")
    finally:
        del x


def test_03_2_a_prediction_with_the_lessons_x_after_one_backward_is_accepted(capsys):
    global x
    x = ng.tensor(3.0, requires_grad=True)
    (x**2).backward()
    try:
        assert ex.check_accumulated_grad(12.0).passed  # called from the cell itself
    finally:
        del x


def test_03_2_a_nudged_number_is_refused(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_accumulated_grad, 12.0001, says="compares exactly"
    )
    assert "12" not in result.message.split("hint:", 1)[1]


@pytest.mark.parametrize("right", [12, 12.0, np.float32(12.0)])
def test_03_2_the_exact_number_is_still_accepted(right, capsys):
    assert outcome(capsys, ex.check_accumulated_grad, right).passed


def test_03_3_a_nudged_product_is_refused(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_vector_backward, [2, 0.4, 0.060001], says="compares exactly"
    )
    hint = result.message.split("hint:", 1)[1]
    assert "0.06" not in hint and "0.4" not in hint


@pytest.mark.parametrize(
    "right",
    [[2, 0.4, 0.06], [1 * 2, 0.1 * 4, 0.01 * 6], np.float32([2, 0.4, 0.06]).tolist()],
)
def test_03_3_exact_and_float32_products_are_still_accepted(right, capsys):
    assert outcome(capsys, ex.check_vector_backward, right).passed


# -- 03-4 ----------------------------------------------------------------------------------


def gradf_by_torch_plus_zero(x):
    t = torch.tensor(x.detach().numpy(), requires_grad=True)
    (g,) = torch.autograd.grad((t**2 * torch.exp(t)).sum(), t)
    return ng.tensor(g.numpy(), dtype=x.dtype) + 0 * x


def gradf_by_numpy_plus_zero(x):
    a = x.detach().numpy()
    return ng.tensor(2 * a * np.exp(a) + a**2 * np.exp(a), dtype=x.dtype) + 0 * x


def gradf_by_tolist_plus_zero(x):
    a = np.array(x.detach().tolist())
    return ng.tensor(2 * a * np.exp(a) + a**2 * np.exp(a), dtype=x.dtype) + 0 * x


def test_03_4_torch_behind_zero_times_x_is_refused(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_manual_gradient, gradf_by_torch_plus_zero, says="uses torch"
    )
    never_states(result, "2 * x", "ng.exp(x)")


@pytest.mark.parametrize("gradf", [gradf_by_numpy_plus_zero, gradf_by_tolist_plus_zero])
def test_03_4_numpy_behind_zero_times_x_is_refused(gradf, capsys):
    result = rejected_on_first_try(
        capsys, ex.check_manual_gradient, gradf, says="into numpy values or Python numbers"
    )
    never_states(result, "2 * x", "ng.exp(x)")


def gradf_cast_to_float32(x):
    x = x.float()
    return 2 * x * ng.exp(x) + x**2 * ng.exp(x)


def test_03_4_a_float32_cast_is_named_not_a_finite_difference(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_manual_gradient, gradf_cast_to_float32, says="returns float32"
    )
    never_states(result, "finite difference", "2 * x")


def test_03_4_a_truncated_e_is_named_not_a_finite_difference(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_manual_gradient,
        lambda x: (2 * x + x**2) * 2.718281828**x,
        says="truncated after some digits",
    )
    never_states(result, "finite difference", "2x e^x")


def f(x):
    return x**2 * ng.exp(x)


def gradf_under_no_grad(x):
    with ng.no_grad():
        return 2 * x * ng.exp(x) + x**2 * ng.exp(x)


@pytest.mark.parametrize(
    "gradf",
    [
        lambda x: 2 * x * ng.exp(x) + x**2 * ng.exp(x),
        lambda x: (x.data**2 + 2 * x.data) * x.data.exp(),
        lambda x: 2 * x.detach() * ng.exp(x.detach()) + x.detach() ** 2 * ng.exp(x.detach()),
        lambda x: f(x) + 2 * x * ng.exp(x),
        gradf_under_no_grad,
    ],
    ids=["formula", "on-data", "on-detach", "f-plus", "no_grad"],
)
def test_03_4_formulas_are_still_accepted(gradf, capsys):
    assert outcome(capsys, ex.check_manual_gradient, gradf).passed


# -- 03-5 ----------------------------------------------------------------------------------


def derivatives_freezing_x(f, x):
    result = derivatives(f, x)
    x.requires_grad_(False)
    return result


def derivatives_hooking_x(f, x):
    x.register_hook(lambda g: g * 1)
    return derivatives(f, x)


@pytest.mark.parametrize(
    "wrong, says",
    [
        (derivatives_freezing_x, "requires_grad switched to False"),
        (derivatives_hooking_x, "a hook registered on it"),
    ],
)
def test_03_5_a_change_to_the_callers_x_is_refused(wrong, says, capsys):
    result = rejected_on_first_try(capsys, ex.check_second_derivative, wrong, says=says)
    assert "changed the caller's x" in result.message
    never_states(result, "create_graph=True")


def derivatives_by_torch(f, x):
    t = torch.tensor(x.item(), requires_grad=True, dtype=torch.float64)
    probe = f(ng.tensor(2.0, dtype=ng.float64)).item()
    g = (lambda t: t**3) if probe == 8.0 else (lambda t: t**2 * torch.exp(t))
    (a,) = torch.autograd.grad(g(t), t, create_graph=True)
    (b,) = torch.autograd.grad(a, t)
    return a.item(), b.item()


def test_03_5_torch_is_refused(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_second_derivative, derivatives_by_torch, says="uses torch"
    )
    never_states(result, "create_graph=True")


def derivatives_leaving_grad_mode_off(f, x):
    result = derivatives(f, x)
    ng.set_grad_enabled(False)
    return result


def test_03_5_grad_mode_left_off_is_named_not_a_copy_cut_from_the_graph(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_second_derivative,
        derivatives_leaving_grad_mode_off,
        says="left grad mode off",
    )
    never_states(result, "x.data", "detach", "create_graph=True")


def derivatives_restoring_x_grad(f, x):
    saved, x.grad = x.grad, None
    f(x).backward(create_graph=True)
    first = x.grad
    x.grad = None
    first.backward()
    second = x.grad
    x.grad = saved
    return first.detach(), second


def derivatives_forward_over_reverse(f, x):
    (first,) = ng.autograd.grad(f(x), [x], create_graph=True)
    _, second = ng.func.jvp(ng.func.grad(f), (x.detach(),), (ng.ones_like(x),))
    return first, second


def derivatives_by_func_grad(f, x):
    return ng.func.grad(f)(x), ng.func.grad(ng.func.grad(f))(x)


def derivatives_as_floats(f, x):
    first, second = derivatives(f, x)
    return first.item(), second.item()


@pytest.mark.parametrize(
    "right",
    [
        derivatives,
        derivatives_restoring_x_grad,
        derivatives_forward_over_reverse,
        derivatives_by_func_grad,
        derivatives_as_floats,
    ],
)
def test_03_5_right_forms_are_still_accepted(right, capsys):
    assert outcome(capsys, ex.check_second_derivative, right).passed


# -- 05-2 ----------------------------------------------------------------------------------


def finetune(head, **settings):
    settings = settings or {"lr": 0.1, "momentum": 0.9}

    def setup(model, n_classes):
        for p in model.parameters():
            p.requires_grad = False
        model.fc = head(n_classes)
        return ng.optim.SGD(model.fc.parameters(), **settings)

    return setup


def linear(n):
    return ng.nn.Linear(8, n)


def test_05_2_a_small_weight_decay_is_refused(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_finetune_setup,
        finetune(linear, lr=0.1, momentum=0.9, weight_decay=1e-4),
        says="look at the weight decay",
    )
    never_states(result, "0.1", "0.9", "1e-4", "0.0001")


@pytest.mark.parametrize(
    "head, says",
    [
        (lambda n: ng.nn.Sequential(ng.nn.Linear(8, n), ng.nn.Softmax(dim=1)), "double softmax"),
        (lambda n: ng.nn.Sequential(ng.nn.Linear(8, n), ng.nn.ReLU()), "adds ReLU"),
        (lambda n: ng.nn.Linear(8, n, bias=False), "has no bias"),
    ],
    ids=["softmax", "relu", "no-bias"],
)
def test_05_2_a_head_that_is_not_one_linear_layer_is_refused(head, says, capsys):
    result = rejected_on_first_try(capsys, ex.check_finetune_setup, finetune(head), says=says)
    never_states(result, "Linear(8", "n_classes)")


def zero_initialised(n):
    layer = ng.nn.Linear(8, n)
    with ng.no_grad():
        layer.weight.zero_()
        layer.bias.zero_()
    return layer


def finetune_listing_the_head(model, n_classes):
    model.requires_grad_(False)
    model.fc = ng.nn.Linear(8, n_classes)
    return ng.optim.SGD([model.fc.weight, model.fc.bias], lr=0.1, momentum=0.9)


@pytest.mark.parametrize(
    "setup",
    [
        finetune(linear),
        finetune(zero_initialised),
        finetune_listing_the_head,
        finetune(linear, lr=0.1, momentum=0.9, dampening=0.0, weight_decay=0.0, nesterov=False),
    ],
    ids=["lesson", "zero-init", "list", "defaults-spelt-out"],
)
def test_05_2_right_forms_are_still_accepted(setup, capsys):
    assert outcome(capsys, ex.check_finetune_setup, setup).passed


# -- 05-3 ----------------------------------------------------------------------------------


def predict_freezing_x(model, x):
    x.requires_grad_(False)
    with ng.no_grad():
        return model(x)


def predict_as_float64(model, x):
    with ng.no_grad():
        return model(x).double()


def predict_nudged(model, x):
    with ng.no_grad():
        return model(x) + 1e-7


def predict_hooking_the_model(model, x):
    model.register_forward_hook(lambda module, inputs, output: None)
    with ng.no_grad():
        return model(x)


@pytest.mark.parametrize(
    "wrong, says",
    [
        (predict_freezing_x, "changed the caller's x (requires_grad switched to False)"),
        (predict_as_float64, "your output is float64"),
        (predict_nudged, "near the model's but not equal to it"),
        (predict_hooking_the_model, "registers a hook on the model"),
    ],
)
def test_05_3_each_mistake_is_named(wrong, says, capsys):
    result = rejected_on_first_try(capsys, ex.check_inference, wrong, says=says)
    never_states(result, "with ng.no_grad()", "return model(x)")


@ng.no_grad()
def predict_decorated(model, x):
    return model(x)


def predict_grad_enabled_false(model, x):
    with ng.set_grad_enabled(False):
        return model(x)


@pytest.mark.parametrize(
    "right", [predict_decorated, predict_grad_enabled_false, predict_inference_mode]
)
def test_05_3_right_forms_are_still_accepted(right, capsys):
    assert outcome(capsys, ex.check_inference, right).passed
