"""Lesson 13's checkers (reading a plan, counting what the cleaning passes remove,
finding the branch a trace baked in) accept the right answer in its usual spellings,
reject each typical wrong one with a hint that does not give the answer, and never
raise."""

from __future__ import annotations

import numpy as np
import pytest
from checker_results import rejection_message

import naivegraph.static as ns
from naivegraph.lessons import exercises as ex


# -- 13-1: which value is freed first -----------------------------------------------------
@pytest.mark.parametrize(
    "answer", [("mul_1", 3), ("%mul_1", 3), ["mul_1", 3.0], (" mul_1", np.int64(3))]
)
def test_freed_first_accepts_the_name_with_or_without_percent(answer):
    assert ex.check_freed_first(answer)


@pytest.mark.parametrize(
    "answer, phrase",
    [
        (("mul_1", 2), "freed after the step that reads it LAST"),
        (("exp_1", 2), "never freed"),
        (("x", 1), "belongs to the caller"),
        (("w", 1), "belongs to the caller"),
        (("sin_1", 4), "another value dies earlier"),
        (("mul_2", 5), "another value dies earlier"),
        (("sum_1", 5), "fetched, never freed"),
        (("tanh_1", 3), "use a name from the listing"),
    ],
)
def test_freed_first_rejects_each_misreading_without_the_answer(answer, phrase):
    message = rejection_message(ex.check_freed_first(answer), 'mul_1", 3', "after step 3")
    assert phrase in message


def test_freed_first_blank_is_not_done_and_a_bare_name_is_refused():
    assert ex.check_freed_first(...).status == "todo"
    assert ex.check_freed_first(("mul_1", ...)).status == "todo"
    assert 'answer a pair ("name", step)' in rejection_message(ex.check_freed_first("mul_1"))


@pytest.mark.parametrize(
    "answer, phrase",
    [
        (("mul_1", 3.7), "whole number"),  # int() would read it as 3
        (("mul_1", np.float64(3.2)), "whole number"),
        (("mul_1", float("nan")), "whole number"),
        (("mul_1", True), "whole number"),  # int(True) is 1
        (("mul_1", "3"), "without quotes"),
        (("mul_1", None), "whole number"),
    ],
)
def test_freed_first_refuses_a_step_that_is_not_a_whole_number(answer, phrase):
    assert phrase in rejection_message(ex.check_freed_first(answer), "after step 3")


def test_freed_first_refuses_the_node_itself_for_its_name():
    with ns.Graph("freeing"):
        x = ns.placeholder("x", shape=(3,), dtype=np.float64)
        m = x * ns.Variable(np.array([1.0, 2.0, 3.0]), name="w")
    message = rejection_message(ex.check_freed_first((m, 3)), 'mul_1", 3')
    assert "the name is a node: write it as a string" in message


# -- 13-2: how many nodes the cleaning passes remove --------------------------------------
@pytest.mark.parametrize("removed", [6, 6.0, np.int64(6)])
def test_nodes_removed_accepts_six_in_any_number_type(removed):
    assert ex.check_nodes_removed(removed)


@pytest.mark.parametrize(
    "removed, phrase",
    [
        (7, "at y = -0.0 it gives +0.0"),
        (8, "at y = -0.0 it gives +0.0"),
        (8, "is fusion in your count"),  # ns.optimize with its default passes removes 8
        (3, "Nothing reads it any more"),
        (5, "the two exp"),
        (4, "the two exp"),
        (2, "go pass by pass"),
        (14, "a count from 0 to 13"),
        (-1, "is 0 or more"),
    ],
)
def test_nodes_removed_rejects_each_miscount_with_its_hint(removed, phrase):
    assert phrase in rejection_message(ex.check_nodes_removed(removed), "6")


def test_nodes_removed_refuses_what_is_not_a_count():
    assert ex.check_nodes_removed(...).status == "todo"
    assert "one number" in rejection_message(ex.check_nodes_removed("6"))
    assert "one number" in rejection_message(ex.check_nodes_removed(True))
    assert "whole number" in rejection_message(ex.check_nodes_removed(5.5))
    for endless in (float("nan"), float("inf"), -float("inf")):  # once raised inside int()
        assert "whole number" in rejection_message(ex.check_nodes_removed(endless))


# -- 13-3: the branch a trace baked in ---------------------------------------------------
@pytest.mark.parametrize("answer", [("tanh", 3), ("Tanh", 3), ("x.tanh()", 3), ["'tanh'", 3.0]])
def test_baked_branch_accepts_the_op_in_its_spellings(answer):
    assert ex.check_baked_branch(answer)


@pytest.mark.parametrize(
    "answer, phrase",
    [
        (("relu", 3), "which shape did the example have"),
        (("tanh", 5), "reuses its graph"),
        (("tanh", 4), "comes again later"),
        (("tanh", 1), "traces the function again"),
        (("tanh", 2), "every distinct shape"),
        (("tanh", 0), "count the distinct input shapes"),
    ],
)
def test_baked_branch_rejects_each_wrong_guess_without_the_answer(answer, phrase):
    assert phrase in rejection_message(ex.check_baked_branch(answer), "3 graphs", '("tanh"')


def test_baked_branch_refuses_another_op_and_a_bare_value():
    assert ex.check_baked_branch(...).status == "todo"
    assert '"tanh" or "relu"' in rejection_message(ex.check_baked_branch(("sigmoid", 3)))
    assert "answer a pair" in rejection_message(ex.check_baked_branch("tanh"))


@pytest.mark.parametrize("count", [3.7, 2.5, "3", True, float("nan")])
def test_baked_branch_wants_a_whole_number_of_graphs(count):
    assert "whole number" in rejection_message(ex.check_baked_branch(("tanh", count)), "3 graphs")


def test_baked_branch_accepts_a_numpy_whole_count():
    assert ex.check_baked_branch(("tanh", np.int64(3)))
    assert ex.check_baked_branch(("tanh", np.float32(3.0)))
