"""The op table shared by dynamic and static mode: see :mod:`naivegraph.ops.table`."""

from . import conv as _conv  # noqa: F401  (the convolutional layers' entries)
from . import division as _division  # noqa: F401  (//, % and rounded division)
from . import losses as _losses  # noqa: F401  (smooth L1 and Huber)
from . import scaled as _scaled  # noqa: F401  (addmm(beta, alpha), sum(dtype))
from . import table as _table
from .core import BUILT_IN as _BUILT_IN
from .core import OPS, Meta, OpDef, call, defop, op_function
from .table import F

_BUILT_IN.update(OPS)  # what table.py defined: never replaced from outside

__all__ = ["OPS", "Meta", "OpDef", "F", "call", "defop", "op_function"]
