"""``ng.autograd.functional``: Jacobians and Hessians of whole functions."""

from ..dynamic.functional import hessian, jacobian

__all__ = ["hessian", "jacobian"]
