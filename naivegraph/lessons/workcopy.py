"""The learner's working copy of the course.

The course's notebooks (:mod:`naivegraph.course`) are never opened for work: JupyterLab
rewrites a notebook's metadata on open, and a learner's answers in a tracked file would
conflict with the next ``git pull``.  ``naivegraph lessons`` and ``naivegraph check`` use
a copy instead: ``work/`` at the root of a checkout (ignored by git), or
``~/naivegraph-lessons`` for an installed package.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp()) / "mine"
>>> prepare(folder) == [f"copied the course into {folder}: 12 lessons"]
True
>>> prepare(folder)  # a second run changes nothing
[]
>>> reset(folder, "2")
'02_leaf_tensors.ipynb restored; your version is now 02_leaf_tensors.before-reset.ipynb'
"""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

from .. import course

#: The working copy's folder name in a home directory.
HOME_FOLDER = "naivegraph-lessons"


class WorkCopyError(Exception):
    """The working copy cannot be made or used; the message says what to do."""


def checkout_root() -> Path | None:
    """The root of the git checkout this naivegraph runs from, or None when installed."""
    root = Path(__file__).resolve().parents[2]
    is_checkout = (root / ".git").exists() and (root / "pyproject.toml").is_file()
    return root if is_checkout else None


def default_folder() -> Path:
    """``work/`` in a checkout, ``~/naivegraph-lessons`` elsewhere."""
    root = checkout_root()
    return root / "work" if root is not None else Path.home() / HOME_FOLDER


def old_lessons_folder() -> Path | None:
    """Where a checkout kept its notebooks before the course moved into the package.

    A learner who answered exercises there has notebooks that differ from the course's;
    the first working copy takes them over.
    """
    root = checkout_root()
    return root / "lessons" if root is not None else None


def prepare(folder: Path) -> list[str]:
    """Make ``folder`` a working copy: copy every lesson (and picture) it lacks.

    A notebook already in ``folder`` is never overwritten.  A lesson the learner edited
    in the old ``lessons/`` folder of a checkout is copied instead of the course's.
    Returns what was done, one line each (nothing when the copy was complete).
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise WorkCopyError(f"{folder} is a file, not a folder; pass --dir with a folder")
    missing = [nb for nb in course.notebooks() if not (folder / nb.name).exists()]
    assets = [a for a in course.assets() if not (folder / a).exists()]
    if not missing and not assets:
        return []
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for asset in assets:
            (folder / asset).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(course.FOLDER / asset, folder / asset)
        kept = [_copy_lesson(nb, folder) for nb in missing]
    except OSError as error:
        raise WorkCopyError(
            f"cannot write the lessons into {folder}: {error.strerror or error}; "
            "pass --dir with a folder you can write to"
        ) from error
    done = [f"copied the course into {folder}: {len(missing)} lessons"]
    done += [f"kept your answers from {old}" for old in kept if old is not None]
    return done


def _copy_lesson(notebook: Path, folder: Path) -> Path | None:
    """Copy one lesson; returns the learner's old notebook when that was taken instead."""
    old_folder = old_lessons_folder()
    old = old_folder / notebook.name if old_folder is not None else None
    if old is not None and old.is_file() and not filecmp.cmp(old, notebook, shallow=False):
        shutil.copyfile(old, folder / notebook.name)
        return old
    shutil.copyfile(notebook, folder / notebook.name)
    return None


def find(folder: Path, lesson: str | None) -> list[Path]:
    """The lesson notebooks of a working copy matching ``lesson`` (a number or part of a
    name; all of them when None)."""
    folder = Path(folder)
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise WorkCopyError(
            f"lessons folder {folder} {what}; run `naivegraph lessons --copy {folder}` "
            "to make it, or pass --dir with the folder of your lesson notebooks"
        )
    notebooks = course.notebooks(folder)
    if not notebooks:
        raise WorkCopyError(
            f"no lesson notebooks (NN_name.ipynb) in {folder}; pass --dir with the folder "
            "that holds them"
        )
    if lesson is None:
        return notebooks
    matches = (
        [p for p in notebooks if p.name.startswith(f"{int(lesson):02d}_")]
        if lesson.isdigit()
        else [p for p in notebooks if lesson in p.stem]
    )
    if not matches:
        listed = ", ".join(p.stem for p in notebooks)
        raise WorkCopyError(f"no lesson matches {lesson!r} in {folder} (lessons: {listed})")
    return matches


def reset(folder: Path, lesson: str) -> str:
    """Put the course's version of one lesson back, keeping the learner's beside it as
    ``NN_name.before-reset.ipynb`` (``-2``, ``-3``... when that name is taken)."""
    course_copy = find(course.FOLDER, lesson)
    if len(course_copy) != 1:
        names = ", ".join(p.stem for p in course_copy)
        raise WorkCopyError(f"{lesson!r} names several lessons ({names}); give its number")
    notebook = course_copy[0]
    target = Path(folder) / notebook.name
    if not target.exists():
        prepare(folder)
        return f"{notebook.name} copied (there was none to reset)"
    backup = _free_name(target)
    target.rename(backup)
    shutil.copyfile(notebook, target)
    return f"{notebook.name} restored; your version is now {backup.name}"


def _free_name(target: Path) -> Path:
    candidate = target.with_name(f"{target.stem}.before-reset.ipynb")
    n = 2
    while candidate.exists():
        candidate = target.with_name(f"{target.stem}.before-reset-{n}.ipynb")
        n += 1
    return candidate
