"""The checkers of lessons 1 to 4 on a thirteenth round of answers: a value read off the
model in an EARLIER cell and named in the checking cell; a helper or lambda whose
parameters share a name with the lesson's tensors (a, b), which is arithmetic of the
learner's own; a number wrapped as a tensor that requires grad; several numbers where
03-2 asks for one; a flag read off a tensor's .grad in 02-1; the lesson's own cell that
counts the versions of 04-1, shown only once the exercise is solved.  Each wrong answer
is refused with a hint naming the mistake and no answer; the right forms are accepted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checker_results import never_states, refused, rejected_on_first_try
from lesson_answers_01_05 import CHECK_01_1, CHECK_01_2, MODEL
from lesson_answers_06_07 import notebook_shell, run_in_notebook

import naivegraph as ng
from naivegraph.lessons import exercises as ex

LESSON_1_TENSORS_A_B = "a = ng.tensor(1.0, requires_grad=True)\nb = a * 2\n"


@pytest.fixture
def shell():
    yield from notebook_shell()


def test_01_1_values_read_off_the_model_in_a_cell_above_are_refused(shell):
    result = run_in_notebook(
        shell,
        MODEL,
        "vals = [float(t[0, 0]) for t in (l1, l2, l3, l4)] + [float(loss)]",
        "l1_value, l2_value, l3_value, l4_value, loss_value = vals\n" + CHECK_01_1,
    )
    refused(result, "in a cell above that set `vals`")
    assert "l1, l2, l3, l4, loss" in result.message
    never_states(result, "40")


def test_01_1_a_result_of_the_model_kept_under_a_name_of_the_cell_names_the_model(shell):
    cell = (
        "l1_value, l2_value, l3_value, l4_value = 2.0, 5.0, 8.0, 40.0\n"
        "loss_value = loss.mean()\n" + CHECK_01_1
    )
    result = refused(run_in_notebook(shell, MODEL, cell), "the model's tensors (loss)")
    never_states(result, "loss_value", "40")


@pytest.mark.parametrize(
    "answer",
    [
        "def two_paths(a, b):\n    return a + b\nw1_grad = 4 * 0.25 * two_paths(8 * 1, 5 * 4)\n"
        "w2_grad, w3_grad = 8.0, 10.0\n",
        "prod = lambda a, b: a * b\nw1_grad = 4 * prod(0.25, 28)\nw2_grad, w3_grad = 8.0, 10.0\n",
        "w1_grad = [a * 4 for a in [7]][0]\nw2_grad, w3_grad = 8.0, 10.0\n",
    ],
)
def test_01_2_a_helper_whose_parameters_are_named_like_the_lessons_tensors_is_accepted(
    shell, answer
):
    result = run_in_notebook(shell, MODEL + LESSON_1_TENSORS_A_B, answer + CHECK_01_2)
    assert result.passed, result.message


def test_01_2_a_typed_number_wrapped_in_a_tensor_that_requires_grad_is_accepted(shell):
    cell = (
        "w1_grad = ng.tensor(28.0, requires_grad=True)\nw2_grad, w3_grad = 8.0, 10.0\n" + CHECK_01_2
    )
    result = run_in_notebook(shell, MODEL, cell)
    assert result.passed, result.message


X_3 = "x = ng.tensor(3.0, requires_grad=True)\ny = x ** 2\ny.backward(retain_graph=True)"
CHECK_03_2 = "\nex.check_accumulated_grad(x_grad_after_two)"


@pytest.mark.parametrize(
    "answer", ["[12, 12]", "(12, 12, 12)", "np.array([12, 12])", "[12]", "[[12]]", "(6, 12)"]
)
def test_03_2_several_numbers_where_one_is_asked_are_told_so(shell, answer):
    result = run_in_notebook(shell, X_3, f"x_grad_after_two = {answer}" + CHECK_03_2)
    refused(result, "give one number")
    assert "12" not in result.message.split("hint:")[1], result.message


@pytest.mark.parametrize("answer", ["12", "12.0", "np.float64(12)", "6 + 6"])
def test_03_2_one_number_is_accepted(shell, answer):
    result = run_in_notebook(shell, X_3, f"x_grad_after_two = {answer}" + CHECK_03_2)
    assert result.passed, result.message


def test_02_1_a_flag_read_off_a_tensors_grad_is_refused(shell):
    setup = "a = ng.tensor(2.0, requires_grad=True)\nb = ng.tensor(3.0)\nc = a * b\nd = c + 1\n"
    cell = (
        "is_leaf = (a.grad is None, True, False, False)\n"
        "requires_grad = (True, False, True, True)\n"
        "ex.check_leaf_flags(is_leaf, requires_grad)"
    )
    result = refused(run_in_notebook(shell, setup, cell), "it uses .grad")
    never_states(result, "(True, True, False, False)")


def _cells(stem: str) -> list[str]:
    path = next(Path(ex.__file__).parent.parent.joinpath("course").glob(f"{stem}*.ipynb"))
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


def test_04_the_cell_that_counts_the_versions_waits_for_exercise_04_1():
    counting = [c for c in _cells("04_") if "seen.append(b._version)" in c]
    assert len(counting) == 1
    assert counting[0].startswith('if ex.solved("04-1"):')
    assert "solve exercise 04-1 first" in counting[0]


def test_03_2_hint_for_one_number_keeps_the_accumulation_question(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_accumulated_grad, [12.0, 12.0], says="give one number"
    )
    assert "AccumulateGrad" not in result.message.split("hint:")[1].split(".")[0]


def _walk_every_path(t):
    """Right leaves, each once, but no visited set: every path is walked."""
    found = []

    def go(fn):
        if fn is None:
            return
        if fn.name() == "AccumulateGrad":
            if not any(fn.variable is seen for seen in found):
                found.append(fn.variable)
            return
        for inner, _ in fn.next_functions:
            go(inner)

    go(t.grad_fn)
    return found


def test_02_3_a_walk_that_walks_every_path_is_refused(capsys):
    result = rejected_on_first_try(
        capsys, ex.check_find_leaves, _walk_every_path, says="it walks every path"
    )
    assert "12 diamonds" in result.message
    never_states(result, "seen = set()", "id(fn)")


@pytest.mark.parametrize(
    "earlier, reuse, where",
    [
        ("l4.sum().item() / 4", "Out[{n}]", "whose output is `_{n}`"),
        ("float(loss)", "_oh[{n}]", "whose output is `_{n}`"),
        ("class M:\n    v = float(loss)\n", "M.v", "that set `M`"),
        ("import functools\npk = functools.partial(float, loss)\n", "pk()", "that set `pk`"),
    ],
)
def test_01_1_a_loss_read_off_above_and_reused_in_any_form_is_refused(shell, earlier, reuse, where):
    run_in_notebook(shell, MODEL)
    n = shell.execution_count
    cell = (
        "l1_value, l2_value, l3_value, l4_value = 2.0, 5.0, 8.0, 40.0\n"
        f"loss_value = {reuse.format(n=n)}\n" + CHECK_01_1
    )
    result = refused(
        run_in_notebook(shell, earlier, cell), f"(in a cell above {where.format(n=n)})"
    )
    never_states(result, "40")


@pytest.mark.parametrize(
    "earlier",
    [
        ("def keep():\n    global kept\n    kept = float(loss)\n", "keep()"),
        ("kept_list = []", "kept_list.append(float(loss))"),
    ],
)
def test_01_1_a_loss_kept_by_a_function_or_appended_above_is_refused(shell, earlier):
    run_in_notebook(shell, MODEL)
    name = "kept" if "global" in earlier[0] else "kept_list[0]"
    cell = (
        "l1_value, l2_value, l3_value, l4_value = 2.0, 5.0, 8.0, 40.0\n"
        f"loss_value = {name}\n" + CHECK_01_1
    )
    result = refused(run_in_notebook(shell, *earlier, cell), "(in a cell above that set `kept")
    assert "loss" in result.message


def test_01_3_a_gradient_tensor_a_function_kept_above_is_refused(shell):
    run_in_notebook(shell, MODEL)
    result = refused(
        run_in_notebook(
            shell,
            "def keep():\n    global jj\n    jj = ng.autograd.grad(loss, [l1], retain_graph=True)[0]\n",
            "keep()",
            "l1_grad = float(jj[0, 0])\nex.check_l1_grad(l1_grad)",
        ),
        "(in a cell above that set `jj`)",
    )
    never_states(result, "7")
