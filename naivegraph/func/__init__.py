"""Function transforms with ``torch.func``'s names: ``grad``, ``vjp``, ``jvp``,
``jacrev``, ``jacfwd``, ``hessian``, ``vmap``, ``functional_call`` and
``stack_module_state``.

Each takes a function of tensors and returns a function (or values); every derivative
comes from the op table's rules, none is written again here:

* ``vjp`` and ``grad`` are one backward pass (``autograd.grad``);
* ``jvp`` is one forward pass in forward mode (a dual level, see
  :mod:`naivegraph.autograd.forward_ad`): the tangents ride along with the values;
* ``jacrev`` stacks one VJP per output element, ``jacfwd`` one JVP per input element;
  ``hessian`` is ``jacfwd(jacrev(f))`` (forward over reverse);
* ``vmap`` calls the function once per batch element and stacks the results.

**Each transform differentiates its own argument only.**  It calls the function with a
new tensor standing for each differentiated argument (a view of it, or a fresh leaf) and
asks for gradients with respect to that tensor alone.  A closure over the same tensor,
or over an enclosing transform's input, is then a constant for it:
``grad(lambda y: (x * y).sum())(x)`` is ``x``, not ``2 * x``.  This is what torch.func's
levels and JAX's trace levels are for (mixing up two transforms' perturbations is the
classic bug of nested differentiation); here the separate tensors play that part.

Results are built with ``create_graph=True``, so transforms nest; the outermost hands
back plain tensors unless they depend on a tensor requiring grad outside.  There is one
dual level at a time, so a ``jvp`` inside another forward transform
(``jacfwd(jacfwd(f))``) uses the *transpose trick* instead: ``u -> J^T u`` is linear in
``u``, so differentiating ``<J^T u, t>`` with respect to ``u`` gives ``J t``: the same
numbers, for two backward passes instead of one forward pass.

Arguments and results may be nested tuples, lists and dicts of tensors
(:mod:`naivegraph.func.pytree`): ``grad`` of a function of a parameter dict returns a dict.

>>> import naivegraph as ng
>>> f = lambda x: (x ** 3).sum()
>>> ng.func.grad(f)(ng.tensor([1.0, 2.0]))
tensor([ 3., 12.])
>>> out, tangent_out = ng.func.jvp(lambda x: x ** 3, (ng.tensor(2.0),), (ng.tensor(1.0),))
>>> float(out), float(tangent_out)
(8.0, 12.0)
>>> ng.func.hessian(f)(ng.tensor([1.0, 2.0]))
tensor([[ 6.,  0.],
        [ 0., 12.]])
"""

from .functional_call import functional_call, stack_module_state
from .transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp
from .vmap import vmap

__all__ = [
    "grad",
    "grad_and_value",
    "vjp",
    "jvp",
    "jacrev",
    "jacfwd",
    "hessian",
    "vmap",
    "functional_call",
    "stack_module_state",
]
