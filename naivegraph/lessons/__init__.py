"""The lessons' tooling: exercise checkers, notebook running, and the figures.

Imported by the notebooks (``from naivegraph.lessons import exercises as ex``) and by
the command line, never by ``import naivegraph``: the autograd core needs numpy only.

- :mod:`naivegraph.lessons.exercises`: what the notebooks import (``ex.check_...``):
  the checkers of :mod:`~naivegraph.lessons.checkers` (one module per lesson, built on
  :mod:`~naivegraph.lessons.checking`) and running a lesson notebook to report on every
  exercise in it (:mod:`~naivegraph.lessons.notebooks`);
- :mod:`naivegraph.lessons.plots`: the matplotlib figures of the lessons (and the small
  models they train in both modes).
"""
