"""``dir(F)`` lists every op of the table (tab completion reads it), in a fresh process
as well, where no op has been looked up yet."""

from __future__ import annotations

import subprocess
import sys

from naivegraph.ops import F
from naivegraph.ops.core import OPS


def test_dir_of_f_lists_every_op_of_the_table():
    names = dir(F)
    assert set(OPS) <= set(names)
    assert {"exp", "log", "sigmoid", "matmul"} <= set(names)
    assert names == sorted(names)


def test_dir_of_f_lists_the_ops_before_any_is_used():
    code = "from naivegraph.ops import F; print(' '.join(n for n in dir(F) if n[0] != '_'))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert {"exp", "log", "sigmoid", "matmul"} <= set(out)


def test_every_name_dir_of_f_lists_is_a_function():
    assert all(callable(getattr(F, name)) for name in dir(F) if not name.startswith("_"))
