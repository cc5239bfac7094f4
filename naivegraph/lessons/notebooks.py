"""Running lesson notebooks: swap in reference solutions, execute, read the results
each exercise printed."""

from __future__ import annotations

import copy
import os
import re
from pathlib import Path
from typing import Any, NamedTuple

from .checking import FAIL, LINE, PASS, STATUS_OF

ANSI = re.compile(r"\x1b\[[0-9;]*m")
CELL_LINE = re.compile(r"Cell In\[\d+\], line (\d+)")
# a SyntaxError names the kernel's temporary file of the cell: "(563942855.py, line 2)"
CELL_FILE = re.compile(r"\s*\(\d+\.py, line \d+\)$")
ERROR = "error"  # an exercise whose cell raised: the checker never saw an answer

# ipykernel warns on every start that its local TCP sockets are not encrypted; a learner
# reads that as an error of theirs.  Its own log only: the cells' output is unaffected.
QUIET_KERNEL = ["--IPKernelApp.log_level=ERROR"]


class DamagedNotebook(ValueError):
    """A notebook file that cannot be read: the message says which and why, in one line."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path} is not a readable notebook ({reason})")
        self.path = Path(path)


class ExerciseOutcome(NamedTuple):
    exercise: str
    status: str  # "pass", "fail", "todo" or "error"
    message: str
    line: int | None = None  # for "error": the line of the cell that raised

    @property
    def passed(self) -> bool:
        return self.status == PASS


class NotebookRun(NamedTuple):
    notebook: Any
    results: list


def exercise_ids(nb) -> list[str]:
    """The exercise ids declared in a notebook's cell metadata, in order."""
    return [
        c.metadata["naivegraph"]["exercise"]
        for c in nb.cells
        if "exercise" in c.get("metadata", {}).get("naivegraph", {})
    ]


def read_notebook(path_or_nb):
    """A notebook from a path (or the notebook itself)."""
    return _read(path_or_nb)


def _read(path_or_nb):
    import nbformat

    if not isinstance(path_or_nb, (str, Path)):
        return path_or_nb
    try:
        return nbformat.read(str(path_or_nb), as_version=4)
    except OSError:
        raise
    except Exception as error:  # nbformat raises many kinds; each means "not a notebook"
        reason = " ".join(str(error).split()) or type(error).__name__
        if len(reason) > 120:
            reason = reason[:117] + "..."
        raise DamagedNotebook(path_or_nb, reason) from None


def solutions_notebook(path):
    """The notebook with every exercise cell's source replaced by its reference solution."""
    nb = copy.deepcopy(_read(path))
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("naivegraph", {})
        if "solution" in meta:
            cell.source = meta["solution"]
    return nb


def parse_results(nb) -> list[ExerciseOutcome]:
    """Exercise results printed in the outputs of an executed notebook."""
    return [found for cell in nb.cells if cell.cell_type == "code" for found in printed_by(cell)]


def printed_by(cell) -> list[ExerciseOutcome]:
    """The exercise result lines one executed code cell printed."""
    found = []
    for out in cell.get("outputs", []):
        text = (
            out.get("text", "")
            if out.get("output_type") == "stream"
            else out.get("data", {}).get("text/plain", "")
        )
        for line in str(text).splitlines():
            m = LINE.match(line.strip())
            if m:
                found.append(ExerciseOutcome(m.group(2), STATUS_OF[m.group(1)], m.group(3)))
    return found


def raised_in(cell) -> str | None:
    """How a cell that raised is reported to the learner, or None if it did not raise.

    "your cell raised SyntaxError at line 2: invalid syntax": the line is the innermost
    one inside a notebook cell (frames inside libraries are not the learner's).
    """
    raised = _raised(cell)
    return None if raised is None else raised[0]


def _raised(cell) -> tuple[str, int | None] | None:
    """(the report of :func:`raised_in`, the line) for a cell that raised, else None."""
    for out in cell.get("outputs", []):
        if out.get("output_type") != "error":
            continue
        trace = ANSI.sub("", "\n".join(out.get("traceback", [])))
        lines = CELL_LINE.findall(trace)
        line = int(lines[-1]) if lines else None
        where = f" at line {line}" if line is not None else ""
        value = ANSI.sub("", str(out.get("evalue", ""))).strip().splitlines()
        said = f": {CELL_FILE.sub('', value[0])}" if value else ""
        return f"your cell raised {out.get('ename', 'an error')}{where}{said}", line
    return None


def exercise_outcomes(nb) -> list[ExerciseOutcome]:
    """One outcome per exercise of an executed notebook, in order.

    An exercise cell that raised is reported as such, status ``"error"`` (the learner's
    error, not a crash of the whole run); one that printed no result says so.  Results
    printed outside exercise cells are kept too.
    """
    outcomes = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        exercise = cell.get("metadata", {}).get("naivegraph", {}).get("exercise")
        printed = printed_by(cell)
        raised = _raised(cell)
        if exercise is not None and raised is not None:
            said = raised[0] + "; fix the cell and run it again."
            outcomes.append(ExerciseOutcome(exercise, ERROR, said, raised[1]))
        elif exercise is not None and not any(o.exercise == exercise for o in printed):
            said = "the cell printed no result: keep its last line, the ex.check_... call."
            outcomes.append(ExerciseOutcome(exercise, FAIL, said))
        outcomes.extend(printed)
    return outcomes


def cell_errors(nb) -> list[str]:
    """What raised in cells that are not exercises: "cell 7: your cell raised ..."."""
    return [
        f"cell {i}: {raised}"
        for i, cell in enumerate(nb.cells, 1)
        if cell.cell_type == "code"
        and "exercise" not in cell.get("metadata", {}).get("naivegraph", {})
        and (raised := raised_in(cell)) is not None
    ]


def run_notebook(
    path,
    solutions: bool = False,
    timeout: int = 300,
    kernel_name: str | None = None,
    allow_errors: bool = False,
) -> NotebookRun:
    """Execute a lesson notebook top to bottom; return it with its exercise results.

    ``solutions=True`` runs the reference solutions instead of the learner's blanks.
    The working directory is the notebook's folder.  Raises
    ``nbclient.exceptions.CellExecutionError`` when a cell fails, unless
    ``allow_errors``: then every cell runs and each exercise is reported, a cell that
    raised included (:func:`exercise_outcomes`).
    """
    from nbclient import NotebookClient

    nb = solutions_notebook(path) if solutions else _read(path)
    if not solutions:
        nb = copy.deepcopy(nb)
    folder = Path(path).resolve().parent if isinstance(path, (str, Path)) else Path.cwd()
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=kernel_name or _kernel_name(),
        resources={"metadata": {"path": str(folder)}},
        allow_errors=allow_errors,
        extra_arguments=QUIET_KERNEL,
    )
    client.execute(env=_kernel_env())
    return NotebookRun(nb, exercise_outcomes(nb) if allow_errors else parse_results(nb))


def _kernel_env() -> dict:
    """The kernel imports the naivegraph this process runs (not another install of it):
    a checkout's tests check that checkout's lessons."""
    root = str(Path(__file__).resolve().parents[2])
    paths = [root, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def _kernel_name() -> str:
    """``python3`` is the kernel ipykernel provides for the running interpreter."""
    return "python3"
