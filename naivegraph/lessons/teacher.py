"""The course as an nbgrader course: one assignment a lesson, solutions between nbgrader's
``### BEGIN SOLUTION`` / ``### END SOLUTION`` markers, each exercise's check an autograded
cell that raises on a wrong answer.

``naivegraph lessons --nbgrader DIR`` writes ``DIR/source/lesson_NN/``; in ``DIR``,
``nbgrader generate_assignment lesson_01`` makes the students' version (markers replaced
by nbgrader's stub) and ``nbgrader autograde lesson_01`` grades their submissions.

>>> cells = exercise_cells({"id": "l01-005", "source": "# Exercise 01-2\\nx = ...\\n"
...     "ex.check_x(x)", "metadata": {"naivegraph": {"exercise": "01-2",
...     "solution": "# Exercise 01-2\\nx = 28\\nex.check_x(x)"}}})
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
import difflib
import json
import re
import shutil
from pathlib import Path

from .. import course
from .workcopy import WorkCopyError, student_version

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
INDENT = re.compile(r"\s*")


def write_nbgrader_course(folder: Path) -> list[str]:
    """Write every lesson as an nbgrader source assignment under ``folder/source``."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise WorkCopyError(f"{folder} is a file, not a folder; pass a folder to --nbgrader")
    try:
        for notebook in course.notebooks():
            assignment = folder / "source" / f"lesson_{notebook.name[:2]}"
            assignment.mkdir(parents=True, exist_ok=True)
            for asset in course.assets():
                (assignment / asset).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(course.FOLDER / asset, assignment / asset)
            text = json.dumps(nbgrader_source(notebook), indent=1, ensure_ascii=False)
            (assignment / notebook.name).write_text(text + "\n", encoding="utf-8")
    except OSError as error:
        raise WorkCopyError(f"cannot write into {folder}: {error.strerror or error}") from error
    return [
        f"wrote {len(course.notebooks())} nbgrader assignments (lesson_01 ...) into "
        f"{folder / 'source'}; in {folder}: nbgrader generate_assignment lesson_01"
    ]


def nbgrader_source(notebook: Path) -> dict:
    """One lesson as an nbgrader source notebook (JSON)."""
    ours = json.loads(Path(notebook).read_text(encoding="utf-8"))
    nb = student_version(notebook)  # reveal off; the solutions come from `ours`
    cells = []
    for mine, theirs in zip(ours["cells"], nb["cells"]):
        if "solution" in mine.get("metadata", {}).get("naivegraph", {}):
            cells += exercise_cells(mine)
        else:
            cells.append(theirs)
    nb["cells"] = cells
    return nb


def exercise_cells(cell: dict) -> list[dict]:
    """An exercise cell as nbgrader's pair: the solution cell, its answer lines between
    the markers, and the autograded cell asserting the check (its last line)."""
    meta = cell["metadata"]["naivegraph"]
    exercise = meta["exercise"]
    blanks = "".join(cell["source"]).splitlines()
    *solution, check = meta["solution"].rstrip().splitlines()
    answer = copy.deepcopy(cell)
    answer["metadata"] = {
        "naivegraph": {"exercise": exercise},
        "nbgrader": _nbgrader(f"answer-{exercise}", solution=True),
    }
    answer["source"] = _lines(_marked(blanks[:-1], solution))
    test = {
        "cell_type": "code",
        "id": f"{cell['id']}-check",
        "metadata": {"nbgrader": _nbgrader(f"check-{exercise}", grade=True, points=1)},
        "source": _lines([f'assert {check}, "exercise {exercise} is not right yet"']),
        "outputs": [],
        "execution_count": None,
    }
    return [answer, test]


def _marked(blanks: list[str], solution: list[str]) -> list[str]:
    """The solution, with the lines where it differs from the learner's blanks between
    the markers (indented as the first of them)."""
    out = []
    matcher = difflib.SequenceMatcher(a=blanks, b=solution, autojunk=False)
    for tag, _, _, start, stop in matcher.get_opcodes():
        lines = solution[start:stop]
        if tag == "equal":
            out += lines
        elif lines:
            indent = INDENT.match(lines[0]).group()
            out += [indent + BEGIN, *lines, indent + END]
    return out


def _nbgrader(grade_id: str, solution: bool = False, grade: bool = False, points: int = 0):
    meta = {"grade_id": grade_id, "solution": solution, "grade": grade, "locked": not solution}
    meta["schema_version"] = 3
    if grade:
        meta["points"] = points
    return meta


def _lines(lines: list[str]) -> list[str]:
    return [line + "\n" for line in lines[:-1]] + lines[-1:]
