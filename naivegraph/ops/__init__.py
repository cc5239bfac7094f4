"""The op table shared by dynamic and static mode: see :mod:`naivegraph.ops.table`."""

from . import conv as _conv  # noqa: F401  (the convolutional layers' entries)
from . import table as _table
from .core import OPS, Meta, OpDef, call, defop, op_function
from .table import F

__all__ = ["OPS", "Meta", "OpDef", "F", "call", "defop", "op_function"]
