"""The course: the lesson notebooks and the pictures they show, shipped as package data.

These are the pristine notebooks.  Learners never work in them: ``naivegraph lessons``
and ``naivegraph check`` use a working copy (:mod:`naivegraph.lessons.workcopy`).
Each notebook is built from its source, the jupytext percent file ``src/NN_name.py``
that writes every exercise's answer between nbgrader's solution markers, by ``python -m
naivegraph.course.build``; the sources ship too (``naivegraph lessons --nbgrader`` reads
them).

>>> [p.name for p in notebooks()][:2]
['01_computational_graphs.ipynb', '02_leaf_tensors.ipynb']
>>> source(notebooks()[0]).relative_to(FOLDER).as_posix()
'src/01_computational_graphs.py'
>>> [p.as_posix() for p in assets()]
['figures/animation_dynamic_step.gif', 'figures/animation_static_runs.gif']
"""

from __future__ import annotations

import re
from pathlib import Path

FOLDER = Path(__file__).resolve().parent

#: A lesson notebook's file name: two digits, an underscore, a name ("03_getting_gradients").
LESSON_NAME = re.compile(r"\d\d_[a-z0-9_]+\.ipynb")


def notebooks(folder: Path = FOLDER) -> list[Path]:
    """The lesson notebooks of a folder (the course's by default), in lesson order."""
    return sorted(p for p in folder.glob("*.ipynb") if LESSON_NAME.fullmatch(p.name))


def assets() -> list[Path]:
    """The files the notebooks show (their ``figures/``), relative to the course folder."""
    return sorted(p.relative_to(FOLDER) for p in (FOLDER / "figures").rglob("*") if p.is_file())


def source(notebook: Path) -> Path:
    """The source a course notebook is built from: ``src/NN_name.py``."""
    return FOLDER / "src" / f"{Path(notebook).stem}.py"
