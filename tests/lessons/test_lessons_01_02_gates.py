"""The cells of lessons 1 and 2 that show an exercise's answer wait for its check to
pass: lesson 1's drawing with gradients=True and its walkthrough (the gradients of
01-2 and 01-3), lesson 2's cells that print and draw z's next_functions (the answer of
02-2).  Run before the check passes, such a cell prints one line saying which exercise
to solve first and shows nothing: no drawing, no printed answer, no result a later
cell could read through `_`.  Once the check passes, it shows what it showed before."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from IPython.utils.capture import capture_output
from lesson_answers_06_07 import notebook_shell

from naivegraph.lessons import checking
from naivegraph.lessons import exercises as ex

GATE_01 = "(solve exercises 01-2 and 01-3 first: this cell shows their answers)"
GATE_02 = "(solve exercise 02-2 first: this cell shows its answer)"


@pytest.fixture
def shell():
    checking.SOLVED.clear()  # each test starts with no exercise solved, as a fresh kernel
    yield from notebook_shell()
    checking.SOLVED.clear()


def _code_cells(stem: str) -> list[tuple[str, str]]:
    """Each code cell of a lesson as (the learner's source, the source with the
    exercise's solution filled in)."""
    path = next(Path(ex.__file__).parent.parent.joinpath("course").glob(f"{stem}*.ipynb"))
    notebook = json.loads(path.read_text(encoding="utf-8"))
    cells = []
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            source = "".join(cell["source"])
            solution = cell["metadata"].get("naivegraph", {}).get("solution", source)
            cells.append((source, solution))
    return cells


def _the_cell(cells: list[tuple[str, str]], marker: str) -> str:
    found = [source for source, _ in cells if marker in source]
    assert len(found) == 1, found
    return found[0]


def _solution(cells: list[tuple[str, str]], marker: str) -> str:
    found = [solution for source, solution in cells if marker in source]
    assert len(found) == 1, found
    return found[0]


def _run(shell, *sources: str) -> None:
    for source in sources:
        checking.TRIES.clear()
        shell.run_cell(source, store_history=True)


def _shown(shell, source: str):
    """What running ``source`` as the next cell printed, what it displayed (one
    mimebundle per display), and whether it left a result in Out."""
    count = shell.execution_count
    with capture_output() as cap:
        shell.run_cell(source, store_history=True)
    return cap.stdout, [output.data for output in cap.outputs], count in shell.user_ns["Out"]


# ------------------------------------------------------------------------- lesson 1

LESSON_1 = _code_cells("01_")
IMPORTS_1 = _the_cell(LESSON_1, "from naivegraph.lessons import exercises as ex")
MODEL_1 = _the_cell(LESSON_1, 'for name, t in [("w1", w1)')
NAMES_1 = _the_cell(LESSON_1, 'loss}\nif ex.solved("01-1"):')  # and the first drawing
SOLVE_01_2 = _solution(LESSON_1, "# Exercise 01-2")
SOLVE_01_3 = _solution(LESSON_1, "# Exercise 01-3")
GRADIENTS_CELL = _the_cell(LESSON_1, "gradients=True")
WALKTHROUGH_CELL = _the_cell(LESSON_1, "ng.walkthrough(")


@pytest.mark.parametrize("cell", [GRADIENTS_CELL, WALKTHROUGH_CELL], ids=["drawing", "walkthrough"])
def test_01_the_cells_that_show_the_gradients_wait_for_exercises_01_2_and_01_3(cell):
    assert 'if ex.solved("01-2") and ex.solved("01-3"):' in cell
    assert GATE_01 in cell


@pytest.mark.parametrize(
    "solved", [(), (SOLVE_01_2,), (SOLVE_01_3,)], ids=["none", "01-2-only", "01-3-only"]
)
@pytest.mark.parametrize("cell", [GRADIENTS_CELL, WALKTHROUGH_CELL], ids=["drawing", "walkthrough"])
def test_01_run_before_both_checks_pass_the_cell_prints_the_gate_line_and_shows_nothing(
    shell, cell, solved
):
    _run(shell, IMPORTS_1, MODEL_1, NAMES_1, *solved)
    printed, displayed, result = _shown(shell, cell)
    assert printed.strip() == GATE_01
    assert displayed == [] and not result
    assert shell.user_ns["w1"].grad is None


def test_01_once_both_checks_pass_the_drawing_shows_the_gradients(shell):
    _run(shell, IMPORTS_1, MODEL_1, NAMES_1, SOLVE_01_2, SOLVE_01_3)
    assert ex.solved("01-2") and ex.solved("01-3")
    printed, displayed, _ = _shown(shell, GRADIENTS_CELL)
    assert printed == ""
    assert len(displayed) == 1
    drawing = str(displayed[0])
    assert "∂loss/∂w2 = 8" in drawing
    assert re.search(r"∂loss/∂l1 = \[\[7, 7\], \[7, 7\]\]", drawing)
    assert shell.user_ns["w1"].grad is None  # drawn without touching any .grad


def test_01_once_both_checks_pass_the_walkthrough_shows_the_training_step(shell):
    _run(shell, IMPORTS_1, MODEL_1, NAMES_1, SOLVE_01_2, SOLVE_01_3)
    printed, displayed, _ = _shown(shell, WALKTHROUGH_CELL)
    assert printed == ""
    assert len(displayed) == 1
    assert "w1.grad = 28" in str(displayed[0])
    assert shell.user_ns["w1"].grad is None  # the walkthrough runs nothing for real


# ------------------------------------------------------------------------- lesson 2

LESSON_2 = _code_cells("02_")
IMPORTS_2 = _the_cell(LESSON_2, "from naivegraph.lessons import exercises as ex")
GRAPH_2 = _the_cell(LESSON_2, "y = w.mul(x)\nz = y.add(b)\nprint(")
SOLVE_02_2 = _solution(LESSON_2, "# Exercise 02-2")
PRINT_CELL = _the_cell(LESSON_2, "print(z.grad_fn.next_functions)")
DRAWING_CELL = _the_cell(LESSON_2, 'ng.render(z, kind="backward"')


@pytest.mark.parametrize("cell", [PRINT_CELL, DRAWING_CELL], ids=["print", "drawing"])
def test_02_the_cells_that_show_next_functions_wait_for_exercise_02_2(cell):
    assert cell.startswith('if ex.solved("02-2"):')
    assert GATE_02 in cell


@pytest.mark.parametrize("cell", [PRINT_CELL, DRAWING_CELL], ids=["print", "drawing"])
def test_02_run_before_the_check_passes_the_cell_prints_the_gate_line_and_shows_nothing(
    shell, cell
):
    _run(shell, IMPORTS_2, GRAPH_2)
    printed, displayed, result = _shown(shell, cell)
    assert printed.strip() == GATE_02
    assert "AccumulateGrad" not in printed and "MulBackward0" not in printed
    assert displayed == [] and not result
    assert "acc" not in shell.user_ns


def test_02_once_the_check_passes_the_cells_print_and_draw_next_functions(shell):
    _run(shell, IMPORTS_2, GRAPH_2, SOLVE_02_2)
    assert ex.solved("02-2")
    printed, displayed, _ = _shown(shell, PRINT_CELL)
    assert "AccumulateGrad" in printed and "MulBackward0" in printed
    assert "z's first input node is y.grad_fn: True" in printed
    assert "AccumulateGrad stores into b" in printed
    assert displayed == []
    printed, displayed, _ = _shown(shell, DRAWING_CELL)
    assert printed == ""
    assert len(displayed) == 1
    assert "next_functions" in str(displayed[0])
