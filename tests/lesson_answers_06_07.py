"""Lessons 6 and 7 as the checker tests use them: the lesson's static model built around
a learner's loss, the lesson's graph with its gradients, the secrets a hint must never
state, and a notebook shell whose cells the 07-2 checker can read."""

from __future__ import annotations

import numpy as np

import naivegraph.static as ns
from naivegraph.lessons import cell_reads, checking


def static_model(body, named=True):
    """Lesson 6's graph with the loss ``body`` builds, its Variables named w1, w2, w3
    (or left unnamed)."""
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2, 2))
        names = ("w1", "w2", "w3") if named else (None, None, None)
        w1, w2, w3 = (ns.Variable(v, name=n) for v, n in zip((2.0, 3.0, 4.0), names))
        loss = body(x, w1, w2, w3)
    return g, x, loss


def unnamed_static_model(body):
    """Lesson 6's graph with its Variables left unnamed."""
    return static_model(body, named=False)


def model(x, w1, w2, w3):
    return ns.mean((x * w1 + w2) * (x * w1 * w3))


MODEL_SECRETS = ("40", "112", "ns.mean(", "x * w1")


def lesson_graph():
    g = ns.Graph()
    with g:
        x = ns.placeholder("input", shape=(2, 2))
        w1, w2, w3 = (
            ns.Variable(2.0, name="w1"),
            ns.Variable(3.0, name="w2"),
            ns.Variable(4.0, name="w3"),
        )
        loss = ns.mean((x * w1 + w2) * (x * w1 * w3) * 1.0 + 0.0)
        grads = ns.gradients(loss, [w1, w2, w3])
    return g, x, (w1, w2, w3), loss, grads


STEP_SECRETS = ("[40", "28, 8", "g.compile(", "outputs=[loss")
RULE_SECRETS = ("x * 2, x * -1", "ng.where(", "x > 0,")

SHELL_SETUP = (
    "import numpy as np\nimport naivegraph as ng\nimport naivegraph.static as ns\n"
    "from naivegraph.lessons import exercises as ex\n"
    "SCALE = 2.0\ndef scaled(x):\n    return x * SCALE\n"
    "traced = ns.trace(scaled, np.ones(2))\n"
)


def notebook_shell(more_setup: str = ""):
    """A notebook shell whose cells the checker can read, as in Jupyter (yield it from a
    fixture: the shell is cleared afterwards)."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    printing = np.get_printoptions()  # a lesson's cells set numpy's print options
    sh = InteractiveShell.instance(config=config)
    cell_reads.watch_cells(sh)  # as importing the exercises does in a fresh kernel
    checking.SOLVED.clear()  # a fresh kernel has solved nothing yet
    sh.run_cell(SHELL_SETUP + more_setup, store_history=True)
    try:
        yield sh
    finally:
        InteractiveShell.clear_instance()
        np.set_printoptions(**printing)


def run_in_notebook(shell, *cells: str):
    """Run ``cells`` one after another as notebook cells; the last one's result."""
    result = None
    for cell in cells:
        checking.TRIES.clear()
        result = shell.run_cell(cell, store_history=True).result
    return result


def run_answer_cell(shell, answer: str):
    checking.TRIES.clear()
    shell.run_cell(
        "SCALE = 10.0\n" + answer + "\nresult = ex.check_trace_pitfall(traced_result, "
        "eager_result)\n",
        store_history=True,
    )
    return shell.user_ns["result"]
