# Mirrors: micrograd's test/test_engine.py, test_sanity_check -- the PyTorch half, which
# builds the expression on torch.Tensor([-4.0]).double() and checks value and gradient.
# precision: float64
import torch

x = torch.Tensor([-4.0]).double()
x.requires_grad = True
z = 2 * x + 2 + x
q = z.relu() + z * x
h = (z * z).relu()
y = h + q + q * x
y.backward()
xpt, ypt = x, y
print(ypt.data.item(), xpt.grad.item())
print(x.dtype == torch.float64, x.grad.dtype == torch.float64)
