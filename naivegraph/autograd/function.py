"""``ng.autograd.function``: custom differentiable functions (torch.autograd.function).

>>> from naivegraph.autograd.function import Function, FunctionCtx, once_differentiable
>>> Function.__name__, FunctionCtx.__name__, once_differentiable.__name__
('Function', 'FunctionCtx', 'once_differentiable')
"""

from ..dynamic.function import BackwardCFunction, Function, FunctionCtx, once_differentiable

__all__ = ["BackwardCFunction", "Function", "FunctionCtx", "once_differentiable"]
