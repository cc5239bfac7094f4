"""The checkers of lessons 1 and 3 on one number typed inside a container: `w = 28,` (a
trailing comma makes a tuple), `[28]`, `np.array([28.0])`, `ng.tensor([28.0])` are
refused where one plain number is asked, with a hint that names the container and not
the value; the hints for 8 in 01-3 and 18 in 03-2 fit the mistakes that give them."""

from __future__ import annotations

import pytest
from checker_results import never_states, refused
from lesson_answers_01_05 import CHECK_01_1, CHECK_01_2, MODEL
from lesson_answers_06_07 import notebook_shell, run_in_notebook

CHECK_01_3 = "ex.check_l1_grad(l1_grad)"
X_3 = "x = ng.tensor(3.0, requires_grad=True)\ny = x ** 2\ny.backward(retain_graph=True)"
CHECK_03_2 = "\nex.check_accumulated_grad(x_grad_after_two)"
FORWARD = "l1_value, l2_value, l3_value, l4_value = 2.0, 5.0, 8.0, 40.0\n"


@pytest.fixture
def shell():
    yield from notebook_shell()


@pytest.mark.parametrize(
    ("loss", "inside"),
    [
        ("40,", "inside a tuple"),
        ("(40,)", "inside a tuple"),
        ("[40.0]", "inside a list"),
        ("np.array([40.0])", "inside an array"),
        ("ng.tensor([40.0])", "inside an array"),
    ],
)
def test_01_1_one_number_inside_a_container_is_refused(shell, loss, inside):
    cell = FORWARD + f"loss_value = {loss}\n" + CHECK_01_1
    result = refused(run_in_notebook(shell, MODEL, cell), f"yours is {inside}")
    assert "trailing comma" in result.message
    never_states(result, "40")


@pytest.mark.parametrize("w3", ["10,", "[10]", "ng.tensor([10.0])"])
def test_01_2_one_gradient_inside_a_container_is_refused(shell, w3):
    cell = f"w1_grad, w2_grad = 28.0, 8.0\nw3_grad = {w3}\n" + CHECK_01_2
    result = refused(run_in_notebook(shell, MODEL, cell), "ONE plain number is asked")
    never_states(result, "10", "28")


@pytest.mark.parametrize("w3", ["10", "10.0", "np.float64(10)", "ng.tensor(10.0)"])
def test_01_2_one_plain_number_or_a_0d_tensor_is_accepted(shell, w3):
    cell = f"w1_grad, w2_grad = 28.0, 8.0\nw3_grad = {w3}\n" + CHECK_01_2
    result = run_in_notebook(shell, MODEL, cell)
    assert result.passed, result.message


def test_01_3_a_trailing_comma_is_named(shell):
    result = refused(run_in_notebook(shell, MODEL, "l1_grad = 7,\n" + CHECK_01_3), "trailing comma")
    never_states(result, "7")


def test_01_3_both_paths_plus_a_stray_term_is_not_told_to_add_both_paths(shell):
    cell = "l1_grad = 0.25 * (8 + 5 * 4) + 1\n" + CHECK_01_3
    result = refused(run_in_notebook(shell, MODEL, cell), "a term that does not belong")
    never_states(result, "is 7", "= 7")


@pytest.mark.parametrize("answer", ["(12,)", "[12]", "np.array([12.0])"])
def test_03_2_one_number_inside_a_container_is_told_to_stand_alone(shell, answer):
    result = run_in_notebook(shell, X_3, f"x_grad_after_two = {answer}" + CHECK_03_2)
    refused(result, "not inside a list, tuple or array")
    assert "holds several" not in result.message


def test_03_2_eighteen_is_told_what_one_backward_adds(shell):
    result = run_in_notebook(shell, X_3, "x_grad_after_two = 18" + CHECK_03_2)
    refused(result, "each backward adds a gradient")
    never_states(result, "12", "= 6")
