# Mirrors: the docstring examples of torch.autograd.functional.jacobian and hessian
# (exp_reducer, exp_adder, pow_reducer, pow_adder_reducer; create_graph=True).
# precision: float64
import torch
from torch.autograd.functional import hessian, jacobian

torch.set_default_dtype(torch.float64)


def exp_reducer(x):
    return x.exp().sum(dim=1)


inputs = torch.tensor([[0.1, 0.2], [0.3, 0.4]])
print(jacobian(exp_reducer, inputs).tolist())
inputs = torch.tensor([[0.5, -0.2], [0.1, 0.9]])
jac = jacobian(exp_reducer, inputs, create_graph=True)
print(jac.tolist(), jac.requires_grad)


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


inputs = (torch.tensor([0.2, 0.7]), torch.tensor([0.4, 0.1]))
print([j.tolist() for j in jacobian(exp_adder, inputs)])


def pow_reducer(x):
    return x.pow(3).sum()


inputs = torch.tensor([[0.3, 0.6], [0.9, 1.2]])
print(hessian(pow_reducer, inputs).tolist())


def pow_adder_reducer(x, y):
    return (2 * x.pow(2) + 3 * y.pow(2)).sum()


inputs = (torch.tensor([0.5, 1.0]), torch.tensor([1.5, 2.0]))
print([[block.tolist() for block in row] for row in hessian(pow_adder_reducer, inputs)])
