"""The checkers of lessons 3 and 5 on an eighth round of wrong answers: a hook that
clips, skips tiny gradients, doubles float32 only or flips the sign; a cell that
computes x.grad instead of predicting it; a gradf that reads ``_data``, runs the
static graph's autodiff or torch imported under other names, clamps x, casts x or
switches on its requires_grad; an optimizer whose settings differ below what two
steps show, a body replaced by a copy; a predict that caches its output, detaches a
graph built around model.forward, or changes the caller's gradients and parameters.
Each is refused with a hint naming the mistake and no answer; the right forms are
still accepted."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from checker_results import never_states, outcome, rejected_on_first_try
from lesson_answers_01_05 import finetune_with as finetune
from lesson_answers_01_05 import predict_inference_mode
from lesson_answers_01_05 import predict_ok as predict_lesson
from torch import tensor as torch_tensor_renamed
from torch.autograd import grad as torch_grad_renamed

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex

# -- 03-1 ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "hook, element",
    [
        (lambda grad: (grad * 2).clamp(-10, 10), "element [1]: 10 for 300"),
        (
            lambda grad: ng.where(grad.abs() > 1e-5, grad * 2, grad),
            "element [1]: 1.00000001e-07 for 1.00000001e-07",
        ),
        (
            lambda grad: grad * 2 if grad.dtype == ng.float32 else grad,
            "element [0, 0]: 0.1 for 0.1",
        ),
    ],
    ids=["clipped", "tiny-skipped", "float32-only"],
)
def test_03_1_a_hook_that_doubles_some_gradients_only_is_refused(hook, element, capsys):
    result = rejected_on_first_try(
        capsys, ex.check_double_hook, hook, says="doubled some gradients but not others"
    )
    assert element in result.message
    never_states(result, "grad * 2", "* 2")


@pytest.mark.parametrize(
    "hook",
    [lambda grad: grad.float() * 2, lambda grad: ng.tensor(grad.tolist()) * 2],
    ids=["float", "tolist"],
)
def test_03_1_a_hook_that_makes_float64_gradients_float32_is_refused(hook, capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_double_hook,
        hook,
        says="returns a tensor of dtype float32, and the gradient it gets is float64",
    )
    never_states(result, "grad * 2")


def test_03_1_a_hook_that_takes_the_length_of_its_gradient_is_refused(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_double_hook,
        lambda grad: grad * ng.full([len(grad)], 2.0),
        says="backward failed with your hook",
    )
    never_states(result, "grad * 2")


def test_03_1_a_flipped_sign_is_named(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_double_hook, lambda grad: -2 * grad, says="with the opposite sign"
    )
    assert "Doubling keeps the sign of each element" in result.message
    never_states(result, "grad * 2", "2 * grad")


@pytest.mark.parametrize(
    "hook",
    [lambda grad: grad * 2, lambda grad: grad + grad, lambda g: 2 * g, lambda g: g.mul(2.0)],
    ids=["times-two", "sum", "two-times", "mul"],
)
def test_03_1_right_hooks_are_accepted_on_every_dtype_and_shape(hook, capsys):
    assert outcome(capsys, ex.check_double_hook, hook).passed


# -- 03-2 ----------------------------------------------------------------------------------


def run_cell(source: str, namespace: dict) -> None:
    """Run ``source`` as a notebook cell: top-level code of its own module."""
    exec(compile(source, "<cell>", "exec"), namespace)


@pytest.fixture
def lesson_cells() -> dict:
    """The lesson's namespace after the cell that makes x and runs one backward."""
    namespace = {"ng": ng, "ex": ex}
    run_cell(
        "x = ng.tensor(3.0, requires_grad=True)\ny = x ** 2\ny.backward(retain_graph=True)\n",
        namespace,
    )
    return namespace


@pytest.mark.parametrize(
    "cell, runs",
    [
        (
            "x_grad_after_two = x.grad.item() + ng.autograd.grad(y, x, retain_graph=True)"
            "[0].item()\n",
            "autograd",
        ),
        (
            "import torch\nt = torch.tensor(3.0, requires_grad=True)\n"
            "(t ** 2).backward()\n(t ** 2).backward()\nx_grad_after_two = t.grad.item()\n",
            "a backward and torch",
        ),
    ],
    ids=["autograd-grad", "torch"],
)
def test_03_2_a_cell_that_computes_the_value_is_refused(cell, runs, lesson_cells, capsys):
    checking.TRIES.clear()
    run_cell(cell + "result = ex.check_accumulated_grad(x_grad_after_two)\n", lesson_cells)
    result = lesson_cells["result"]
    capsys.readouterr()
    assert result.status == "fail", result.message
    assert f"computes the value instead of predicting it: it runs {runs}" in result.message
    never_states(result, "12")


def test_03_2_a_typed_prediction_in_a_cell_with_comments_is_accepted(lesson_cells, capsys):
    run_cell(
        "# a second backward adds into .grad\nx_grad_after_two = 12.0\n"
        "result = ex.check_accumulated_grad(x_grad_after_two)\n",
        lesson_cells,
    )
    capsys.readouterr()
    assert lesson_cells["result"].passed


# -- 03-3 ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "typed",
    [
        ng.tensor([2, 0.4, 0.06]),
        ng.tensor([2, 0.4, 0.06], dtype=ng.float64),
        [ng.tensor(2.0), 0.4, 0.06],
    ],
    ids=["float32", "float64", "list-with-a-tensor"],
)
def test_03_3_numbers_typed_into_a_tensor_are_accepted(typed, capsys):
    assert outcome(capsys, ex.check_vector_backward, typed).passed


def test_03_3_wrong_numbers_typed_into_a_tensor_get_the_products_hint(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_vector_backward,
        ng.tensor([2.0, 0.5, 0.06]),
        says="gradient[i] * dy[i]/dx[i]",
    )
    assert "running backward" not in result.message
    never_states(result, "0.4")


def test_03_3_a_tensor_read_off_x_grad_is_still_refused(capsys):
    x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).backward(ng.tensor([1.0, 0.1, 0.01]))
    result = rejected_on_first_try(
        capsys, ex.check_vector_backward, x.grad, says="after running backward(gradient)"
    )
    never_states(result, "0.4", "0.06")


# -- 03-4 ----------------------------------------------------------------------------------


def gradf_on_internals(x):
    a = x._data
    return ng.tensor(2 * a * np.exp(a) + a**2 * np.exp(a), dtype=x.dtype) + 0 * x


def gradf_on_internals_by_getattr(x):
    a = getattr(x, "_data")
    return ng.tensor(2 * a * np.exp(a) + a**2 * np.exp(a), dtype=x.dtype) + 0 * x


@pytest.mark.parametrize("gradf", [gradf_on_internals, gradf_on_internals_by_getattr])
def test_03_4_reading_the_tensors_data_is_refused(gradf, capsys):
    result = rejected_on_first_try(
        capsys, ex.check_manual_gradient, gradf, says="your gradf reads `_data`"
    )
    never_states(result, "2 * x", "ng.exp(x) +")


def gradf_by_static_autodiff(x):
    with ns.Graph() as g:
        p = ns.placeholder("p", shape=tuple(x.shape), dtype="float64")
        (dy,) = ns.gradients(p**2 * ns.exp(p), [p])
        (out,) = g.compile([p], [dy])(x.detach().numpy())
    return ng.tensor(out, dtype=x.dtype) + 0 * x


def test_03_4_static_autodiff_is_refused(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_manual_gradient, gradf_by_static_autodiff, says="runs a static graph"
    )
    assert "ns.gradients, compile" in result.message
    never_states(result, "2 * x")


def gradf_by_torch_under_other_names(x):
    t = torch_tensor_renamed(x.detach().numpy(), requires_grad=True)
    (g,) = torch_grad_renamed((t**2 * t.exp()).sum(), t)
    return ng.tensor(g.numpy(), dtype=x.dtype) + 0 * x


def test_03_4_torch_imported_under_other_names_is_refused(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_manual_gradient, gradf_by_torch_under_other_names, says="uses torch"
    )
    assert "torch.tensor, torch.autograd.grad" in result.message
    never_states(result, "2 * x")


def gradf_clamping_x(x):
    e = ng.exp(x.clamp(-40, 40))
    return 2 * x * e + x**2 * e


def test_03_4_a_formula_right_near_zero_only_is_refused(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_manual_gradient, gradf_clamping_x, says="right near 0, but not at x = 60"
    )
    never_states(result, "2 * x", "ng.exp(x)")


def gradf_casting_to_float64(x):
    x = x.double()
    return 2 * x * ng.exp(x) + x**2 * ng.exp(x)


def test_03_4_a_result_whose_dtype_does_not_follow_x_is_refused(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_manual_gradient,
        gradf_casting_to_float64,
        says="given a float32 x, your gradf returns float64",
    )
    never_states(result, "2 * x", "ng.exp(x)")


def gradf_switching_on_requires_grad(x):
    x.requires_grad_()
    return 2 * x * ng.exp(x) + x**2 * ng.exp(x)


def test_03_4_switching_on_requires_grad_of_x_is_named_not_a_crash(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_manual_gradient,
        gradf_switching_on_requires_grad,
        says="your gradf changed x's requires_grad",
    )
    assert "RuntimeError" not in result.message
    never_states(result, "2 * x")


@pytest.mark.parametrize(
    "gradf",
    [
        lambda x: 2 * x * ng.exp(x) + x**2 * ng.exp(x),
        lambda x: (2 * x + x**2) * ng.exp(x),
        lambda x: (2 * x + x**2) * math.e**x,
        lambda x: (x.data**2 + 2 * x.data) * x.data.exp(),
        lambda x: x * (x + 2) * x.exp(),
    ],
    ids=["lesson", "factored", "math-e", "on-data", "method-exp"],
)
def test_03_4_formulas_are_still_accepted_far_from_zero_and_in_float32(gradf, capsys):
    assert outcome(capsys, ex.check_manual_gradient, gradf).passed


# -- 03-5 ----------------------------------------------------------------------------------


def derivatives_by_torch(f, x):
    import torch

    t = torch.tensor(x.item(), requires_grad=True, dtype=torch.float64)
    probe = f(ng.tensor(2.0, dtype=ng.float64)).item()
    g = (lambda t: t**3) if probe == 8.0 else (lambda t: t**2 * torch.exp(t))
    (a,) = torch.autograd.grad(g(t), t, create_graph=True)
    (b,) = torch.autograd.grad(a, t)
    return a.item(), b.item()


def test_03_5_the_torch_hint_names_the_idea_not_the_calls(capsys):
    ex.check_second_derivative(derivatives_by_torch)
    capsys.readouterr()
    result = outcome(capsys, ex.check_second_derivative, derivatives_by_torch)
    assert "second derivative is the derivative of the first" in result.message
    never_states(result, "twice", "hand the result to ng.autograd.grad", "create_graph")


# -- 05-2 ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "setting, says",
    [("weight_decay", "look at the weight decay"), ("dampening", "look at the dampening")],
)
def test_05_2_a_setting_off_below_what_two_steps_show_is_refused(setting, says, capsys):
    setup = finetune(lr=0.1, momentum=0.9, **{setting: 1e-9})
    result = rejected_on_first_try(capsys, ex.check_finetune_setup, setup, says=says)
    assert "settings are not the lesson's" in result.message
    never_states(result, "1e-09", "1e-9", "0.1", "0.9")


def finetune_copying_the_body(model, n_classes):
    model.body = copy.deepcopy(model.body)
    return finetune(lr=0.1, momentum=0.9)(model, n_classes)


def test_05_2_a_body_replaced_by_a_copy_is_refused(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_finetune_setup,
        finetune_copying_the_body,
        says="replaced the model's body",
    )
    never_states(result, "Linear(8", "SGD(")


@pytest.mark.parametrize(
    "setup",
    [
        finetune(lr=0.1, momentum=0.9),
        finetune(lr=1e-1, momentum=0.9, weight_decay=0, dampening=0.0, nesterov=False),
    ],
    ids=["lesson", "defaults-spelt-out"],
)
def test_05_2_right_forms_are_still_accepted(setup, capsys):
    assert outcome(capsys, ex.check_finetune_setup, setup).passed


# -- 05-3 ----------------------------------------------------------------------------------


def predict_cached_by_shape():
    cache: dict = {}

    def predict(model, x):
        key = tuple(x.shape)
        if key not in cache:
            with ng.no_grad():
                cache[key] = model(x)
        return cache[key]

    return predict


def predict_around_forward_then_detached(model, x):
    return model.fc(model.body(x)).detach()


def predict_zeroing_the_grads(model, x):
    model.zero_grad()
    with ng.no_grad():
        return model(x)


def predict_writing_into_the_parameters(model, x):
    with ng.no_grad():
        for p in model.parameters():
            p.mul_(1.0)
        return model(x)


def predict_clearing_x_grad(model, x):
    x.grad = None
    with ng.no_grad():
        return model(x)


@pytest.mark.parametrize(
    "wrong, says",
    [
        (predict_cached_by_shape(), "keeps state between calls (cache)"),
        (predict_around_forward_then_detached, "the model ran with recording on"),
        (predict_zeroing_the_grads, "their gradients cleared, as zero_grad() does"),
        (predict_writing_into_the_parameters, "their values written in place"),
        (predict_clearing_x_grad, "changed the caller's x (its .grad cleared)"),
    ],
    ids=["cache", "detached", "zero_grad", "in-place", "x-grad"],
)
def test_05_3_each_mistake_is_named(wrong, says, capsys):
    result = rejected_on_first_try(capsys, ex.check_inference, wrong, says=says)
    never_states(result, "with ng.no_grad()", "return model(x)")


@ng.no_grad()
def predict_decorated(model, x):
    return model(x)


@pytest.mark.parametrize(
    "right",
    [predict_lesson, predict_decorated, predict_inference_mode],
    ids=["lesson", "decorated", "inference-mode"],
)
def test_05_3_right_forms_are_still_accepted(right, capsys):
    assert outcome(capsys, ex.check_inference, right).passed


def gradf_by_static_forward_and_backward(x):
    """The static graph's own reverse sweep, no compile, run nor ns.gradients."""
    with ns.Graph() as g:
        p = ns.Variable(x.detach().numpy(), name="p")
        loss = ns.sum(p**2 * ns.exp(p))
    g.forward()
    g.backward(loss)
    return ng.tensor(p.grad, dtype=x.dtype) + 0 * x


def test_03_4_the_static_graphs_own_backward_sweep_is_refused(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_manual_gradient,
        gradf_by_static_forward_and_backward,
        says="runs a static graph",
    )
    never_states(result, "2 * x")
