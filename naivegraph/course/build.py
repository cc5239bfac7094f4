"""Build the lesson notebooks from their sources in ``src/`` beside this file.

Each lesson is written once, as a jupytext percent file ``src/NN_name.py`` that becomes
``NN_name.ipynb``: ``# %% [markdown]`` cells of text, ``# %%`` cells of code.  An
exercise is a code cell whose ``# %%`` line names it (``# %% exercise="01-2"``), its
answer written in full between nbgrader's markers ``### BEGIN SOLUTION`` and ``### END
SOLUTION``, each on its own line, indented as the code it encloses, and its last line
its check, ``ex.check_...(...)``.  The learner's notebook has blanks in each region:

* a region of *values*, every line a one-line assignment (``w1_grad = 28.0``): each
  line keeps its target and the value becomes ``...`` (``w1_grad = ...``; a tuple in
  parentheses keeps them, ``(...)``; a comment after the value stays);
* any other region (a ``return``, a loop, a call, a blank line among assignments) is
  *code*: one ``...`` line, indented as the markers.

A blank inside a line is a value of its own on a line before it (``tangent = ...``,
then ``return Dual(value, tangent)``).  The complete cell without the markers, the
reference solution, is stored in the cell's metadata under ``naivegraph.solution``
(``naivegraph check --reveal`` shows it, ``--solutions`` and the tests run it);
nbgrader reads the markers from the sources themselves (:mod:`naivegraph.lessons.teacher`).

>>> print(learner("def f(x):\\n    ### BEGIN SOLUTION\\n    y = 2 * x  # twice\\n"
...               "    ### END SOLUTION\\n    return y\\nex.check_f(f)"))
def f(x):
    y = ...  # twice
    return y
ex.check_f(f)
>>> learner("total = 0\\n### BEGIN SOLUTION\\nfor i in range(3):\\n    total += i\\n"
...         "### END SOLUTION")
'total = 0\\n...'

Usage::

    python -m naivegraph.course.build            # write every notebook
    python -m naivegraph.course.build 03 08      # only these lessons
    python -m naivegraph.course.build --check    # exit 1 if a notebook is out of date

Notebooks are written without outputs, with stable cell ids (``l01-000``...): an
unchanged lesson rebuilds to the same bytes.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
INDENT = re.compile(r"[ \t]*")
# the notebook-level metadata of every lesson (the sources carry none)
KERNEL = {"display_name": "Python 3", "language": "python", "name": "python3"}


class LessonSourceError(ValueError):
    """A lesson source breaks the format; the message names the cell and what to fix."""


def regions(source: str) -> list[tuple[int, int]]:
    """(begin, end) line numbers, from 0, of the marker lines of each solution region."""
    lines = source.split("\n")
    found: list[tuple[int, int]] = []
    begin = None
    for number, line in enumerate(lines):
        if BEGIN not in line and END not in line:
            continue
        marker, where = line.strip(), f"line {number + 1}"
        if marker not in (BEGIN, END):
            raise LessonSourceError(f"{where}: a marker shares its line; put it on its own")
        if (marker == BEGIN) != (begin is None):
            said = f"a second {BEGIN}" if marker == BEGIN else f"{END} without a {BEGIN}"
            raise LessonSourceError(f"{where}: {said}; regions do not nest")
        if marker == BEGIN:
            begin = number
            continue
        assert begin is not None
        if INDENT.match(line).group() != INDENT.match(lines[begin]).group():
            raise LessonSourceError(f"{where}: {END} is not indented as its {BEGIN}")
        found.append((begin, number))
        begin = None
    if begin is not None:
        raise LessonSourceError(f"line {begin + 1}: {BEGIN} has no {END}")
    return found


def solution(source: str) -> str:
    """The complete cell: the source without its marker lines."""
    lines = source.split("\n")
    marks = {n for region in regions(source) for n in region}
    return "\n".join(line for n, line in enumerate(lines) if n not in marks)


def learner(source: str) -> str:
    """The learner's cell: each solution region replaced by its blanks (module docstring)."""
    lines = source.split("\n")
    out, start = [], 0
    for begin, end in regions(source):
        indent = INDENT.match(lines[begin]).group()
        out += lines[start:begin] + _blanks(lines[begin + 1 : end], indent)
        start = end + 1
    return "\n".join(out + lines[start:])


def _blanks(lines: list[str], indent: str) -> list[str]:
    """A region's lines as the learner sees them: its values blanked, or one ``...``."""
    values = _values(lines, indent)
    if values is None:
        return [indent + "..."]
    return [line[:begin] + blank + line[stop:] for line, (begin, stop, blank) in zip(lines, values)]


def _values(lines: list[str], indent: str) -> list[tuple[int, int, str]] | None:
    """For a region of values, each line's (start, stop) column of its value and the
    blank that replaces it; None for a region of code."""
    if not lines or any(not line.startswith(indent) for line in lines):
        return None
    shift = len(indent)
    try:
        statements = ast.parse("\n".join(line[shift:] for line in lines)).body
    except SyntaxError:
        return None
    one_line = len(statements) == len(lines) and all(
        s.lineno == s.end_lineno == n + 1 for n, s in enumerate(statements)
    )
    assigns = all(isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value for s in statements)
    if not (one_line and assigns):
        return None
    spans = []
    for line, statement in zip(lines, statements):
        value = statement.value
        assert value is not None
        start = shift + _column(line[shift:], value.col_offset)
        stop = shift + _column(line[shift:], value.end_col_offset)
        # a tuple written in parentheses keeps them: `(...)`
        parenthesised = isinstance(value, ast.Tuple) and line[start] == "("
        spans.append((start, stop, "(...)" if parenthesised else "..."))
    return spans


def _column(text: str, offset: int | None) -> int:
    """The character column of ``ast``'s byte offset ``offset`` in ``text``."""
    return len(text.encode("utf-8")[: offset or 0].decode("utf-8"))


def sources(selected: list[str] | None = None) -> list[Path]:
    """The lesson sources (``src/NN_name.py``), those whose name starts with one of
    ``selected`` ("03", "08_build") when given."""
    paths = sorted(SRC.glob("[0-9][0-9]_*.py"))
    if selected:
        paths = [p for p in paths if any(p.stem.startswith(s) for s in selected)]
    return paths


def read(path: Path):
    """A lesson source as jupytext reads it: one cell per ``# %%`` block."""
    import jupytext

    return jupytext.read(Path(path), fmt="py:percent")


def exercise_sources(path: Path) -> dict[str, str]:
    """Each exercise's source, markers and all, by exercise id."""
    return {
        cell.metadata["exercise"]: cell.source
        for cell in read(path).cells
        if "exercise" in cell.metadata
    }


def notebook(path: Path):
    """The learner's notebook of one lesson source (an ``nbformat`` notebook)."""
    import nbformat

    path = Path(path)
    nb = nbformat.v4.new_notebook()
    nb.metadata = {
        "kernelspec": dict(KERNEL),
        "language_info": {"name": "python"},
        "naivegraph": {"lesson": path.stem},
    }
    for number, cell in enumerate(read(path).cells):
        nb.cells.append(_cell(cell, f"l{path.stem[:2]}-{number:03d}", path))
    nbformat.validate(nb)
    return nb


def _cell(cell, cell_id: str, path: Path):
    import nbformat

    if cell.cell_type == "markdown":
        new = nbformat.v4.new_markdown_cell(cell.source)
    else:
        new = nbformat.v4.new_code_cell(cell.source)
    new.id = cell_id
    exercise = cell.metadata.get("exercise")
    try:
        marked = regions(cell.source)
    except LessonSourceError as error:
        raise LessonSourceError(f"{path.name}, cell {cell_id}: {error}") from None
    if exercise is None and marked:
        raise LessonSourceError(
            f"{path.name}, cell {cell_id} has solution markers but no exercise id; "
            'name the exercise on its line: # %% exercise="NN-k"'
        )
    if exercise is not None:
        if cell.cell_type != "code" or not marked:
            raise LessonSourceError(
                f"{path.name}, exercise {exercise} has no solution region; write its "
                f"answer between {BEGIN} and {END}"
            )
        new.source = learner(cell.source)
        new.metadata["naivegraph"] = {"exercise": exercise, "solution": solution(cell.source)}
    return new


def main(argv: list[str]) -> int:
    import nbformat

    check = "--check" in argv
    selected = [a for a in argv if not a.startswith("--")]
    stale = []
    for path in sources(selected):
        text = nbformat.writes(notebook(path)) + "\n"
        target = HERE / f"{path.stem}.ipynb"
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
