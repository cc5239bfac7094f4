"""`naivegraph lessons` and `naivegraph check` work on the learner's copy of the course,
never on the course's own notebooks."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from naivegraph import cli, course
from naivegraph.cli import main
from naivegraph.lessons import workcopy

REPO = Path(__file__).resolve().parents[2]
LESSON_NAMES = [p.name for p in course.notebooks()]


def _run(argv: list[str]) -> tuple[int, str]:
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        status = main(argv)
    return status, printed.getvalue()


@pytest.fixture
def no_jupyterlab(monkeypatch):
    """Fail the test if JupyterLab would be started."""

    def started(*args, **kwargs):
        raise AssertionError(f"JupyterLab was started: {args}")

    monkeypatch.setattr(cli.subprocess, "call", started)


@pytest.fixture
def home(monkeypatch, tmp_path):
    """An installed naivegraph (no checkout) with ``tmp_path/home`` as the home folder."""
    monkeypatch.setattr(workcopy, "checkout_root", lambda: None)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_the_course_is_thirteen_lessons_and_the_animations_they_show():
    assert len(LESSON_NAMES) == 13 and LESSON_NAMES[0] == "01_computational_graphs.ipynb"
    assert [p.as_posix() for p in course.assets()] == [
        "figures/animation_dynamic_step.gif",
        "figures/animation_static_runs.gif",
    ]


def test_copy_writes_every_lesson_and_picture_and_exits(tmp_path, no_jupyterlab):
    status, printed = _run(["lessons", "--copy", str(tmp_path / "mine")])
    assert status == 0
    assert f"copied the course into {tmp_path / 'mine'}: 13 lessons" in printed
    for name in LESSON_NAMES:
        assert (tmp_path / "mine" / name).read_bytes() == (course.FOLDER / name).read_bytes()
    assert (tmp_path / "mine" / "figures" / "animation_static_runs.gif").is_file()


def test_copy_into_a_copy_keeps_the_learners_answers(tmp_path, no_jupyterlab):
    folder = tmp_path / "mine"
    _run(["lessons", "--copy", str(folder)])
    (folder / LESSON_NAMES[2]).write_text("my answers")
    status, printed = _run(["lessons", "--copy", str(folder)])
    assert status == 0 and "already holds every lesson; nothing copied" in printed
    assert (folder / LESSON_NAMES[2]).read_text() == "my answers"


def test_in_a_checkout_the_working_copy_is_the_ignored_work_folder():
    assert workcopy.checkout_root() == REPO
    assert workcopy.default_folder() == REPO / "work"
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "work/01_computational_graphs.ipynb"], cwd=REPO
    )
    assert ignored.returncode == 0, "work/ must be ignored by git"


def test_installed_the_working_copy_is_in_the_home_folder(home):
    assert workcopy.default_folder() == home / "naivegraph-lessons"


def test_check_makes_the_working_copy_on_its_first_run(home, capsys):
    assert main(["check", "4", "--reveal"]) == 0
    captured = capsys.readouterr()  # the notice goes to stderr: stdout may be JSON
    assert f"copied the course into {home / 'naivegraph-lessons'}: 13 lessons" in captured.err
    assert "[04-1]" in captured.out
    assert sorted(p.name for p in course.notebooks(home / "naivegraph-lessons")) == LESSON_NAMES


def test_first_run_takes_over_lessons_edited_in_the_old_lessons_folder(
    home, monkeypatch, tmp_path, capsys
):
    old = tmp_path / "checkout" / "lessons"
    old.mkdir(parents=True)
    shutil.copyfile(course.FOLDER / LESSON_NAMES[0], old / LESSON_NAMES[0])  # not edited
    edited = json.loads((course.FOLDER / LESSON_NAMES[1]).read_text(encoding="utf-8"))
    edited["cells"][2]["source"] = "my_answer = 42"
    (old / LESSON_NAMES[1]).write_text(json.dumps(edited), encoding="utf-8")
    monkeypatch.setattr(workcopy, "old_lessons_folder", lambda: old)
    assert main(["check", "2", "--reveal"]) == 0
    err = capsys.readouterr().err
    assert f"kept your answers from {old / LESSON_NAMES[1]}" in err
    assert LESSON_NAMES[0] not in err
    work = home / "naivegraph-lessons"
    assert (
        json.loads((work / LESSON_NAMES[1]).read_text())["cells"][2]["source"] == "my_answer = 42"
    )
    assert (work / LESSON_NAMES[0]).read_bytes() == (course.FOLDER / LESSON_NAMES[0]).read_bytes()


def test_reset_restores_one_lesson_and_keeps_the_old_one_beside_it(tmp_path, no_jupyterlab):
    folder = tmp_path / "mine"
    _run(["lessons", "--copy", str(folder)])
    lesson = folder / "03_getting_gradients.ipynb"
    for attempt in ("first try", "second try"):
        lesson.write_text(attempt)
        status, printed = _run(["lessons", "--dir", str(folder), "--reset", "3"])
        assert status == 0 and "03_getting_gradients.ipynb restored" in printed
    assert lesson.read_bytes() == (course.FOLDER / lesson.name).read_bytes()
    assert (folder / "03_getting_gradients.before-reset.ipynb").read_text() == "first try"
    assert (folder / "03_getting_gradients.before-reset-2.ipynb").read_text() == "second try"
    # the kept versions are not lessons: `check 3` still finds one notebook
    assert cli._find_lesson("3", folder) == [lesson]


def test_reset_of_an_unknown_lesson_lists_the_lessons(tmp_path, capsys):
    assert main(["lessons", "--dir", str(tmp_path), "--reset", "99"]) == 2
    assert "no lesson matches '99'" in capsys.readouterr().err


def test_lessons_on_a_file_fails_before_jupyterlab_starts(tmp_path, capsys, no_jupyterlab):
    not_a_folder = tmp_path / "notes.txt"
    not_a_folder.write_text("")
    assert main(["lessons", "--lessons", str(not_a_folder)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_check_of_a_missing_folder_says_how_to_make_one(tmp_path, capsys):
    assert main(["check", "1", "--dir", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert f"naivegraph lessons --copy {tmp_path / 'nowhere'}" in err


def test_lessons_opens_the_working_copy_it_made(tmp_path, monkeypatch):
    started = []
    monkeypatch.setattr(cli, "_jupyterlab", lambda: ["jupyter-lab"])
    monkeypatch.setattr(cli.subprocess, "call", lambda argv: started.append(argv) or 0)
    status, _ = _run(["lessons", "--dir", str(tmp_path / "mine"), "--", "--no-browser"])
    assert status == 0
    assert started[0][0] == "jupyter-lab"
    assert started[0][-2:] == ["--no-browser", str(tmp_path / "mine")]
    assert (tmp_path / "mine" / LESSON_NAMES[0]).is_file()
