"""The learner's working copy of the course.

The course's notebooks (:mod:`naivegraph.course`) are never opened for work: JupyterLab
rewrites a notebook's metadata on open, and a learner's answers in a tracked file would
conflict with the next ``git pull``.  ``naivegraph lessons`` and ``naivegraph check`` use
a copy instead: ``work/`` at the root of a checkout (ignored by git), or
``~/naivegraph-lessons`` for an installed package.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp()) / "mine"
>>> prepare(folder) == [f"copied the course into {folder}: 13 lessons"]
True
>>> prepare(folder)  # a second run changes nothing
[]
>>> reset(folder, "2")
'02_leaf_tensors.ipynb restored; your version is now 02_leaf_tensors.before-reset.ipynb'
"""

from __future__ import annotations

import filecmp
import json
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


def write_student_copy(folder: Path) -> list[str]:
    """Write the course for students into ``folder``: no exercise keeps its solution (in
    a cell or in metadata), and ``ex.reveal`` says the teacher turned answers off.

    Lessons already in ``folder`` are kept.  Returns what was done, one line each.
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise WorkCopyError(f"{folder} is a file, not a folder; pass a folder to --student")
    missing = [nb for nb in course.notebooks() if not (folder / nb.name).exists()]
    versions = {nb: student_version(nb) for nb in missing}
    shown = {nb: shown_answers(version) for nb, version in versions.items()}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for asset in course.assets():
            (folder / asset).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(course.FOLDER / asset, folder / asset)
        for notebook, version in versions.items():
            if not shown[notebook]:
                text = json.dumps(version, indent=1, ensure_ascii=False)
                (folder / notebook.name).write_text(text + "\n", encoding="utf-8")
    except OSError as error:
        raise WorkCopyError(
            f"cannot write the lessons into {folder}: {error.strerror or error}"
        ) from error
    written = sum(1 for nb in missing if not shown[nb])
    kept = len(course.notebooks()) - len(missing)
    done = [f"wrote {written} student lessons into {folder} (no solutions, reveal off)"]
    done += [
        f"left out {nb.stem}: its reference cells show the answers of {', '.join(ids)}"
        for nb, ids in shown.items()
        if ids
    ]
    return done + ([f"kept the {kept} lessons already there"] if kept else [])


def shown_answers(student: dict) -> list[str]:
    """The exercises of a student notebook whose answers another cell still shows: a line
    of the course's solution (not a blank line or a short one such as ``return x``) in
    any cell of the student version.  Such a lesson is not given to students."""
    ours = {cell["id"]: cell for cell in json.loads(_course_text(student))["cells"] if "id" in cell}
    text = "\n".join("".join(cell["source"]) for cell in student["cells"])
    shown = []
    for cell in ours.values():
        meta = cell.get("metadata", {}).get("naivegraph", {})
        if "solution" not in meta:
            continue
        blanks = set("".join(cell["source"]).splitlines())
        answer = [line for line in meta["solution"].splitlines() if line not in blanks]
        if any(len(line.strip()) > 6 and line in text for line in answer):
            shown.append(meta["exercise"])
    return shown


def _course_text(student: dict) -> str:
    name = student["metadata"]["naivegraph"]["lesson"]
    return (course.FOLDER / f"{name}.ipynb").read_text(encoding="utf-8")


def student_version(notebook: Path) -> dict:
    """A course notebook (as JSON) without its solutions, its first cell turning reveal off."""
    nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        cell.get("metadata", {}).get("naivegraph", {}).pop("solution", None)
    nb["metadata"].setdefault("naivegraph", {})["student"] = True
    setup = next(c for c in nb["cells"] if "exercises as ex" in "".join(c["source"]))
    lines = setup["source"] if isinstance(setup["source"], list) else [setup["source"]]
    setup["source"] = [*lines[:-1], lines[-1].rstrip("\n") + "\n", "ex.reveal_off()"]
    return nb


def is_student_copy(notebook: Path) -> bool:
    """Whether a notebook was written by :func:`write_student_copy`."""
    nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    return bool(nb.get("metadata", {}).get("naivegraph", {}).get("student"))


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
