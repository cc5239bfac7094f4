"""Every lesson notebook runs end to end, as the learner gets it and with the solutions,
and is what its source (``naivegraph/course/src/NN_name.py``) builds.

Learner mode: the blanks are left as ``...``; "Run All" must reach the last cell and
every exercise must report "not done yet".  Solutions mode: the reference solution
stored in each exercise cell's metadata replaces the cell; every exercise must pass.
The source format (jupytext percent cells, answers between nbgrader's solution markers)
and the rule that turns a solution region into the learner's blanks are specified here
too.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from naivegraph.course import build  # noqa: E402
from naivegraph.lessons.exercises import exercise_ids, run_notebook  # noqa: E402

LESSONS = Path(__file__).resolve().parents[2] / "naivegraph" / "course"
NOTEBOOKS = sorted(LESSONS.glob("[0-9][0-9]_*.ipynb"))
SOURCES = sorted((LESSONS / "src").glob("[0-9][0-9]_*.py"))
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
EXPECTED = ["01_computational_graphs", "02_leaf_tensors", "03_getting_gradients",
            "04_inplace_operations", "05_excluding_subgraphs", "06_static_graphs",
            "07_static_vs_dynamic", "08_build_your_own", "09_capstone",
            "10_static_graphs_for_real", "11_forward_and_reverse_mode", "12_write_your_own_op",
            "13_from_static_graphs_to_compilers"]


def _ids(path: Path) -> list[str]:
    return exercise_ids(nbformat.read(str(path), as_version=4))


def test_every_lesson_is_present():
    assert [p.stem for p in NOTEBOOKS] == EXPECTED


def test_every_lesson_has_its_source_and_no_source_is_left_over():
    assert [p.stem for p in SOURCES] == EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_clean_with_two_exercises(path):
    nb = nbformat.read(str(path), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, "stored with outputs"
    ids = _ids(path)
    assert len(ids) >= 2 and len(set(ids)) == len(ids)
    assert ids == sorted(ids), "exercises are numbered in the order the learner meets them"
    for cell in nb.cells:
        meta = cell.metadata.get("naivegraph", {})
        if "exercise" in meta:
            assert "..." in cell.source and meta["solution"] != cell.source


def test_notebooks_match_their_sources():
    pytest.importorskip("jupytext")
    spec = importlib.util.spec_from_file_location("lessons_build", LESSONS / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    assert build.main(["--check"]) == 0, (
        "run `python -m naivegraph.course.build` and commit the notebooks"
    )


# Lessons whose demonstrations run the learner's functions once their checks pass, and
# the lab's own until then: what their cells print in each case.
YOURS = {"08_build_your_own": "(running on your engine)", "09_capstone": None}
STAND_IN = {"08_build_your_own": "the lab's versions stand in until",
            "09_capstone": "the lab's version stands in until"}


def _printed(nb) -> str:
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                   for o in c.get("outputs", []))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_learner_copy_runs_and_reports_not_done(path):
    nb, results = run_notebook(path, solutions=False, timeout=240)
    assert [r.exercise for r in results] == _ids(path)
    assert all(r.status == "todo" for r in results), [r for r in results if r.status != "todo"]
    if path.stem in STAND_IN:
        assert STAND_IN[path.stem] in _printed(nb)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_solutions_run_and_pass(path):
    nb, results = run_notebook(path, solutions=True, timeout=240)
    assert [r.exercise for r in results] == _ids(path)
    failing = [r for r in results if not r.passed]
    assert not failing, failing
    if path.stem in STAND_IN:  # every demonstration ran the learner's own functions
        assert STAND_IN[path.stem] not in _printed(nb)
    if YOURS.get(path.stem):
        assert YOURS[path.stem] in _printed(nb)


# ----------------------------------------------------------------- the source format


def _cell(*lines: str) -> str:
    return "\n".join(lines)


def test_a_region_of_values_keeps_each_target_and_blanks_its_value():
    source = _cell(
        "# Exercise 01-1",
        BEGIN,
        "l1_value = 2.0",
        "l2: float = 5.0  # by hand",
        "pair = (1, 2)",
        "bare = 1, 2",
        "a = b = 3",
        END,
        "ex.check_forward_values(l1_value, l2)",
    )
    assert build.learner(source) == _cell(
        "# Exercise 01-1",
        "l1_value = ...",
        "l2: float = ...  # by hand",
        "pair = (...)",
        "bare = ...",
        "a = b = ...",
        "ex.check_forward_values(l1_value, l2)",
    )
    assert build.solution(source) == _cell(
        "# Exercise 01-1",
        "l1_value = 2.0",
        "l2: float = 5.0  # by hand",
        "pair = (1, 2)",
        "bare = 1, 2",
        "a = b = 3",
        "ex.check_forward_values(l1_value, l2)",
    )


def test_a_blank_inside_a_line_is_a_value_of_its_own_before_it():
    source = _cell(
        "def mul(u, v):",
        "    " + BEGIN,
        "    tangent = u.tangent * v.value + u.value * v.tangent",
        "    " + END,
        "    return Dual(u.value * v.value, tangent)",
    )
    assert build.learner(source) == _cell(
        "def mul(u, v):",
        "    tangent = ...",
        "    return Dual(u.value * v.value, tangent)",
    )


def test_a_value_keeps_the_characters_around_it_whatever_their_width():
    source = _cell(BEGIN, 'label = "größe" + "é"  # ünits', END)
    assert build.learner(source) == "label = ...  # ünits"


@pytest.mark.parametrize(
    "region",
    [
        ["return 2 * x"],  # the learner writes the whole body
        ["dX = dY @ W.T", "dW = X.T @ dY", "return dX, dW"],  # a return among others
        ["optimizer.step()"],  # not an assignment
        ["for p in params:", "    p.requires_grad = False"],
        ["total = (1 +", "         2)"],  # an assignment over two lines
        ["x = 1", "", "y = 2"],  # a blank line makes it code
    ],
    ids=["return", "return-after-assignments", "call", "loop", "two-line-assignment", "blank-line"],
)
def test_any_other_region_is_code_and_becomes_one_blank_indented_as_its_markers(region):
    source = _cell("def f(x):", "    " + BEGIN, *("    " + line for line in region), "    " + END)
    assert build.learner(source) == "def f(x):\n    ..."
    assert build.solution(source) == _cell("def f(x):", *("    " + line for line in region))


@pytest.mark.parametrize(
    "source, said",
    [
        (_cell(BEGIN, "x = 1"), "line 1: ### BEGIN SOLUTION has no ### END SOLUTION"),
        (_cell("x = 1", END), "line 2: ### END SOLUTION without a ### BEGIN SOLUTION"),
        (_cell(BEGIN, BEGIN, "x = 1", END), "line 2: a second ### BEGIN SOLUTION"),
        (_cell("x = 1  " + BEGIN, "x = 2", END), "line 1: a marker shares its line"),
        (_cell("    " + BEGIN, "    x = 1", END), "line 3: ### END SOLUTION is not indented"),
    ],
    ids=["unclosed", "unopened", "nested", "inline", "misaligned"],
)
def test_markers_that_break_the_format_are_refused_with_their_line(source, said):
    with pytest.raises(build.LessonSourceError, match=said):
        build.learner(source)


def _write_source(folder: Path, text: str) -> Path:
    path = folder / "42_sample.py"
    path.write_text(text, encoding="utf-8")
    return path


SAMPLE = f"""# %% [markdown]
# # Lesson 42: a sample

# %%
x = 3

# %% exercise="42-1"
# Exercise 42-1
{BEGIN}
y = 2 * x
{END}
ex.check_y(y)
"""


def test_a_source_builds_the_learners_notebook_with_its_solution_in_metadata(tmp_path):
    nb = build.notebook(_write_source(tmp_path, SAMPLE))
    assert nb.metadata["naivegraph"] == {"lesson": "42_sample"}
    assert [(c.id, c.cell_type, c.source) for c in nb.cells] == [
        ("l42-000", "markdown", "# Lesson 42: a sample"),
        ("l42-001", "code", "x = 3"),
        ("l42-002", "code", "# Exercise 42-1\ny = ...\nex.check_y(y)"),
    ]
    assert nb.cells[2].metadata == {
        "naivegraph": {"exercise": "42-1", "solution": "# Exercise 42-1\ny = 2 * x\nex.check_y(y)"}
    }
    assert "jupytext" not in nb.metadata  # not paired for Jupyter: a learner's save stays put


def test_an_exercise_without_a_region_and_markers_outside_an_exercise_are_refused(tmp_path):
    no_region = SAMPLE.replace(f"{BEGIN}\n", "").replace(f"{END}\n", "")
    with pytest.raises(build.LessonSourceError, match="exercise 42-1 has no solution region"):
        build.notebook(_write_source(tmp_path, no_region))
    unnamed = SAMPLE.replace(' exercise="42-1"', "")
    with pytest.raises(build.LessonSourceError, match="has solution markers but no exercise id"):
        build.notebook(_write_source(tmp_path, unnamed))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.stem)
def test_sources_round_trip_through_jupytext_unchanged(path):
    jupytext = pytest.importorskip("jupytext")
    text = path.read_text(encoding="utf-8")
    assert jupytext.writes(jupytext.reads(text, fmt="py:percent"), fmt="py:percent") == text
