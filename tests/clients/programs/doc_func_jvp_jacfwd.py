# Mirrors: the torch.func documentation examples for forward mode (torch.func.jvp with
# primals and tangents, jacfwd, and jacfwd(jacrev(f)) as a Hessian).
# precision: float64
import torch
from torch.func import jacfwd, jacrev, jvp

torch.set_default_dtype(torch.float64)
x = torch.tensor([0.3, -0.6, 0.9])
out, jvp_out = jvp(torch.sin, (x,), (torch.ones(3),))
print(out.tolist(), jvp_out.tolist())


def f(a, b):
    return a * b.tanh()


out, jvp_out = jvp(f, (x, x * 2), (torch.ones(3), torch.full((3,), 0.5)))
print(jvp_out.tolist())
print(jacfwd(torch.sin)(x).tolist())
print(jacfwd(f, argnums=1)(x, x).tolist())


def g(x):
    return (x.exp() * x).sum()


print(jacfwd(jacrev(g))(x).tolist())
