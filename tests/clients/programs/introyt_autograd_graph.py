# Mirrors: PyTorch tutorial "The Fundamentals of Autograd" (introyt), first section:
# sin over linspace, walking d.grad_fn.next_functions, and the gradient 2*cos(a).
# precision: float64
import math

import torch

torch.set_default_dtype(torch.float64)
a = torch.linspace(0.0, 2.0 * math.pi, steps=25, requires_grad=True)
print(a.tolist())
b = torch.sin(a)
c = 2 * b
d = c + 1
out = d.sum()
print(out.item())


def names(fn):
    # the tutorial prints the next_functions tuples; object addresses differ per run,
    # so this prints the node types
    return [(type(f).__name__ if f is not None else None, i) for f, i in fn.next_functions]


print("d:")
print(type(d.grad_fn).__name__)
print(names(d.grad_fn))
print(names(d.grad_fn.next_functions[0][0]))
print(names(d.grad_fn.next_functions[0][0].next_functions[0][0]))
print(names(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]))
print("c:", type(c.grad_fn).__name__)
print("b:", type(b.grad_fn).__name__)
print("a:", a.grad_fn)

out.backward()
print(a.grad.tolist())
print(c.is_leaf, a.is_leaf)
