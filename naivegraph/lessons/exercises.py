"""Exercise checkers for the lessons, and the tools that run lesson notebooks.

Every checker takes the learner's answer and returns a :class:`Result`:

* truthy when the answer is right, falsy otherwise;
* it prints one line: ``✓ correct [01-2]: ...``, ``✗ not yet [01-2]: you gave ...;
  hint: ...`` (a hint for the mistake, never the answer: :func:`reveal` shows that) or
  ``○ not done yet [01-2]: ...``;
* it never raises.  An answer still left as the placeholder ``...`` (or ``None``)
  reports "not done yet", so "Run All" reaches the last cell of a notebook.

>>> r = check_leaf_grads(28, 8, 10)
✓ correct [01-2]: w1.grad = 28, w2.grad = 8, w3.grad = 10.
>>> bool(r)
True
>>> bool(check_leaf_grads(..., 8, 10))
○ not done yet [01-2]: replace every `...` with your answer, then run the cell again.
False

Notebook helpers: :func:`solutions_notebook` swaps each exercise's reference
solution (kept in the cell metadata) into a notebook, and :func:`run_notebook`
executes a notebook and collects the exercise results printed by its cells.
"""

from . import cell_reads
from .checkers import *  # noqa: F403  (every check_..., one module per lesson)
from .checkers import __all__ as _checks
from .checking import ANSWERS, CHECKERS, Result, reveal, reveal_off, solved
from .notebooks import (
    NotebookRun,
    cell_errors,
    exercise_outcomes,
    read_notebook,
    exercise_ids,
    parse_results,
    run_notebook,
    solutions_notebook,
)

__all__ = [
    "ANSWERS",
    "CHECKERS",
    "reveal",
    "reveal_off",
    "solved",
    "Result",
    "NotebookRun",
    "cell_errors",
    "exercise_outcomes",
    "read_notebook",
    "exercise_ids",
    "parse_results",
    "run_notebook",
    "solutions_notebook",
    *_checks,
]

# In a notebook, the checks of predictions see what the learner's cells did with the
# lesson's objects from here on (cell_reads).
cell_reads.watch_cells()
