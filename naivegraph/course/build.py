"""Build the lesson notebooks from the cell lists in ``src/`` beside this file.

Each ``src/lesson_NN.py`` defines ``NAME`` (the notebook's file stem) and ``CELLS``, a
list made with :func:`md`, :func:`code` and :func:`exercise`.  An exercise cell is
written once with its blanks marked ``«answer»``: the learner's notebook gets ``...``
in their place, and the complete cell (the reference solution) is stored in the
cell's metadata under ``naivegraph.solution``.

Usage::

    python -m naivegraph.course.build            # write every notebook
    python -m naivegraph.course.build 03 08      # only these lessons
    python -m naivegraph.course.build --check    # exit 1 if a notebook is out of date

Notebooks are written without outputs and with stable cell ids, so rebuilding an
unchanged lesson gives the same bytes.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import types
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"
BLANK = re.compile(r"«(.*?)»", re.DOTALL)

SETUP = """\
import numpy as np
import naivegraph as ng
from naivegraph.lessons import exercises as ex

np.set_printoptions(precision=4, suppress=True)"""


def md(text: str) -> dict:
    return {"kind": "markdown", "source": _dedent(text)}


def code(text: str) -> dict:
    return {"kind": "code", "source": _dedent(text)}


def exercise(exercise_id: str, text: str) -> dict:
    """A code cell the learner completes: ``«...»`` marks each blank and its answer."""
    text = _dedent(text)
    if not BLANK.search(text):
        raise ValueError(f"exercise {exercise_id} has no «blank»")
    learner = BLANK.sub("...", text)
    solution = BLANK.sub(lambda m: m.group(1), text)
    return {"kind": "code", "source": learner,
            "metadata": {"naivegraph": {"exercise": exercise_id, "solution": solution}}}


def _dedent(text: str) -> str:
    import textwrap
    return textwrap.dedent(text).strip("\n")


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"lesson_src_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    # the sources say `from build import code, exercise, md`
    helpers = types.ModuleType("build")
    helpers.md, helpers.code, helpers.exercise = md, code, exercise
    sys.modules["build"] = helpers
    spec.loader.exec_module(module)
    return module


def notebook(module) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
        "naivegraph": {"lesson": module.NAME},
    }
    stem = module.NAME[:2]
    cells = [md(f"# {module.TITLE}\n\n{_dedent(module.INTRO)}"), code(SETUP)] + module.CELLS
    for i, cell in enumerate(cells):
        if cell["kind"] == "markdown":
            new = nbformat.v4.new_markdown_cell(cell["source"])
        else:
            new = nbformat.v4.new_code_cell(cell["source"])
        new.id = f"l{stem}-{i:03d}"
        if "metadata" in cell:
            new.metadata.update(cell["metadata"])
        nb.cells.append(new)
    nbformat.validate(nb)
    return nb


def sources(selected: list[str] | None = None) -> list[Path]:
    paths = sorted(SRC.glob("lesson_*.py"))
    if selected:
        paths = [p for p in paths if any(p.stem.endswith(s) for s in selected)]
    return paths


def main(argv: list[str]) -> int:
    check = "--check" in argv
    selected = [a for a in argv if not a.startswith("--")]
    stale = []
    for path in sources(selected):
        module = load(path)
        nb = notebook(module)
        text = nbformat.writes(nb) + "\n"
        target = HERE / f"{module.NAME}.ipynb"
        if check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                stale.append(target.name)
            continue
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}")
    if stale:
        print("out of date (run python -m naivegraph.course.build):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
