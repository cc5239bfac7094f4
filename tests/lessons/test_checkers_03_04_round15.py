"""The checkers and cells of lessons 3 and 4 on a fifteenth round of answers: the
lesson's own cells that run 03-2's second backward and 04-2's three snippets, shown
only once the exercise is solved (run early, they show nothing and define nothing to
call); a gradf that gives nan from the log of a negative number; second derivatives
of an f computed with grad mode off; two numbers where x has three elements; a reset
that leaves a nan a nan.  Each wrong answer is refused with a hint naming the mistake
and no answer; the right forms, unusual ones too, are accepted."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest
from checker_results import never_states, refused, rejected_on_first_try
from lesson_answers_06_07 import notebook_shell, run_in_notebook

import naivegraph as ng
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex


@pytest.fixture
def shell():
    checking.SOLVED.clear()  # each test starts with no exercise solved, as a fresh kernel
    yield from notebook_shell()
    checking.SOLVED.clear()


def _cells(stem: str) -> list[str]:
    path = next(Path(ex.__file__).parent.parent.joinpath("course").glob(f"{stem}*.ipynb"))
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


def _the_cell(stem: str, marker: str) -> str:
    found = [c for c in _cells(stem) if marker in c]
    assert len(found) == 1
    return found[0]


# ------------------------------------------------- 04-2: the cell that runs the snippets

SNIPPETS_CELL = _the_cell("04_", "def one():")
BOOM = (
    "def boom(fn):\n    try:\n        fn()\n        return False\n"
    "    except RuntimeError:\n        return True\n"
)


def test_04_the_cell_that_runs_the_three_snippets_waits_for_exercise_04_2():
    assert SNIPPETS_CELL.startswith('if ex.solved("04-2"):')
    assert "solve exercise 04-2 first" in SNIPPETS_CELL


def test_04_2_the_snippets_cell_run_before_the_check_shows_nothing_and_defines_nothing(
    shell, capsys
):
    run_in_notebook(shell, SNIPPETS_CELL)
    printed = capsys.readouterr().out
    assert "(solve exercise 04-2 first: this cell runs the three snippets)" in printed
    assert "RuntimeError" not in printed and "fine" not in printed
    assert not {"one", "two", "three", "attempt"} & shell.user_ns.keys()


def test_04_2_calling_the_snippets_after_running_the_lessons_cell_early_finds_none(shell):
    run_in_notebook(shell, SNIPPETS_CELL, BOOM)
    result = shell.run_cell(
        "raises = tuple(boom(f) for f in (one, two, three))\nex.check_inplace_predictions(raises)",
        store_history=True,
    )
    assert isinstance(result.error_in_exec, NameError)
    assert "one" in str(result.error_in_exec)
    assert not ex.solved("04-2")


def test_04_2_the_lessons_snippets_typed_as_a_cell_of_ones_own_and_called_are_refused(shell):
    # the gated cell's body without its `if`: no longer the lesson's cell, so followed
    body = SNIPPETS_CELL.split("\nelse:")[0].split("\n", 1)[1]
    own = textwrap.dedent(body).split("\nfor label")[0]
    result = run_in_notebook(
        shell,
        own,
        BOOM,
        "raises = tuple(boom(f) for f in (one, two, three))\nex.check_inplace_predictions(raises)",
    )
    refused(result, "your cell runs the snippets instead of predicting what they do")
    never_states(result, "(True, False, True)", "True, False, True")


def test_04_2_ones_own_snippets_renamed_and_called_in_the_checked_cell_are_refused(shell):
    own = (
        "def uno():\n    a = ng.tensor([1.0, 3.0], requires_grad=True)\n"
        "    b = a + 2; loss = (b * b).sum(); b[0] = 1000.0; loss.backward()\n"
        "def dos():\n    a = ng.tensor([1.0, 3.0], requires_grad=True)\n"
        "    b = a + 2; loss = (b + 1).sum(); b[0] = 1000.0; loss.backward()\n"
        "def tres():\n    a = ng.tensor([1.0, 3.0], requires_grad=True)\n"
        "    b = a.exp(); loss = b.sum(); b.add_(1); loss.backward()\n"
    )
    result = run_in_notebook(
        shell,
        own,
        BOOM,
        "raises = tuple(boom(f) for f in (uno, dos, tres))\nex.check_inplace_predictions(raises)",
    )
    refused(result, "your cell runs the snippets instead of predicting what they do")
    never_states(result, "(True, False, True)")


def test_04_2_once_solved_the_lessons_cell_runs_the_three_snippets(shell, capsys):
    passed = run_in_notebook(
        shell, "raises = (True, False, True)\nex.check_inplace_predictions(raises)"
    )
    assert passed.status == "pass"
    capsys.readouterr()
    run_in_notebook(shell, SNIPPETS_CELL)
    printed = capsys.readouterr().out
    assert printed.count("RuntimeError:") == 2
    assert "(2) fine" in printed


@pytest.mark.parametrize(
    "answer",
    ["(True, False, True)", "[True, False, True]", "tuple(np.array([1, 0, 1], dtype=bool))"],
)
def test_04_2_predictions_typed_before_the_lessons_cell_ran_are_accepted(shell, answer):
    run_in_notebook(shell, SNIPPETS_CELL)
    result = run_in_notebook(shell, f"raises = {answer}\nex.check_inplace_predictions(raises)")
    assert result.status == "pass", result.message


# ------------------------------------------------ 03-2: the cell that runs backward again

SECOND_BACKWARD_CELL = _the_cell("03_", 'print("after two:", x.grad)')
ONE_BACKWARD = "x = ng.tensor(3.0, requires_grad=True)\ny = x ** 2\ny.backward(retain_graph=True)\n"


def test_03_the_cell_that_runs_the_second_backward_waits_for_exercise_03_2():
    assert SECOND_BACKWARD_CELL.startswith('if ex.solved("03-2"):')
    assert "solve exercise 03-2 first" in SECOND_BACKWARD_CELL


def test_03_2_the_second_backward_cell_run_before_the_check_leaves_x_grad_as_it_was(shell, capsys):
    run_in_notebook(shell, ONE_BACKWARD, SECOND_BACKWARD_CELL)
    printed = capsys.readouterr().out
    assert "(solve exercise 03-2 first: this cell runs the second backward)" in printed
    assert "after two:" not in printed
    assert float(shell.user_ns["x"].grad) == 6.0


def test_03_2_once_solved_the_cell_shows_the_second_backward_and_the_third_calls_error(
    shell, capsys
):
    passed = run_in_notebook(
        shell, ONE_BACKWARD, "x_grad_after_two = 12.0\nex.check_accumulated_grad(x_grad_after_two)"
    )
    assert passed.status == "pass"
    capsys.readouterr()
    run_in_notebook(shell, SECOND_BACKWARD_CELL)
    printed = capsys.readouterr().out
    assert "after two: tensor(12.)" in printed
    assert "RuntimeError:" in printed
    assert shell.user_ns["x"].grad is None


# ----------------------------------------------------- 03-4: nan from a log of a negative


def test_03_4_a_gradf_that_takes_the_log_of_a_negative_number_is_told_it_gives_nan(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_manual_gradient,
        lambda x: ng.exp(x + ng.log(x**2 + 2 * x)),
        says="gives nan at x = -0.3, where the derivative is a finite number",
    )
    assert "log of 0 or of a negative number" in result.message
    assert "typed as a number" not in result.message
    assert "last digits" not in result.message
    never_states(result, "-0.37", "2 * x", "2x e^x", "x ** 2")


def test_03_4_e_typed_as_a_number_still_gets_its_own_hint(capsys):
    rejected_on_first_try(
        capsys,
        ex.check_manual_gradient,
        lambda x: (2 * x + x**2) * 2.718281828**x,
        says="when e is typed as a number",
    )


@pytest.mark.parametrize(
    "gradf",
    [
        lambda x: 2 * x * ng.exp(x) + x**2 * ng.exp(x),
        lambda x: x * (x + 2) * ng.exp(x),
        lambda x: ng.exp(x) * ((x + 1) ** 2 - 1),
        lambda w: (w * w + 2 * w) * ng.exp(w),
    ],
)
def test_03_4_the_exact_derivative_in_any_arrangement_is_accepted(gradf):
    checking.TRIES.clear()
    assert ex.check_manual_gradient(gradf).status == "pass"


# ------------------------------------------------ 03-5: f computed with grad mode off

INTENDED_03_5 = (
    "(first,) = ng.autograd.grad(f(x), [x], create_graph=True)\n"
    "(second,) = ng.autograd.grad(first, [x])\n"
    "return first, second\n"
)


def _derivatives(body: str):
    space = {"ng": ng}
    exec("def derivatives(f, x):\n" + textwrap.indent(body, "    "), space)
    return space["derivatives"]


@pytest.mark.parametrize(
    "body",
    [
        "with ng.no_grad():\n" + textwrap.indent(INTENDED_03_5, "    "),
        "with ng.no_grad():\n    y = f(x)\n" + INTENDED_03_5.replace("f(x)", "y"),
        "with ng.inference_mode():\n    y = f(x)\n" + INTENDED_03_5.replace("f(x)", "y"),
        "@ng.no_grad()\ndef quiet(v):\n    return f(v)\n"
        + INTENDED_03_5.replace("f(x)", "quiet(x)"),
    ],
)
def test_03_5_f_computed_with_grad_mode_off_is_told_grad_mode_was_off(capsys, body):
    result = rejected_on_first_try(
        capsys,
        ex.check_second_derivative,
        _derivatives(body),
        says="grad mode was off (inside `with ng.no_grad():`, say) while f computed f(x)",
    )
    assert "a copy cut from the graph" not in result.message
    never_states(result, "27", "18", "create_graph=True")


def test_03_5_f_of_a_detached_copy_is_still_told_of_the_copy(capsys):
    rejected_on_first_try(
        capsys,
        ex.check_second_derivative,
        _derivatives(INTENDED_03_5.replace("f(x)", "f(x.detach())")),
        says="a copy cut from the graph",
    )


@pytest.mark.parametrize(
    "body",
    [
        INTENDED_03_5,
        "with ng.no_grad():\n    with ng.enable_grad():\n"
        + textwrap.indent(INTENDED_03_5, "        "),
        "with ng.no_grad():\n    print(f(x))\n" + INTENDED_03_5,
        "g = ng.func.grad(f)\nreturn g(x), ng.func.grad(g)(x)\n",
    ],
)
def test_03_5_derivatives_recorded_with_grad_mode_on_are_accepted(body):
    checking.TRIES.clear()
    assert ex.check_second_derivative(_derivatives(body)).status == "pass"


# ------------------------------------------------------- 03-3: two numbers for three


@pytest.mark.parametrize("answer", [[2, 0.4], (2.0, 0.4), np.array([0.4, 0.06])])
def test_03_3_two_numbers_are_told_x_has_three_elements(capsys, answer):
    result = rejected_on_first_try(
        capsys,
        ex.check_vector_backward,
        answer,
        says="you gave 2 numbers, but x has three elements",
    )
    never_states(result, "0.06]", "2.0, 0.4, 0.06", "[2, 0.4, 0.06")


@pytest.mark.parametrize(
    "answer",
    [
        [2.0, 0.4, 0.06],
        (2, 0.4, 0.06),
        np.array([2.0, 0.4, 0.06], dtype=np.float32),
        ng.tensor([2, 0.4, 0.06], dtype=ng.float64),
    ],
)
def test_03_3_three_numbers_in_any_container_are_accepted(answer):
    checking.TRIES.clear()
    assert ex.check_vector_backward(answer).status == "pass"


def test_03_3_a_vjp_taken_with_ng_func_vjp_is_refused(shell):
    result = run_in_notebook(
        shell,
        "xx = ng.tensor([1.0, 2.0, 3.0])\nv = ng.tensor([1, 0.1, 0.01])\n"
        "_, vjp_fn = ng.func.vjp(lambda t: t * t, xx)\n"
        "x_grad = vjp_fn(v)[0].tolist()\nex.check_vector_backward(x_grad)",
    )
    refused(result, "your cell computes x.grad instead of working it out: it uses ng.func.vjp")
    never_states(result, "0.06")


# --------------------------------------------------- 04-3: a nan left a nan by clamp_


def _reset(body: str):
    space = {"ng": ng}
    exec("def reset(a):\n" + textwrap.indent(body, "    "), space)
    return space["reset"]


@pytest.mark.parametrize("change", ["a.clamp_(10.0, 10.0)", "a.clamp_(min=10.0, max=10.0)"])
def test_04_3_a_clamp_that_leaves_the_nan_a_nan_is_told_only_that_element_missed(capsys, change):
    result = rejected_on_first_try(
        capsys,
        ex.check_reset_leaf,
        _reset(f"with ng.no_grad():\n    {change}\nreturn a\n"),
        says="the element that held nan still holds nan, not 10 (the ones that held inf "
        "and -inf did become 10)",
    )
    assert "keeps a nan a nan" in result.message
    assert "did not become 10" not in result.message
    never_states(result, "fill_", "no_grad()")


def test_04_3_a_reset_that_keeps_every_nan_and_inf_is_told_they_kept_their_values(capsys):
    result = rejected_on_first_try(
        capsys,
        ex.check_reset_leaf,
        _reset(
            "with ng.no_grad():\n    a.copy_(ng.where((a - a) == 0, ng.full_like(a, 10.0), a))\n"
            "return a\n"
        ),
        says="the elements that held nan, inf and -inf still hold those values, not 10: a "
        "value computed from `a` keeps nan and inf as they are",
    )
    never_states(result, "fill_", "no_grad()")


@pytest.mark.parametrize("change", ["a.mul_(0).add_(10.0)", "a.add_(10.0 - a)"])
def test_04_3_a_value_computed_from_a_is_told_every_non_finite_element_is_nan(capsys, change):
    result = rejected_on_first_try(
        capsys,
        ex.check_reset_leaf,
        _reset(f"with ng.no_grad():\n    {change}\nreturn a\n"),
        says="the elements that held nan, inf and -inf are nan now, not 10: a value computed "
        "from `a` (0 * inf, inf - inf) is nan there",
    )
    never_states(result, "fill_")


@pytest.mark.parametrize(
    "body",
    [
        "with ng.no_grad():\n    a.fill_(10.0)\nreturn a\n",
        "with ng.no_grad():\n    a.zero_().add_(10.0)\nreturn a\n",
        "with ng.no_grad():\n    a.copy_(ng.tensor(10.0))\nreturn a\n",
        "with ng.no_grad():\n    a[...] = 10\nreturn a\n",
        "a.detach().fill_(10)\nreturn a\n",
    ],
)
def test_04_3_every_element_set_to_10_is_accepted(body):
    checking.TRIES.clear()
    assert ex.check_reset_leaf(_reset(body)).status == "pass"


def test_03_3_the_function_vjp_returned_is_named_for_what_it_is(shell):
    result = run_in_notebook(
        shell,
        "xx = ng.tensor([1.0, 2.0, 3.0])\nv = ng.tensor([1, 0.1, 0.01])\n"
        "_, vjp_fn = ng.func.vjp(lambda t: t * t, xx)\n"
        "x_grad = vjp_fn(v)[0].tolist()\nex.check_vector_backward(x_grad)",
    )
    refused(result, "vjp_fn (that is the function ng.func.vjp returned)")
    assert "ng.func.vjp_fn" not in result.message
