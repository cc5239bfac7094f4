# Mirrors: PyTorch notes "Extending PyTorch", the PyTorch 2 style torch.autograd.Function
# with a separate setup_context(ctx, inputs, output), mark_non_differentiable, and
# ctx.set_materialize_grads(False) with once_differentiable backward.
# precision: float64
import torch
from torch.autograd import Function
from torch.autograd.function import once_differentiable

torch.set_default_dtype(torch.float64)


class LinearFunction(Function):
    @staticmethod
    def forward(input, weight, bias):
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def setup_context(ctx, inputs, output):
        input, weight, bias = inputs
        ctx.save_for_backward(input, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        return grad_output.mm(weight), grad_output.t().mm(input), grad_output.sum(0)


x = torch.linspace(-1, 1, 6).reshape(2, 3).requires_grad_()
w = torch.linspace(0.2, -0.2, 6).reshape(2, 3).requires_grad_()
b = torch.tensor([0.1, -0.1], requires_grad=True)
out = LinearFunction.apply(x, w, b)
out.pow(2).sum().backward()
print(out.tolist(), x.grad.tolist(), w.grad.tolist(), b.grad.tolist())


class SimpleFunc(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(x)
        return x.clone(), x.clone()

    @staticmethod
    @once_differentiable
    def backward(ctx, g1, g2):
        (x,) = ctx.saved_tensors
        grad_input = torch.zeros_like(x)
        if g1 is not None:
            grad_input += g1
        if g2 is not None:
            grad_input += g2 * 2
        return grad_input


a = torch.tensor([1.0, 2.0], requires_grad=True)
first, _ = SimpleFunc.apply(a)
first.sum().backward()
print(a.grad.tolist())
