"""``import naivegraph`` needs numpy only; drawing and the lessons load what they need.

Each check runs in a fresh interpreter, so modules imported by other tests cannot hide
an import that ``import naivegraph`` would make on its own.
"""

from __future__ import annotations

import subprocess
import sys

HEAVY = (
    "naivegraph.lessons",
    "graphviz",
    "pygraphviz",
    "matplotlib",
    "nbclient",
    "IPython",
    "PIL",
    "torch",
)


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip()


def test_import_naivegraph_loads_no_lesson_tooling_and_no_graphviz():
    loaded = _run(
        "import sys, naivegraph; "
        f"print([m for m in sys.modules if m.split('.')[0] in {HEAVY!r} "
        f"or m.startswith('naivegraph.lessons')])"
    )
    assert loaded == "[]"


def test_import_naivegraph_static_is_numpy_only_too():
    loaded = _run(
        "import sys, naivegraph.static; "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    )
    assert loaded == "[]"


def test_the_first_drawing_loads_graphviz_and_works():
    out = _run(
        "import sys, naivegraph as ng\n"
        "x = ng.tensor(2.0, requires_grad=True)\n"
        "before = 'graphviz' in sys.modules\n"
        "d = ng.render(x * x, kind='backward')\n"
        "print(before, 'graphviz' in sys.modules, 'MulBackward0' in d.source)"
    )
    assert out == "False True True"


def test_gradcheck_works_without_the_lessons():
    out = _run(
        "import sys, naivegraph as ng\n"
        "x = ng.tensor([1.0, 2.0], dtype=ng.float64, requires_grad=True)\n"
        "print(ng.autograd.gradcheck(lambda t: (t * t).sum(), (x,)),"
        " 'naivegraph.lessons' in sys.modules)"
    )
    assert out == "True False"


def test_python_dash_m_naivegraph_is_the_command_line():
    done = subprocess.run(
        [sys.executable, "-m", "naivegraph", "render", "no-such-example"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "unknown example 'no-such-example'" in done.stderr
    assert "Traceback" not in done.stderr
