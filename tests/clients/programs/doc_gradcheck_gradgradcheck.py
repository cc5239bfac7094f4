# Mirrors: the torch.autograd.gradcheck / gradgradcheck documentation (double-precision
# inputs with requires_grad, a passing check returning True, and a wrong backward caught
# with raise_exception=False).
# precision: float64
import torch
from torch.autograd import Function, gradcheck, gradgradcheck

torch.set_default_dtype(torch.float64)
x = torch.tensor([[0.2, -0.4, 0.6], [0.8, -1.0, 1.2]], requires_grad=True)
w = torch.tensor([[0.5, 0.1], [-0.3, 0.7], [0.2, -0.6]], requires_grad=True)


def f(x, w):
    return (x @ w).tanh() * x.sum()


print(f(x, w).sum().item())
print(gradcheck(f, (x, w)))
print(gradgradcheck(f, (x, w)))


class WrongSquare(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x  # should be 2 * grad * x


print(gradcheck(WrongSquare.apply, (x,), raise_exception=False))
