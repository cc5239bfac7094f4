"""Build the course website (``make site``): README, the executed lessons and the API
reference, as static HTML that any static host can serve.

The pages are staged in a folder that mirrors the repository (README.md at the top,
the lessons in naivegraph/course/, the pictures where README and the lessons look for
them), so every relative link of README and of the lessons works unchanged; Jupyter
Book 1 (``pip install '.[site]'``) executes the lessons and writes the HTML, which is
then moved to the output folder (``build/site`` by default, ``index.html`` first).

The lessons are executed as a learner's copy would run them: exercises unsolved, no
solution in the page, ``ex.reveal`` turned off.

Usage::

    python docs/site/build_site.py [OUT]
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PAGES = ["_config.yml", "_toc.yml", "api.md"]
FROM_THE_REPOSITORY = ["README.md", "figures", "docs/onnx_ops.md", "benchmarks/README.md"]
PICTURES_IN_DOCS = "docs/*.png"  # the screenshots README shows


def _from_the_repository() -> list[str]:
    pictures = sorted(p.relative_to(REPO).as_posix() for p in REPO.glob(PICTURES_IN_DOCS))
    return FROM_THE_REPOSITORY + pictures


def stage(folder: Path) -> None:
    """Copy the site's pages into ``folder``, laid out as in the repository."""
    sys.path.insert(0, str(REPO))
    from naivegraph import course
    from naivegraph.lessons.workcopy import student_version

    for name in PAGES:
        shutil.copyfile(HERE / name, folder / name)
    for name in _from_the_repository():
        source, target = REPO / name, folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copyfile(source, target)
    lessons = folder / "naivegraph" / "course"
    lessons.mkdir(parents=True)
    for asset in course.assets():
        (lessons / asset).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(course.FOLDER / asset, lessons / asset)
    for notebook in course.notebooks():
        text = json.dumps(student_version(notebook), indent=1, ensure_ascii=False)
        (lessons / notebook.name).write_text(text + "\n", encoding="utf-8")


def build(out: Path) -> Path:
    """Stage, build and move the HTML to ``out``; returns ``out``."""
    out = Path(out).resolve()
    work = out.parent / f"{out.name}.staging"
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    (work / "book").mkdir(parents=True)
    stage(work / "book")
    jupyter_book = "from jupyter_book.cli.main import main; main()"  # its console script
    command = [sys.executable, "-c", jupyter_book, "build", str(work / "book"),
               "--path-output", str(work), "--builder", "html"]  # fmt: skip
    subprocess.run(command, check=True, cwd=work)
    shutil.move(str(work / "_build" / "html"), str(out))
    shutil.rmtree(work)
    return out


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else REPO / "build" / "site"
    started = time.perf_counter()
    build(out)
    pages = sum(1 for p in out.rglob("*.html") if "_static" not in p.parts)  # not templates
    print(f"{out}/index.html: {pages} pages in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
