"""`naivegraph lessons --student DIR`: the course for a class, without its solutions."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import nbformat
import pytest

from naivegraph import course
from naivegraph.cli import main
from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex
from naivegraph.lessons.exercises import run_notebook


@pytest.fixture(scope="module")
def student(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("class") / "student"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["lessons", "--student", str(folder)]) == 0
    assert printed.getvalue() == (
        f"wrote 13 student lessons into {folder} (no solutions, reveal off)\n"
    )
    return folder


# Every lesson shows no answer outside its exercise cells, so a class gets all of them.
GIVEN = course.notebooks()


@pytest.fixture
def answers_on():
    yield
    checking.REVEAL["off"] = None


def _exercises(nb) -> dict[str, dict]:
    return {
        c.metadata["naivegraph"]["exercise"]: c
        for c in nb.cells
        if "exercise" in c.get("metadata", {}).get("naivegraph", {})
    }


def test_student_copy_has_every_lesson_that_shows_no_answer_and_the_pictures(student):
    assert [p.name for p in course.notebooks(student)] == [p.name for p in GIVEN]
    assert (student / "figures" / "animation_dynamic_step.gif").is_file()


def test_no_lesson_shows_an_answer_outside_its_exercise_cells():
    from naivegraph.lessons.workcopy import shown_answers

    shown = {p.stem: shown_answers(_student_version(p)) for p in course.notebooks()}
    assert shown == {p.stem: [] for p in course.notebooks()}


def _showing_the_answer_of_08_4(path: Path, student_version=None) -> dict:
    """Lesson 8's student version plus a cell that prints the answer of 08-4 again, as
    its reference cells once did."""
    from naivegraph.lessons import workcopy

    nb = (student_version or workcopy.student_version)(path)
    if path.stem == "08_build_your_own":
        answer = next(c for c in nb["cells"] if "def free_graph" in "".join(c["source"]))
        ours = nbformat.read(str(path), as_version=4)
        solution = next(c for c in ours.cells if c.get("id") == answer["id"])
        shown = solution.metadata["naivegraph"]["solution"]  # 08-4's answer, in a new cell
        nb["cells"].append(nbformat.v4.new_code_cell(shown))
    return nb


def test_a_lesson_whose_cells_show_answers_is_found_and_left_out(tmp_path, monkeypatch):
    from naivegraph.lessons import workcopy

    path = course.FOLDER / "08_build_your_own.ipynb"
    assert workcopy.shown_answers(_showing_the_answer_of_08_4(path)) == ["08-4"]
    original = workcopy.student_version
    monkeypatch.setattr(
        workcopy, "student_version", lambda p: _showing_the_answer_of_08_4(p, original)
    )
    done = workcopy.write_student_copy(tmp_path / "class")
    assert done == [
        f"wrote 12 student lessons into {tmp_path / 'class'} (no solutions, reveal off)",
        "left out 08_build_your_own: its reference cells show the answers of 08-4",
    ]
    assert not (tmp_path / "class" / path.name).exists()


@pytest.mark.parametrize("lesson", GIVEN, ids=lambda p: p.stem[:2])
def test_student_copy_holds_no_solution_anywhere(student, lesson):
    ours = nbformat.read(str(lesson), as_version=4)
    text = (student / lesson.name).read_text(encoding="utf-8")
    theirs = nbformat.reads(text, as_version=4)
    assert "solution" not in text
    for exercise, cell in _exercises(ours).items():
        learner_lines = set(cell.source.splitlines())
        answer_lines = [
            line
            for line in cell.metadata["naivegraph"]["solution"].splitlines()
            if line not in learner_lines and len(line.strip()) > 6
        ]
        assert answer_lines, exercise  # the solution differs from the blanks
        for line in answer_lines:
            assert json.dumps(line)[1:-1] not in text, (exercise, line)
        assert json.dumps(checking.ANSWERS[exercise])[1:-1] not in text, exercise
        assert _exercises(theirs)[exercise].source == cell.source  # the blanks stay


def test_student_copy_keeps_lessons_already_there(student, capsys):
    (student / "02_leaf_tensors.ipynb").write_text("a student's work")
    try:
        assert main(["lessons", "--student", str(student)]) == 0
        assert "kept the 13 lessons already there" in capsys.readouterr().out
        assert (student / "02_leaf_tensors.ipynb").read_text() == "a student's work"
    finally:
        text = json.dumps(_student_version(course.FOLDER / "02_leaf_tensors.ipynb"), indent=1)
        (student / "02_leaf_tensors.ipynb").write_text(text + "\n", encoding="utf-8")


def _student_version(path: Path) -> dict:
    from naivegraph.lessons.workcopy import student_version

    return student_version(path)


def test_in_a_student_copy_reveal_says_the_teacher_turned_it_off(student, tmp_path, answers_on):
    nb = nbformat.read(str(student / "01_computational_graphs.ipynb"), as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell('ex.reveal("01-2")'))
    path = tmp_path / "01_computational_graphs.ipynb"
    nbformat.write(nb, str(path))
    run = run_notebook(path, allow_errors=True)
    shown = "".join(o.get("text", "") for o in run.notebook.cells[-1].outputs)
    assert shown == f"answer [01-2]: {checking.TEACHER}\n"
    assert {o.status for o in run.results} == {"todo"}


def test_check_refuses_to_reveal_or_run_solutions_of_a_student_copy(student, capsys):
    for option in ("--reveal", "--solutions"):
        assert main(["check", "1", "--dir", str(student), option]) == 2
        err = capsys.readouterr().err
        said = f"01_computational_graphs.ipynb is a student copy: it has no solutions, so {option}"
        assert said in err
        assert "the teacher turned answers off" in err


def test_with_reveal_off_hints_do_not_point_to_reveal(answers_on, capsys):
    checking.reveal_off()
    for _ in range(4):
        result = ex.check_inplace_predictions((True, True, True))
    assert "not yet" in str(result) and "ex.reveal" not in result.message
    ex.reveal("04-2")
    assert capsys.readouterr().out.endswith(f"answer [04-2]: {checking.TEACHER}\n")
