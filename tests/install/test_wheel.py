"""The wheel carries the course: installed outside the checkout, with its `notebook`
extra, it copies the lessons, checks one and serves them in JupyterLab.

How the venv is made, and why it is sound and fast: the wheel is built from a copy of
the checkout's files and installed by pip into a new venv in a temporary folder, with
no access to the checkout.  Its dependencies are not downloaded again: a ``.pth`` file
puts the site-packages of the Python running the tests (which ``make test`` filled
with the same extras) after the venv's own, and pip installs ``naivegraph[notebook]``
with ``--no-index``, so it must find every requirement the wheel declares for the
extra already installed, or fail.  (A ``--system-site-packages`` venv would not do:
made from a venv's Python it sees the base interpreter's packages, not the venv's.)
The venv's naivegraph comes first on its path, the dependencies' folder processes no
``.pth`` files, so a development install of naivegraph there stays out of the way.
``NAIVEGRAPH_TEST_INDEX=1`` installs everything from the package index instead (slow,
needs the network).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("jupyterlab")
pytest.importorskip("nbclient")

REPO = Path(__file__).resolve().parents[2]
NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv", "work", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache",
    ".hypothesis", "*.whl",
)  # fmt: skip


def _run(argv: list, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kwargs)
    assert done.returncode == 0, f"{argv} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built from a copy of the checkout (the checkout gets no build files)."""
    work = tmp_path_factory.mktemp("wheel")
    shutil.copytree(REPO, work / "src", ignore=NOT_SOURCES)
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    _run([*pip, "-w", str(work / "dist"), str(work / "src")])
    (found,) = (work / "dist").glob("naivegraph-*.whl")
    return found


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> dict:
    """A venv outside the checkout with ``naivegraph[notebook]`` installed from the wheel;
    returns the environment to run its commands in (no PYTHONPATH, a home of its own)."""
    root = tmp_path_factory.mktemp("installed")
    venv = root / "venv"
    env = _outside_env(root, venv)
    if os.environ.get("NAIVEGRAPH_TEST_INDEX") == "1":
        _run([sys.executable, "-m", "venv", str(venv)], env=env)
        _run([str(venv / "bin" / "python"), "-m", "pip", "install", f"{wheel}[notebook]"], env=env)
    else:
        _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], env=env)
        ask = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
        purelib = _run([str(venv / "bin" / "python"), "-c", ask], env=env).stdout.strip()
        dependencies = sysconfig.get_paths()["purelib"]
        (Path(purelib) / "zz_naivegraph_test_dependencies.pth").write_text(dependencies + "\n")
        pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")]
        _run([*pip, "install", "--no-index", "-q", f"{wheel}[notebook]"], env=env)
    (root / "home").mkdir()
    return {"env": env, "cwd": str(root / "home"), "root": root, "bin": venv / "bin"}


def _outside_env(root: Path, venv: Path) -> dict:
    """This process's environment without what points into the checkout or another venv,
    with a home folder and Jupyter folders of its own."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "VIRTUAL_ENV") and not key.startswith("JUPYTER")
    }
    env.update(
        HOME=str(root / "home"),
        PATH=f"{venv / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin",
        JUPYTER_RUNTIME_DIR=str(root / "runtime"),
        JUPYTER_CONFIG_DIR=str(root / "config"),
        JUPYTER_DATA_DIR=str(root / "data"),
    )
    return env


def test_the_wheel_carries_the_notebooks_and_the_pictures_they_show(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    notebooks = [n for n in names if n.startswith("naivegraph/course/") and n.endswith(".ipynb")]
    assert len(notebooks) == 13  # lessons 1 to 13, lesson 8 included
    assert "naivegraph/course/figures/animation_dynamic_step.gif" in names
    assert "naivegraph/course/figures/animation_static_runs.gif" in names
    assert not [n for n in names if n.startswith(("lessons/", "tests/", "figures/"))]


def test_the_installed_naivegraph_is_the_wheels_not_the_checkouts(installed):
    where = _run(
        [str(installed["bin"] / "python"), "-c", "import naivegraph; print(naivegraph.__file__)"],
        env=installed["env"],
        cwd=installed["cwd"],
    ).stdout.strip()
    assert where.startswith(str(installed["root"])) and not where.startswith(str(REPO))


def test_installed_copies_the_course_and_checks_lesson_1(installed):
    naivegraph = str(installed["bin"] / "naivegraph")
    course = installed["root"] / "my-course"
    copied = _run([naivegraph, "lessons", "--copy", str(course)], **_in(installed))
    assert f"copied the course into {course}: 13 lessons" in copied.stdout
    assert (course / "figures" / "animation_dynamic_step.gif").is_file()
    checked = _run([naivegraph, "check", "1", "--dir", str(course)], **_in(installed))
    assert "0 correct, 0 not yet right" in checked.stdout and "not done yet" in checked.stdout
    assert "without encryption" not in checked.stderr


def test_installed_check_makes_the_copy_in_the_home_folder(installed):
    naivegraph = str(installed["bin"] / "naivegraph")
    revealed = _run([naivegraph, "check", "2", "--reveal"], **_in(installed))
    home_copy = Path(installed["env"]["HOME"]) / "naivegraph-lessons"
    assert f"copied the course into {home_copy}" in revealed.stderr
    assert (home_copy / "02_leaf_tensors.ipynb").is_file()


def test_installed_lessons_serves_the_copy_and_its_pictures_headless(installed):
    naivegraph = str(installed["bin"] / "naivegraph")
    course = installed["root"] / "served"
    _run([naivegraph, "lessons", "--copy", str(course)], **_in(installed))
    port = _free_port()
    server = subprocess.Popen(
        [naivegraph, "lessons", "--dir", str(course), "--", "--no-browser", f"--port={port}",
         "--ServerApp.port_retries=0", "--IdentityProvider.token=wheel-test"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        **_in(installed),
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        listing = json.loads(_get(f"{base}/api/contents?token=wheel-test", server))
        gif = _get(f"{base}/files/figures/animation_dynamic_step.gif?token=wheel-test", server)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=60)
    names = {item["name"] for item in listing["content"]}
    assert {"01_computational_graphs.ipynb", "figures"} <= names
    assert gif[:6] == b"GIF89a"


def _in(installed: dict) -> dict:
    return {"env": installed["env"], "cwd": installed["cwd"]}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, server: subprocess.Popen, attempts: int = 240):
    """Poll ``url`` until the server answers (it takes a few seconds to start)."""
    for _ in range(attempts):
        if server.poll() is not None:
            raise AssertionError(f"jupyter-lab exited with status {server.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.read()
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"JupyterLab did not answer at {url}")
