# Mirrors: the torch.func documentation examples (torch.func.grad of sin is cos, grad of
# grad, argnums, has_aux; jacrev; hessian; grad over a model's parameters via
# functional_call-free closures).
# precision: float64
import torch
from torch.func import grad, hessian, jacrev

torch.set_default_dtype(torch.float64)
x = torch.tensor([0.1, 0.7, -1.3])
cos_x = grad(lambda x: torch.sin(x).sum())(x)
print(cos_x.tolist(), torch.cos(x).tolist())
neg_sin_x = grad(lambda x: grad(lambda x: torch.sin(x))(x))(torch.tensor(0.4))
print(neg_sin_x.item())


def f(a, b):
    return (a * b.exp()).sum()


a = torch.tensor([1.0, 2.0])
b = torch.tensor([0.5, -0.5])
ga, gb = grad(f, argnums=(0, 1))(a, b)
print(ga.tolist(), gb.tolist())


def with_aux(x):
    y = x.sin()
    return y.sum(), y.cos()


g, aux = grad(with_aux, has_aux=True)(x)
print(g.tolist(), aux.tolist())

jac = jacrev(torch.sin)(x)
print(jac.tolist())
jac_a = jacrev(lambda a, b: a * b.exp(), argnums=0)(a, b)
print(jac_a.tolist())


def cubic(x):
    return (x**3).sum() + x[0] * x[1]


print(hessian(cubic)(torch.tensor([1.0, 2.0, 3.0])).tolist())
