"""What every checker shares: a registered answer, hints that grow stronger and never give
the answer, "not done yet" for a blank, and results the notebook and CLI can read back.
Each lesson's checkers have their own file: test_checkers_01_05.py, ..._06_09.py, ..._10_12.py."""

from __future__ import annotations

import nbformat
import numpy as np
import pytest

import naivegraph as ng
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex


def test_every_checker_has_an_answer_to_reveal(capsys):
    missing = sorted(set(ex.CHECKERS) - set(ex.ANSWERS))
    assert not missing, f"checkers without answer=: {missing}"
    ex.reveal("01-2")
    assert capsys.readouterr().out.startswith("answer [01-2]: ")


def test_reveal_of_an_unknown_exercise_lists_the_known_ones():
    with pytest.raises(KeyError, match="no exercise '99-9'; the exercises are: 01-1"):
        ex.reveal("99-9")


def test_hints_grow_stronger_with_each_wrong_try_and_then_point_to_reveal():
    first = checking.not_yet("00-1", ["the mistake.", "stronger."], gave="3")
    second = checking.not_yet("00-1", ["the mistake.", "stronger."], gave="3")
    assert first.message == "✗ not yet [00-1]: you gave 3; hint: the mistake."
    # the retry still names the mistake it made, then adds the stronger hint
    assert second.message == (
        "✗ not yet [00-1]: you gave 3; hint: the mistake. Stronger. "
        'Still stuck? ex.reveal("00-1") shows the answer.'
    )


@pytest.mark.parametrize("code", ["ng.autograd.grad returns it.", "requires_grad spreads.",
                                  "jacfwd makes one pass per input.", "`x` is a leaf.",
                                  "x.grad accumulates.", "grad_fn stays.", "c is used twice."])
def test_a_stronger_hint_that_starts_with_code_keeps_the_codes_spelling(code):
    checking.not_yet("00-3", ["the mistake.", code])
    second = checking.not_yet("00-3", ["the mistake.", code])
    assert f"the mistake. {code} Still stuck?" in second.message


def test_a_stronger_hint_that_starts_with_a_word_is_capitalised():
    checking.not_yet("00-4", ["the mistake.", "look. again."])
    assert "the mistake. Look. again." in checking.not_yet("00-4", ["the mistake.",
                                                                    "look. again."]).message


def test_solved_follows_the_latest_check():
    checking.correct("00-2", "fine.")
    assert ex.solved("00-2")
    checking.not_yet("00-2", ["no."])
    assert not ex.solved("00-2")


def test_an_empty_answer_is_never_close_to_a_number():
    assert not checking.close([], 7.0)
    assert checking.close([7.0], 7.0)


def test_a_function_left_with_a_placeholder_is_recognised():
    def unfinished(x):
        for _ in range(2):
            ...
        return x

    assert checking.has_placeholder(unfinished)
    assert not checking.has_placeholder(lambda x: x[0])
    assert not checking.has_placeholder(lambda x: x[..., 0])  # an index, not a blank


def test_a_crash_is_reported_at_the_learners_line_not_inside_numpy():
    def learner(x):
        return np.broadcast_to(x, (3, 2))

    ok, result = checking.call_answer("00-3", learner, np.ones(4))
    assert not ok and "your code raised ValueError at line" in result.message
    line = learner.__code__.co_firstlineno + 1
    assert f"at line {line} of your code" in result.message


def test_function_left_with_an_empty_body_is_not_done_yet():
    def empty(*args): ...

    for exercise in (
        "02-3",
        "03-1",
        "03-4",
        "03-5",
        "04-3",
        "05-2",
        "05-3",
        "07-1",
        "09-1",
        "09-2",
    ):
        result = ex.CHECKERS[exercise](empty)
        assert result.status == "todo", (exercise, result.message)


def test_result_repr_and_html():
    result = ex.check_l1_grad(7.0)
    assert repr(result) == result.message
    assert "✓ correct" in result._repr_html_()


def test_parse_results_reads_printed_lines():
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [
        nbformat.v4.new_output(
            "stream", name="stdout", text="hello\n✗ not yet [03-2]: you gave 6; hint: h\n"
        )
    ]
    nb.cells.append(cell)
    (outcome,) = ex.parse_results(nb)
    assert outcome.exercise == "03-2" and outcome.status == "fail"
    ng.set_grad_enabled(True)
