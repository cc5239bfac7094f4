"""The course as an nbgrader course: one assignment a lesson, each exercise's answer cell
between nbgrader's ``### BEGIN SOLUTION`` / ``### END SOLUTION`` markers as the lesson's
source writes it (:mod:`naivegraph.course.build`), and its check an autograded cell that
raises on a wrong answer.

``naivegraph lessons --nbgrader DIR`` writes ``DIR/source/lesson_NN/``; in ``DIR``,
``nbgrader generate_assignment lesson_01`` makes the students' version (each solution
region replaced by nbgrader's stub) and ``nbgrader autograde lesson_01`` grades their
submissions.  Reading the sources needs jupytext (the ``teacher`` extra).

>>> cells = exercise_cells({"id": "l01-005", "source": "x = ...\\nex.check_x(x)",
...     "metadata": {"naivegraph": {"exercise": "01-2"}}},
...     "# Exercise 01-2\\n### BEGIN SOLUTION\\nx = 28\\n### END SOLUTION\\nex.check_x(x)")
>>> print("".join(cells[0]["source"]))
# Exercise 01-2
### BEGIN SOLUTION
x = 28
### END SOLUTION
>>> print("".join(cells[1]["source"]))
assert ex.check_x(x), "exercise 01-2 is not right yet"
"""

from __future__ import annotations

import copy
import importlib.util
import json
import shutil
from pathlib import Path

from .. import course
from ..course import build
from .workcopy import WorkCopyError, student_version

BEGIN, END = build.BEGIN, build.END


def write_nbgrader_course(folder: Path) -> list[str]:
    """Write every lesson as an nbgrader source assignment under ``folder/source``."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise WorkCopyError(f"{folder} is a file, not a folder; pass a folder to --nbgrader")
    if importlib.util.find_spec("jupytext") is None:
        raise WorkCopyError(
            "--nbgrader reads the lessons' sources with jupytext, which is not installed; "
            "install the teacher extra: pip install 'naivegraph[teacher]'"
        )
    # every assignment is made before the first is written: no half-written course
    assignments = {notebook: nbgrader_source(notebook) for notebook in course.notebooks()}
    try:
        for notebook, nb in assignments.items():
            assignment = folder / "source" / f"lesson_{notebook.name[:2]}"
            assignment.mkdir(parents=True, exist_ok=True)
            for asset in course.assets():
                (assignment / asset).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(course.FOLDER / asset, assignment / asset)
            text = json.dumps(nb, indent=1, ensure_ascii=False)
            (assignment / notebook.name).write_text(text + "\n", encoding="utf-8")
    except OSError as error:
        raise WorkCopyError(f"cannot write into {folder}: {error.strerror or error}") from error
    return [
        f"wrote {len(assignments)} nbgrader assignments (lesson_01 ...) into "
        f"{folder / 'source'}; in {folder}: nbgrader generate_assignment lesson_01"
    ]


def nbgrader_source(notebook: Path) -> dict:
    """One lesson as an nbgrader source notebook (JSON): its student version, each
    exercise cell replaced by its marked answer and autograded check."""
    marked = build.exercise_sources(course.source(notebook))
    nb = student_version(notebook)  # reveal off; the solutions come from the source
    cells = []
    for cell in nb["cells"]:
        exercise = cell.get("metadata", {}).get("naivegraph", {}).get("exercise")
        cells += [cell] if exercise is None else exercise_cells(cell, marked[exercise])
    nb["cells"] = cells
    return nb


def exercise_cells(cell: dict, marked: str) -> list[dict]:
    """An exercise cell as nbgrader's pair: the answer cell, its source's lines with the
    solution markers, and the autograded cell asserting the check (its last line)."""
    exercise = cell["metadata"]["naivegraph"]["exercise"]
    *answer_lines, check = marked.rstrip().split("\n")
    if not check.startswith("ex.check_"):
        raise build.LessonSourceError(
            f"exercise {exercise} must end with its check, one line `ex.check_...(...)` "
            f"after its solution; its last line is {check!r}"
        )
    answer = copy.deepcopy(cell)
    answer["metadata"] = {
        "naivegraph": {"exercise": exercise},
        "nbgrader": _nbgrader(f"answer-{exercise}", solution=True),
    }
    answer["source"] = _lines(answer_lines)
    test = {
        "cell_type": "code",
        "id": f"{cell['id']}-check",
        "metadata": {"nbgrader": _nbgrader(f"check-{exercise}", grade=True, points=1)},
        "source": _lines([f'assert {check}, "exercise {exercise} is not right yet"']),
        "outputs": [],
        "execution_count": None,
    }
    return [answer, test]


def _nbgrader(grade_id: str, solution: bool = False, grade: bool = False, points: int = 0):
    meta = {"grade_id": grade_id, "solution": solution, "grade": grade, "locked": not solution}
    meta["schema_version"] = 3
    if grade:
        meta["points"] = points
    return meta


def _lines(lines: list[str]) -> list[str]:
    return [line + "\n" for line in lines[:-1]] + lines[-1:]
