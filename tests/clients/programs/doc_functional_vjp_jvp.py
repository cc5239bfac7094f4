# Mirrors: the docstring examples of torch.autograd.functional.vjp, jvp, vhp and hvp
# (exp_reducer, adder, pow_reducer; vectors v of the input's or output's shape).
# precision: float64
import torch
from torch.autograd.functional import hvp, jvp, vhp, vjp

torch.set_default_dtype(torch.float64)


def exp_reducer(x):
    return x.exp().sum(dim=1)


inputs = torch.tensor([[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8], [0.9, 1.0, 1.1, 1.2]])
v = torch.ones(3)
out, vjp_value = vjp(exp_reducer, inputs, v)
print(out.tolist(), vjp_value.tolist())


def adder(x, y):
    return 2 * x + 3 * y


inputs = (torch.tensor([0.3, 0.6]), torch.tensor([0.9, 1.2]))
v = torch.ones(2)
out, (gx, gy) = vjp(adder, inputs, v)
print(out.tolist(), gx.tolist(), gy.tolist())

inputs = torch.tensor([[0.2, 0.4], [0.6, 0.8]])
v = torch.ones(2, 2)
out, jvp_value = jvp(exp_reducer, inputs, v)
print(out.tolist(), jvp_value.tolist())


def pow_reducer(x):
    return x.pow(3).sum()


inputs = torch.tensor([[0.5, 1.5], [2.5, 3.5]])
v = torch.ones(2, 2)
out, vhp_value = vhp(pow_reducer, inputs, v)
print(out.item(), vhp_value.tolist())
out, hvp_value = hvp(pow_reducer, inputs, v)
print(out.item(), hvp_value.tolist())
