"""``ng.autograd.graph``: hooks for the tensors that backward keeps (torch.autograd.graph).

>>> import naivegraph as ng
>>> x = ng.tensor([1.0, 2.0], requires_grad=True)
>>> with ng.autograd.graph.saved_tensors_hooks(lambda t: t * 10, lambda t: t):
...     y = x * x
>>> y.sum().backward(); x.grad
tensor([20., 40.])
"""

from ..dynamic.node import Node
from ..dynamic.saved import RawSavedTensor as SavedTensor
from ..dynamic.saved import save_on_cpu, saved_tensors_hooks

__all__ = ["Node", "SavedTensor", "save_on_cpu", "saved_tensors_hooks"]
