"""The checkers of lessons 1-5 on a fifth round of wrong answers: a hook that stops
doubling after a few calls and an optimizer whose step is too long are refused; a
formula written on x.detach() is accepted; and each hint names the mistake made (a
.grad read before backward, a misspelt node name, a visited key two nodes share, a
nan's cause, a float32 cast, leftover state, a no_grad that never took effect)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from checker_results import never_states, outcome, refused, rejected_on_first_try
from lesson_answers_01_05 import finetune_with

import naivegraph as ng
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex
from naivegraph.lessons.checkers import lesson03

COURSE = Path(__file__).resolve().parents[2] / "naivegraph" / "course"


def hint_of(result) -> str:
    """The part of a rejection after "hint:", where the learner's own answer is not."""
    return result.message.split("hint:", 1)[1]


# -- 03-1: a hook that counts its calls -----------------------------------------------------


def counting_hook(doubles_for: int):
    calls = []

    def hook(grad):
        calls.append(1)
        return grad * 2 if len(calls) <= doubles_for else grad

    return hook


@pytest.mark.parametrize("doubles_for", [3, 5, 11])
def test_03_1_a_hook_that_stops_doubling_after_some_calls_is_refused(doubles_for, capsys):
    result = rejected_on_first_try(
        capsys, ex.check_double_hook, counting_hook(doubles_for), says="on every call"
    )
    assert f"call {doubles_for + 1} of your hook" in result.message
    never_states(result, "grad * 2", "2 * grad")


@pytest.mark.parametrize(
    "hook", [lambda g: g * 2, lambda g: g + g, lambda g: 2.0 * g, lambda g: g.mul(2)]
)
def test_03_1_a_hook_that_doubles_on_every_call_is_still_accepted(hook, capsys):
    assert outcome(capsys, ex.check_double_hook, hook).passed


# -- 05-2: the size of the optimizer's step ------------------------------------------------


@pytest.mark.parametrize(
    "settings, names",
    [
        ({"lr": 100, "momentum": 0.9}, "look at the learning rate you gave SGD"),
        ({"lr": 0.01, "momentum": 0.9}, "look at the learning rate you gave SGD"),
        ({"lr": 0.1, "momentum": 0.9, "weight_decay": 1e4}, "look at the weight decay"),
        ({"lr": 0.1}, "look at the momentum you gave SGD"),
        ({"lr": 0.1, "momentum": 0.9, "nesterov": True}, "look at the Nesterov flag"),
    ],
)
def test_05_2_a_step_of_another_size_than_the_lessons_is_refused(settings, names, capsys):
    result = rejected_on_first_try(
        capsys, ex.check_finetune_setup, finetune_with(**settings), says="the size of the step"
    )
    assert names in result.message
    never_states(result, "0.1", "0.9", "lr=", "momentum=")


def finetune_in_groups(model, n_classes):
    model.requires_grad_(False)
    model.fc = ng.nn.Linear(8, n_classes)
    return ng.optim.SGD([{"params": list(model.fc.parameters())}], lr=0.1, momentum=0.9)


@pytest.mark.parametrize("setup", [finetune_with(lr=0.1, momentum=0.9), finetune_in_groups])
def test_05_2_the_lessons_settings_are_still_accepted(setup, capsys):
    assert outcome(capsys, ex.check_finetune_setup, setup).passed


def test_05_2_the_exercise_states_the_settings_the_checker_compares_with():
    text = (COURSE / "src" / "05_excluding_subgraphs.py").read_text(encoding="utf-8")
    cell = text.split('# %% exercise="05-2"', 1)[1].split("### BEGIN SOLUTION", 1)[0]
    assert "(lr=0.1, momentum=0.9)" in cell
    assert ex.CHECKERS["05-2"].__module__.endswith("lesson05")
    from naivegraph.lessons.checkers import lesson05

    assert lesson05.LESSON_SGD["lr"] == 0.1 and lesson05.LESSON_SGD["momentum"] == 0.9


# -- 03-4: the formula on x.detach() --------------------------------------------------------


def gradf_on_detached(x):
    xd = x.detach()
    return 2 * xd * ng.exp(xd) + xd**2 * ng.exp(xd)


def gradf_on_data(x):
    return (x.data**2 + 2 * x.data) * x.data.exp()


@pytest.mark.parametrize("gradf", [gradf_on_detached, gradf_on_data])
def test_03_4_the_formula_written_on_a_detached_x_is_accepted(gradf, capsys):
    assert outcome(capsys, ex.check_manual_gradient, gradf).passed


def gradf_detached_then_numpy(x):
    v = x.detach().numpy()
    return ng.tensor((2 * v + v**2) * np.exp(v), dtype=x.dtype)


def test_03_4_numpy_on_a_detached_x_is_still_refused(capsys):
    rejected_on_first_try(
        capsys, ex.check_manual_gradient, gradf_detached_then_numpy, says="not numpy"
    )


# -- 02-3: a visited key two nodes can share -------------------------------------------------


def walk_keyed_by(key):
    def find_leaves(t):
        leaves, seen, stack = [], set(), [t.grad_fn]
        while stack:
            node = stack.pop()
            if node is None or key(node) in seen:
                continue
            seen.add(key(node))
            if node.name() == "AccumulateGrad":
                leaves.append(node.variable)
            stack.extend(fn for fn, _ in node.next_functions)
        return leaves

    return find_leaves


def walk_with_a_dict_of_names(t):
    leaves, seen, stack = [], {}, [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node.name() in seen:
            continue
        seen[node.name()] = node
        if node.name() == "AccumulateGrad":
            leaves.append(node.variable)
        stack.extend(fn for fn, _ in node.next_functions)
    return leaves


def walk_leaves_by_dtype(t):
    found, seen, stack = {}, set(), [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if node.name() == "AccumulateGrad":
            found[node.variable.dtype] = node.variable
        stack.extend(fn for fn, _ in node.next_functions)
    return list(found.values())


def walk_with_a_dict_of_nodes(t):  # right: a dict keyed by the node itself
    leaves, seen, stack = [], {}, [t.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen[node] = True
        if node.name() == "AccumulateGrad":
            leaves.append(node.variable)
        stack.extend(fn for fn, _ in node.next_functions)
    return leaves


@pytest.mark.parametrize(
    "walk",
    [
        walk_keyed_by(lambda node: node.name()),
        walk_keyed_by(lambda node: type(node).__name__),
        walk_with_a_dict_of_names,
        walk_leaves_by_dtype,
    ],
    ids=["name", "type name", "dict of names", "leaves by dtype"],
)
def test_02_3_a_visited_key_two_nodes_can_share_is_named(walk, capsys):
    result = rejected_on_first_try(
        capsys, ex.check_find_leaves, walk, says="by a key that two different ones can share"
    )
    assert "the node itself or by id(node)" in result.message
    never_states(result, "id(node) in seen", "seen.add", "keep walking until the stack")


def test_02_3_a_dict_keyed_by_the_node_itself_is_accepted(capsys):
    assert outcome(capsys, ex.check_find_leaves, walk_with_a_dict_of_nodes).passed


def test_02_3_a_walk_that_stops_at_the_direct_inputs_is_still_told_leaves_are_missing(capsys):
    def direct(t):
        return [
            n.variable
            for n, _ in t.grad_fn.next_functions
            if n is not None and n.name() == "AccumulateGrad"
        ]

    result = rejected_on_first_try(capsys, ex.check_find_leaves, direct, says="missing")
    never_states(result, "two different ones can share")


# -- 02-2: a name spelt almost right ----------------------------------------------------------


@pytest.mark.parametrize(
    "z_next, y_next",
    [
        (["MulBackward0 ", "AccumulateGrad"], ["AccumulateGrad", None]),
        ([" MulBackward0", "AccumulateGrad"], ["AccumulateGrad", None]),
        (["MulBackward0", "AccumulateGrad\n"], ["AccumulateGrad", None]),
    ],
)
def test_02_2_whitespace_around_a_name_is_named(z_next, y_next, capsys):
    result = rejected_on_first_try(
        capsys, ex.check_next_functions, z_next, y_next, says="has whitespace around it"
    )
    never_states(result, "the op's name alone", "same capitals")


def test_02_2_a_number_after_a_leafs_node_name_is_named(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_next_functions,
        ["MulBackward0", "AccumulateGrad0"],
        ["AccumulateGrad", None],
        says="its name carries no number at the end",
    )
    hint = hint_of(result)
    assert "'AccumulateGrad'" not in hint and '"AccumulateGrad"' not in hint
    never_states(result, "same capitals")


def test_02_2_the_right_names_are_still_accepted(capsys):
    got = outcome(
        capsys,
        ex.check_next_functions,
        ["MulBackward0", "AccumulateGrad"],
        ["AccumulateGrad", None],
    )
    assert got.passed


# -- 01-2 / 01-3: .grad read before backward ---------------------------------------------------


@pytest.mark.parametrize("grads", [(None, None, None), (None, 8, 10), (28, None, 10)])
def test_01_2_grads_left_none_are_told_backward_has_not_run(grads, capsys):
    result = rejected_on_first_try(
        capsys, ex.check_leaf_grads, *grads, says=".grad is None until a backward pass has run"
    )
    assert "you gave None" in result.message
    never_states(result, "nan", "28", "w2.grad = 8")


def test_01_3_a_non_leafs_grad_read_as_none_is_named(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_l1_grad, None, says="l1 is not a leaf: autograd keeps no .grad"
    )
    never_states(result, "nan", "7")


def test_01_2_and_01_3_right_numbers_are_still_accepted(capsys):
    assert outcome(capsys, ex.check_leaf_grads, 28, 8, 10).passed
    assert outcome(capsys, ex.check_l1_grad, 7.0).passed


# -- 03-2: an expression, a sign ---------------------------------------------------------------


def test_03_2_an_expression_of_x_grad_in_the_cell_is_named_as_such(capsys):
    x = ng.tensor(3.0, requires_grad=True)
    (x**2).backward()
    namespace = {"ex": ex, "x": x}
    checking.TRIES.clear()
    exec(compile("result = ex.check_accumulated_grad(x.grad * 2)", "<cell>", "exec"), namespace)
    result = refused(namespace["result"], "computes the value instead of predicting it")
    assert not re.search(r"(?<![\w.])12(?![\w.])", hint_of(result)), result.message


@pytest.mark.parametrize("wrong", [-12, -12.0, -6])
def test_03_2_a_negative_answer_is_told_to_check_the_sign(wrong, capsys):
    result = rejected_on_first_try(capsys, ex.check_accumulated_grad, wrong, says="check the sign")
    assert not re.search(r"(?<![\w.-])12(?![\w.])", hint_of(result)), result.message


def test_03_2_the_number_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_accumulated_grad, 12).passed


# -- 03-4: nan and sign hints that fit ---------------------------------------------------------

ANSWER_03_4 = ("2x e^x + x^2 e^x", "u' v + u v'", "2 * x * ng.exp(x)")


@pytest.mark.parametrize(
    "gradf, says",
    [
        (lambda x: (2 * x + x**2) * ng.exp(x) + 0 * ng.log(x), "it takes the log of 0"),
        (
            lambda x: (2 * x + x**2) * ng.exp(x) * (x - 1) / (x - 1),
            "nan at x = 1: it divides by zero there",
        ),
        (
            lambda x: x**2 * ng.exp(x) * (2 / x + 1),
            "nan at x = 0: you divide by zero there (0 / 0: a division by x",
        ),
        (
            lambda x: (2 * x + x**2) * ng.exp(x) + 0 * x**0.5,
            "nan at x = -0.3: it takes a root (or a fractional power) of a negative number",
        ),
        (
            lambda x: (2 * x + x**2) * ng.exp(x) + (ng.exp(100 * x) - ng.exp(100 * x)),
            "your formula gave nan at x = 12",
        ),
    ],
    ids=["log of 0", "0 / 0 at 1", "0 / 0 at 0", "root of a negative", "inf - inf"],
)
def test_03_4_a_nan_is_blamed_on_its_own_cause(gradf, says, capsys):
    result = rejected_on_first_try(capsys, ex.check_manual_gradient, gradf, says=says)
    never_states(result, *ANSWER_03_4)


def test_03_4_a_nan_without_a_division_is_not_blamed_on_one(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_manual_gradient,
        lambda x: (2 * x + x**2) * ng.exp(x) + 0 * ng.log(x),
        says="nan at x = 0",
    )
    never_states(result, "divide")


@pytest.mark.parametrize(
    "gradf, says",
    [
        (
            lambda x: x**2 * ng.exp(x) - 2 * x * ng.exp(x),
            "one of your two terms has the wrong sign",
        ),
        (
            lambda x: 2 * x * ng.exp(x) - x**2 * ng.exp(x),
            "one of your two terms has the wrong sign",
        ),
        (lambda x: -(x**2 + 2 * x) * ng.exp(x), "the opposite sign of the derivative everywhere"),
    ],
)
def test_03_4_a_sign_error_points_to_the_sign_without_the_formula(gradf, says, capsys):
    result = rejected_on_first_try(capsys, ex.check_manual_gradient, gradf, says=says)
    never_states(result, *ANSWER_03_4, "u = x^2", "v = e^x")


def test_03_4_an_unknown_wrong_formula_gets_no_formula_either(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_manual_gradient,
        lambda x: (2 * x + x**3) * ng.exp(x),
        says="differentiate it with the product rule",
    )
    never_states(result, *ANSWER_03_4, "u = x^2", "v = e^x")


# -- 03-5: float32, a cleared x.grad -----------------------------------------------------------


def derivatives_cast_to_float32(f, x):
    (first,) = ng.autograd.grad(f(x), [x], create_graph=True)
    (second,) = ng.autograd.grad(first, [x])
    return first.float(), second.float()


def derivatives_of_a_float32_x(f, x):
    (first,) = ng.autograd.grad(f(x.float()), [x], create_graph=True)
    (second,) = ng.autograd.grad(first, [x])
    return first, second


def derivatives_as_float32_numbers(f, x):
    (first,) = ng.autograd.grad(f(x), [x], create_graph=True)
    (second,) = ng.autograd.grad(first, [x])
    return np.float32(first.item()), np.float32(second.item())


@pytest.mark.parametrize(
    "derivatives",
    [derivatives_cast_to_float32, derivatives_of_a_float32_x, derivatives_as_float32_numbers],
)
def test_03_5_a_float32_cast_is_named_not_taken_for_a_finite_difference(derivatives, capsys):
    result = rejected_on_first_try(
        capsys, ex.check_second_derivative, derivatives, says="computed in float32"
    )
    assert "keep its dtype" in result.message
    never_states(result, "finite difference", "create_graph=True)")


def derivatives_clearing_x_grad(f, x):
    x.grad = None
    (first,) = ng.autograd.grad(f(x), [x], create_graph=True)
    (second,) = ng.autograd.grad(first, [x])
    return first, second


def derivatives_zeroing_x_grad(f, x):
    if x.grad is not None:
        x.grad.zero_()
    (first,) = ng.autograd.grad(f(x), [x], create_graph=True)
    (second,) = ng.autograd.grad(first, [x])
    return first, second


@pytest.mark.parametrize("clears", [derivatives_clearing_x_grad, derivatives_zeroing_x_grad])
def test_03_5_a_cleared_x_grad_is_named(clears, capsys):
    result = rejected_on_first_try(
        capsys, ex.check_second_derivative, clears, says="your function cleared x.grad"
    )
    never_states(result, "backward() writes into x.grad", "create_graph=True)")


def test_03_5_float64_derivatives_are_still_accepted(capsys):
    def derivatives(f, x):
        (first,) = ng.autograd.grad(f(x), [x], create_graph=True)
        (second,) = ng.autograd.grad(first, [x])
        return first, second

    assert outcome(capsys, ex.check_second_derivative, derivatives).passed


# -- 03: the text and the checker agree ------------------------------------------------------


def test_03_4_the_lesson_names_the_grid_the_checker_uses():
    text = (COURSE / "src" / "03_getting_gradients.py").read_text(encoding="utf-8")
    section = text.split("### Exercise 03-4", 1)[1].split('# %% exercise="03-4"', 1)[0]
    rows, cols = lesson03.MANUAL_POINTS.shape
    assert f"checker compares it with the exact derivative on a {rows}x{cols} grid" in " ".join(
        section.replace("#", " ").split()
    )
    assert (rows, cols) == (4, 4)


# -- 04-2: hints that point to the concept ----------------------------------------------------


@pytest.mark.parametrize(
    "predictions, snippet",
    [
        ((False, False, True), "(1)"),
        ((True, True, True), "(2)"),
        ((True, False, False), "(3)"),
    ],
)
def test_04_2_hints_point_to_what_is_kept_and_the_version_counter(predictions, snippet, capsys):
    result = rejected_on_first_try(
        capsys, ex.check_inplace_predictions, predictions, says=f"snippet {snippet}"
    )
    assert "version counter" in result.message or "kept" in result.message
    never_states(
        result,
        "changes them afterwards",
        "add_ then changes b",
        "so exp keeps its result",
        "is 1 whatever b holds",
        "(True, False, True)",
    )


def test_04_2_the_right_predictions_are_still_accepted(capsys):
    assert outcome(capsys, ex.check_inplace_predictions, (True, False, True)).passed


# -- 04-3: leftover state ------------------------------------------------------------------------


def reset_running_backward(a):
    with ng.no_grad():
        a.fill_(10.0)
    (a * a).sum().backward()
    return a


def reset_setting_a_grad(a):
    with ng.no_grad():
        a.fill_(10.0)
    a.grad = ng.ones(a.shape)
    return a


def reset_registering_a_hook(a):
    a.register_hook(lambda g: g * 0)
    with ng.no_grad():
        a.fill_(10.0)
    return a


@pytest.mark.parametrize("leaves", [reset_running_backward, reset_setting_a_grad])
def test_04_3_a_grad_left_on_the_leaf_is_named_as_leftover_state(leaves, capsys):
    result = rejected_on_first_try(
        capsys, ex.check_reset_leaf, leaves, says="already holds a .grad (leftover state"
    )
    never_states(result, "in place before the forward pass", "a.fill_(10", "with ng.no_grad()")


def test_04_3_a_hook_left_on_the_leaf_is_named_as_leftover_state(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_reset_leaf,
        reset_registering_a_hook,
        says="leaves a hook registered on `a` (leftover state",
    )
    never_states(result, "in place before the forward pass", "a.fill_(10", "with ng.no_grad()")


def test_04_3_a_hook_that_changes_nothing_is_still_leftover_state(capsys):
    def reset(a):
        a.register_hook(lambda g: g)
        with ng.no_grad():
            a.fill_(10.0)
        return a

    rejected_on_first_try(
        capsys, ex.check_reset_leaf, reset, says="leaves a hook registered on `a` (leftover state"
    )


# -- 05-2: a frozen bias, the old head reused, a cast model -------------------------------------


def finetune_freezing_the_bias(model, n_classes):
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Linear(8, n_classes)
    model.fc.bias.requires_grad = False
    return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)


def finetune_around_the_old_fc(model, n_classes):
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Sequential(model.fc, ng.nn.Linear(2, n_classes))
    return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)


def finetune_in_float64(model, n_classes):
    model.double()
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Linear(8, n_classes)
    return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)


@pytest.mark.parametrize(
    "setup, says",
    [
        (finetune_freezing_the_bias, "part of the new fc is frozen (bias does not require grad)"),
        (finetune_around_the_old_fc, "your new fc reuses the old last layer inside it"),
        (finetune_in_float64, "changed the dtype of the model's parameters to float64"),
    ],
)
def test_05_2_each_mistake_is_named(setup, says, capsys):
    result = rejected_on_first_try(capsys, ex.check_finetune_setup, setup, says=says)
    never_states(
        result, "Linear(8, n_classes)", "SGD(model.fc.parameters()", "you froze after creating it"
    )


# -- 05-3: a no_grad that never took effect ------------------------------------------------------


def predict_making_no_grad_only(model, x):
    ng.no_grad()
    return model(x)


def predict_after_the_block(model, x):
    with ng.no_grad():
        pass
    return model(x)


def predict_with_the_class(model, x):
    with ng.no_grad:
        return model(x)


def predict_with_torchs_no_grad(model, x):
    import torch

    with torch.no_grad():
        return model(x)


@pytest.mark.parametrize("predict", [predict_making_no_grad_only, predict_after_the_block])
def test_05_3_a_no_grad_not_entered_around_the_model_is_named(predict, capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_inference,
        predict,
        says="names no_grad, yet the model ran with recording on",
    )
    never_states(result, "with ng.no_grad():")


def test_05_3_no_grad_without_its_parentheses_is_named(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_inference, predict_with_the_class, says="the class no_grad itself"
    )
    never_states(result, "with ng.no_grad():", "raised TypeError")


def test_05_3_torchs_no_grad_is_named(capsys):
    pytest.importorskip("torch")
    result = rejected_on_first_try(
        capsys, ex.check_inference, predict_with_torchs_no_grad, says="that is torch's no_grad"
    )
    never_states(result, "with ng.no_grad():")


def test_05_3_the_right_forms_are_still_accepted(capsys):
    def predict(model, x):
        with ng.no_grad():
            return model(x)

    @ng.no_grad()
    def predict_decorated(model, x):
        return model(x)

    assert outcome(capsys, ex.check_inference, predict).passed
    assert outcome(capsys, ex.check_inference, predict_decorated).passed
