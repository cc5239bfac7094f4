"""Running lesson notebooks: swap in reference solutions, execute, read the results
each exercise printed."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, NamedTuple

from .checking import LINE, PASS, STATUS_OF


class ExerciseOutcome(NamedTuple):
    exercise: str
    status: str  # "pass", "fail" or "todo"
    message: str

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


def _read(path_or_nb):
    import nbformat

    if isinstance(path_or_nb, (str, Path)):
        return nbformat.read(str(path_or_nb), as_version=4)
    return path_or_nb


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
    found = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
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


def run_notebook(
    path, solutions: bool = False, timeout: int = 300, kernel_name: str | None = None
) -> NotebookRun:
    """Execute a lesson notebook top to bottom; return it with its exercise results.

    ``solutions=True`` runs the reference solutions instead of the learner's blanks.
    The working directory is the notebook's folder.  Raises
    ``nbclient.exceptions.CellExecutionError`` when a cell fails.
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
    )
    client.execute()
    return NotebookRun(nb, parse_results(nb))


def _kernel_name() -> str:
    """``python3`` is the kernel ipykernel provides for the running interpreter."""
    return "python3"
