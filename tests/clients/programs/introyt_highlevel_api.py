# Mirrors: PyTorch tutorial "The Fundamentals of Autograd" (introyt), sections "Autograd
# and In-place Operations" and "The High-Level API" (torch.autograd.functional.jacobian on
# exp_adder, and the vector-Jacobian product through backward(v)).
# precision: float64
import torch

torch.set_default_dtype(torch.float64)


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


inputs = (torch.tensor([0.3]), torch.tensor([0.7]))  # torch.rand(1) each in the tutorial
jac = torch.autograd.functional.jacobian(exp_adder, inputs)
print([j.tolist() for j in jac])

inputs = (torch.tensor([0.1, 0.2, 0.3]), torch.tensor([0.4, 0.5, 0.6]))
jac = torch.autograd.functional.jacobian(exp_adder, inputs)
print([j.tolist() for j in jac])

x = torch.tensor([0.5, -1.0, 1.5], requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
print(y.tolist())
v = torch.tensor([0.1, 1.0, 0.0001])
y.backward(v)
print(x.grad.tolist())

a = torch.linspace(0.0, 6.0, steps=25, requires_grad=True)
try:
    a.sin_()
except RuntimeError as e:
    print("RuntimeError:", "leaf Variable that requires grad" in str(e))
