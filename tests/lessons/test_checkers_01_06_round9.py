"""The checkers of lessons 1 to 6 on a ninth round of answers: a cell that computes the
answer (autograd, torch, a .grad, .is_leaf or ._version read) instead of predicting it;
one number typed as a tensor; paths that multiply; a leaf walk that skips leaves holding
a .grad or never recognises a leaf; a reset that clears the caller's .grad; a predict
that skips the caller's forward hooks; an optimizer over the old head; gradients in
float32, of a detached first derivative, of a multiple of the loss or with respect to
the placeholder; a count as a Fraction, a list or a negative number.  Each wrong answer
is refused with a hint naming the mistake and no answer; the right forms are accepted."""

from __future__ import annotations

import re
import warnings
from fractions import Fraction

import numpy as np
import pytest
from checker_results import never_states, outcome, refused, rejected_on_first_try
from lesson_answers_01_05 import predict_ok as predict_by_call
from lesson_answers_01_05 import reset_detach as reset_by_detach
from lesson_answers_01_05 import reset_ellipsis as reset_by_ellipsis
from lesson_answers_01_05 import reset_no_grad as reset_by_no_grad

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.lessons import exercises as ex


def run_cell(source: str, namespace: dict | None = None):
    """Run ``source`` as a notebook cell (top-level code of its own module) and give
    back the ``result`` it assigns."""
    namespace = {"ng": ng, "ex": ex, "np": np} if namespace is None else namespace
    exec(compile(source, "<cell>", "exec"), namespace)
    return namespace["result"]


def never_says_number(result, *numbers: str) -> None:
    """The message names none of ``numbers`` (as numbers: 7, 7.0, -7; not 17 or 0.7)."""
    for n in numbers:
        pattern = rf"(?<![\w.]){re.escape(n)}(?:\.0+)?(?![\w]|\.\d)"
        assert not re.search(pattern, result.message), (n, result.message)


# -- lesson 1: a cell that computes instead of working out by hand ------------------------

LESSON_1_MODEL = (
    "w1 = ng.tensor(2.0, requires_grad=True)\n"
    "w2 = ng.tensor(3.0, requires_grad=True)\n"
    "w3 = ng.tensor(4.0, requires_grad=True)\n"
    "l1 = ng.ones(2, 2) * w1\n"
    "l2 = l1 + w2\n"
    "l3 = l1 * w3\n"
    "l4 = l2 * l3\n"
    "loss = l4.mean()\n"
)


@pytest.mark.parametrize(
    "cell, uses",
    [
        (
            "(g,) = ng.autograd.grad(loss, [l1], retain_graph=True)\n"
            "result = ex.check_l1_grad(float(g[0, 0]))\n",
            "autograd",
        ),
        (
            "import torch\n"
            "def by_torch():\n"
            "    t = torch.tensor(2.0, requires_grad=True)\n"
            "    u = (t + 3.0) * (t * 4.0) / 4\n"
            "    u.backward()\n"
            "    return float(t.grad)\n"
            "result = ex.check_l1_grad(by_torch())\n",
            "torch",
        ),
        ("result = ex.check_l1_grad(l1[0, 0].item() * 3.5)\n", ".item"),
    ],
    ids=["autograd-retain-graph", "torch-in-a-function", "item"],
)
def test_01_3_a_cell_that_computes_the_value_is_refused(cell, uses):
    namespace = {"ng": ng, "ex": ex}
    exec(compile(LESSON_1_MODEL, "<cell>", "exec"), namespace)
    result = refused(
        run_cell(cell, namespace), "your cell computes the value instead of working it out"
    )
    assert uses in result.message
    never_says_number(result, "7")


def test_01_2_a_cell_that_runs_autograd_for_the_weights_is_refused():
    namespace = {"ng": ng, "ex": ex}
    exec(compile(LESSON_1_MODEL, "<cell>", "exec"), namespace)
    cell = (
        "grads = ng.autograd.grad(loss, [w1, w2, w3], retain_graph=True)\n"
        "result = ex.check_leaf_grads(*(float(g) for g in grads))\n"
    )
    result = refused(run_cell(cell, namespace), "instead of working it out by hand")
    never_says_number(result, "28", "8", "10")


@pytest.mark.parametrize(
    "cell",
    [
        "l1_grad = 7.0\nresult = ex.check_l1_grad(l1_grad)\n",
        "# no backward, no autograd, no torch: on paper\nresult = ex.check_l1_grad(0.25 * 28)\n",
        'note = "worked out without backward"\nresult = ex.check_l1_grad(7)\n',
    ],
    ids=["typed", "comment-names-backward", "string-names-backward"],
)
def test_01_3_a_cell_that_types_the_value_is_accepted(cell):
    assert run_cell(cell).passed


@pytest.mark.parametrize("typed", [ng.tensor(7.0), np.array(7.0)], ids=["0-d", "array"])
def test_01_3_one_number_as_a_0d_tensor_or_array_is_accepted(typed, capsys):
    assert outcome(capsys, ex.check_l1_grad, typed).passed


@pytest.mark.parametrize("typed", [[7.0], (7.0,)], ids=["list", "tuple"])
def test_01_3_one_number_inside_a_list_or_tuple_is_told_to_stand_alone(typed, capsys):
    assert "type the number alone" in outcome(capsys, ex.check_l1_grad, typed).message


def test_01_1_and_01_2_one_number_typed_as_a_tensor_is_accepted(capsys):
    assert outcome(capsys, ex.check_forward_values, ng.tensor(2.0), 5, 8, 40, 40).passed
    assert outcome(
        capsys, ex.check_leaf_grads, ng.tensor(28.0), ng.tensor(8.0), ng.tensor(10.0)
    ).passed


def test_01_2_the_product_of_the_two_paths_is_told_paths_add(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_leaf_grads, 160, 8, 10, says="paths add, not multiply"
    )
    never_says_number(result, "28")


def test_01_3_the_product_of_the_two_paths_is_told_paths_add(capsys):
    result = rejected_on_first_try(capsys, ex.check_l1_grad, 40.0, says="paths add, not multiply")
    never_says_number(result, "7")


# -- lesson 2 -----------------------------------------------------------------------------

LESSON_2_TENSORS = (
    "a = ng.ones(3, 4, requires_grad=True)\nb = ng.zeros(3, 4)\nc = a + b\nd = c.sum()\n"
)


@pytest.mark.parametrize(
    "call, uses",
    [
        (
            "result = ex.check_leaf_flags(tuple(t.is_leaf for t in (a, b, c, d)), "
            "(True, False, True, True))\n",
            ".is_leaf",
        ),
        (
            "result = ex.check_leaf_flags((True, True, False, False), "
            "[t.requires_grad for t in (a, b, c, d)])\n",
            ".requires_grad",
        ),
    ],
    ids=["is_leaf", "requires_grad"],
)
def test_02_1_a_cell_that_reads_the_flags_off_the_tensors_is_refused(call, uses):
    result = refused(run_cell(LESSON_2_TENSORS + call), "reads the answer off the tensors")
    assert uses in result.message
    never_states(result, "(True, True, False, False)", "(True, False, True, True)")


def test_02_1_a_cell_that_types_the_flags_is_accepted():
    cell = "result = ex.check_leaf_flags((True, True, False, False), (True, False, True, True))\n"
    assert run_cell(cell).passed


def walk(keep):
    """The lesson's walk, keeping a leaf node only when ``keep(node)`` says so."""

    def find_leaves(t):
        leaves, seen, stack = [], set(), [t.grad_fn]
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if keep(node):
                leaves.append(node.variable)
            stack.extend(fn for fn, _ in node.next_functions)
        return leaves

    return find_leaves


def test_02_3_a_walk_that_skips_leaves_holding_a_grad_is_refused(capsys):
    skipping = walk(lambda n: n.name() == "AccumulateGrad" and n.variable.grad is None)
    result = rejected_on_first_try(
        capsys, ex.check_find_leaves, skipping, says="skips the leaf that already holds a .grad"
    )
    never_states(result, "id(node) in seen", "seen.add")


def test_02_3_a_leaf_test_that_never_matches_is_named(capsys):
    typo = walk(lambda n: n.name() == "AccumulateGrad0")
    result = rejected_on_first_try(capsys, ex.check_find_leaves, typo, says="never matched")
    assert "keep walking" not in result.message


def recursive_find_leaves(t):
    leaves, seen = [], set()

    def visit(node):
        if node is None or id(node) in seen:
            return
        seen.add(id(node))
        if hasattr(node, "variable"):
            leaves.append(node.variable)
        for fn, _ in node.next_functions:
            visit(fn)

    visit(t.grad_fn)
    return leaves


@pytest.mark.parametrize(
    "find_leaves",
    [walk(lambda n: n.name() == "AccumulateGrad"), recursive_find_leaves],
    ids=["lesson", "recursive-by-variable"],
)
def test_02_3_right_walks_are_still_accepted(find_leaves, capsys):
    assert outcome(capsys, ex.check_find_leaves, find_leaves).passed


# -- lesson 3 -----------------------------------------------------------------------------


def test_03_1_tiny_gradients_are_shown_as_they_are(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_double_hook,
        lambda grad: ng.where(grad.abs() > 1e-5, grad * 2, grad),
        says="doubled some gradients but not others",
    )
    assert "1.0e-07" in result.message
    never_states(result, "grad * 2", "2 * grad")


def test_03_3_four_numbers_are_told_x_has_three_elements(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_vector_backward, [2, 0.4, 0.06, 0], says="x has three elements"
    )
    never_states(result, "0.4,", "0.06")


def test_03_3_a_non_leaf_in_the_notebook_raises_no_warning_while_checking():
    cell = (
        "x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
        "y = x * x\n"
        "result = ex.check_vector_backward(ng.tensor([2.0, 0.4, 0.07]))\n"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = run_cell(cell)
    assert result.status == "fail"


def gradf_in_float32(x):
    x32 = x.float()
    return ((2 * x32 + x32**2) * ng.exp(x32)).to(x.dtype)


def test_03_4_a_gradient_computed_in_float32_and_cast_back_is_named(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_manual_gradient, gradf_in_float32, says="computes in float32 inside"
    )
    assert "finite difference" not in result.message
    never_states(result, "2 * x * ng.exp(x) +", "2x e^x + x^2 e^x")


def gradf_by_finite_difference(x):
    h = 1e-5
    return ((x + h) ** 2 * ng.exp(x + h) - (x - h) ** 2 * ng.exp(x - h)) / (2 * h)


def test_03_4_a_finite_difference_is_still_told_it_is_an_estimate(capsys):
    rejected_on_first_try(
        capsys, ex.check_manual_gradient, gradf_by_finite_difference, says="finite difference"
    )


def test_03_4_the_product_rule_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_manual_gradient, lambda x: (2 * x + x**2) * ng.exp(x)).passed


def derivatives_of_a_detached_first(f, x):
    (first,) = ng.autograd.grad(f(x), [x], create_graph=True)
    first = first.detach()
    (second,) = ng.autograd.grad(first * x, [x])
    return first, second


def test_03_5_a_first_derivative_cut_from_the_graph_is_named(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_second_derivative,
        derivatives_of_a_detached_first,
        says="cut from the graph",
    )
    never_says_number(result, "-9")
    never_states(result, "grad(first, [x])\n")


# -- lesson 4 -----------------------------------------------------------------------------


def test_04_1_a_cell_that_reads_the_versions_is_refused():
    cell = (
        "a = ng.tensor([1.0, 3.0], requires_grad=True)\n"
        "b = a + 2\nseen = [b._version]\n"
        "with ng.no_grad():\n    b[0] = 1000\n"
        "seen.append(b._version)\n"
        "result = ex.check_versions(seen + [2, 2, 3])\n"
    )
    result = refused(run_cell(cell), "reads the versions off the tensors")
    never_states(result, "[0, 1, 2, 2, 3]")


def test_04_1_a_cell_that_types_the_versions_is_accepted():
    assert run_cell("result = ex.check_versions([0, 1, 2, 2, 3])\n").passed


def reset_then_clear_grad(a):
    with ng.no_grad():
        a.fill_(10.0)
    a.grad = None
    return a


def reset_then_zero_grad(a):
    with ng.no_grad():
        a.fill_(10.0)
    if a.grad is not None:
        a.grad.zero_()
    return a


@pytest.mark.parametrize(
    "reset", [reset_then_clear_grad, reset_then_zero_grad], ids=["grad-none", "grad-zero"]
)
def test_04_3_a_reset_that_changes_the_callers_grad_is_refused(reset, capsys):
    result = rejected_on_first_try(capsys, ex.check_reset_leaf, reset, says="Leave its .grad alone")
    never_states(result, "a.fill_(10", "no_grad():\n")


@pytest.mark.parametrize(
    "reset",
    [reset_by_no_grad, reset_by_detach, reset_by_ellipsis],
    ids=["no-grad", "detach", "ellipsis"],
)
def test_04_3_right_resets_are_still_accepted(reset, capsys):
    assert outcome(capsys, ex.check_reset_leaf, reset).passed


# -- lesson 5 -----------------------------------------------------------------------------


def test_05_1_a_cell_that_reads_requires_grad_is_refused():
    cell = (
        "x, y = ng.randn(5, 5), ng.randn(5, 5)\n"
        "z = ng.randn(5, 5, requires_grad=True)\n"
        "a = x + y\n"
        "result = ex.check_requires_grad_flow(a.requires_grad, True, False)\n"
    )
    result = refused(run_cell(cell), "reads the flags off the tensors")
    never_states(result, "(False, True, False)")


def test_05_1_a_cell_that_types_the_flags_is_accepted():
    assert run_cell("result = ex.check_requires_grad_flow(False, True, False)\n").passed


def setup_with_optimizer_first(model, n_classes):
    for p in model.parameters():
        p.requires_grad = False
    opt = ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)
    model.fc = ng.nn.Linear(8, n_classes)
    return opt


def test_05_2_an_optimizer_built_before_the_head_was_replaced_is_named(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_finetune_setup, setup_with_optimizer_first, says="OLD fc's parameters"
    )
    never_states(result, "Linear(8, n_classes)", "SGD(model.fc.parameters()")


def predict_by_forward(model, x):
    with ng.no_grad():
        return model.forward(x)


def predict_by_layers(model, x):
    with ng.no_grad():
        return model.fc(model.body(x))


@pytest.mark.parametrize(
    "predict", [predict_by_forward, predict_by_layers], ids=["forward", "layers"]
)
def test_05_3_a_predict_that_skips_the_callers_forward_hooks_is_refused(predict, capsys):
    result = rejected_on_first_try(
        capsys, ex.check_inference, predict, says="hooks run only through __call__"
    )
    never_states(result, "with ng.no_grad():\n")


def test_05_3_calling_the_model_is_still_accepted(capsys):
    assert outcome(capsys, ex.check_inference, predict_by_call).passed


# -- lesson 6 -----------------------------------------------------------------------------


@pytest.mark.parametrize("count", [Fraction(2), 2, np.int64(2), 2.0], ids=str)
def test_06_3_a_whole_count_in_any_number_type_is_accepted(count, capsys):
    assert outcome(capsys, ex.check_memory_plan, count).passed


@pytest.mark.parametrize("count", [[2], (2,), np.array([2])], ids=["list", "tuple", "array"])
def test_06_3_a_count_in_brackets_is_told_to_give_one_number(count, capsys):
    result = rejected_on_first_try(capsys, ex.check_memory_plan, count, says="give ONE number")
    never_says_number(result, "2")


def test_06_3_a_negative_count_is_told_a_count_is_not_negative(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_memory_plan, -2, says="a count cannot be negative"
    )
    never_says_number(result, "2")


def test_06_3_a_fraction_that_is_not_whole_is_still_refused(capsys):
    rejected_on_first_try(capsys, ex.check_memory_plan, Fraction(5, 2), says="fractional part")


def compiled_step(mode: str):
    g = ns.Graph()
    with g:
        x = ns.placeholder("input", shape=(2, 2))
        w1, w2, w3 = (ns.Variable(v, name=n) for v, n in ((2.0, "w1"), (3.0, "w2"), (4.0, "w3")))
        l1 = x * w1
        loss = ns.mean((l1 + w2) * (l1 * w3))
        if mode == "doubled":
            grads = ns.gradients(2 * loss, [w1, w2, w3])
        elif mode == "by-x":
            grads = ns.gradients(loss, [w1, w2, x])
        else:
            grads = ns.gradients(loss, [w1, w2, w3])
    return g.compile([x], [loss, *grads]), g


@pytest.mark.parametrize(
    "mode, says",
    [("doubled", "a multiple of the loss"), ("by-x", "with respect to another node")],
)
def test_06_2_gradients_of_another_quantity_are_named(mode, says, capsys):
    f, g = compiled_step(mode)
    result = rejected_on_first_try(capsys, ex.check_compiled_step, f, g, says=says)
    assert "fetch the loss node" not in result.message
    never_states(result, "[40", "28, 8", "g.compile(", "outputs=[loss")


def test_06_2_the_lesson_step_is_still_accepted(capsys):
    f, g = compiled_step("right")
    assert outcome(capsys, ex.check_compiled_step, f, g).passed


def test_06_1_a_loss_that_forgets_a_variable_is_told_which(capsys):
    g2 = ns.Graph()
    with g2:
        x = ns.placeholder("input", shape=(2, 2))
        w1, w2 = ns.Variable(2.0, name="w1"), ns.Variable(3.0, name="w2")
        ns.Variable(4.0, name="w3")
        l1 = x * w1
        loss = ns.mean((l1 + w2) * l1)
    result = rejected_on_first_try(
        capsys, ex.check_static_model, g2, x, loss, says="does not read the Variable w3"
    )
    never_states(result, "112")
