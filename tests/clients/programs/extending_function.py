# Mirrors: PyTorch notes "Extending PyTorch", section "Extending torch.autograd"
# (LinearFunction with ctx.needs_input_grad, MulConstant with a non-tensor argument,
# checked with torch.autograd.gradcheck on double inputs).
# precision: float64
import torch
from torch.autograd import Function, gradcheck


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


inp = torch.linspace(-1, 1, 20, dtype=torch.double).reshape(4, 5).requires_grad_()
weight = torch.linspace(0.5, -0.5, 15, dtype=torch.double).reshape(3, 5).requires_grad_()
bias = torch.tensor([0.1, 0.2, 0.3], dtype=torch.double, requires_grad=True)
test = gradcheck(LinearFunction.apply, (inp, weight, bias), eps=1e-6, atol=1e-4)
print(test)

out = LinearFunction.apply(inp, weight, bias)
out.pow(2).sum().backward()
print(out.tolist())
print(inp.grad.tolist(), weight.grad.tolist(), bias.grad.tolist())
print(type(out.grad_fn).__name__)

frozen = torch.ones(2, 5, dtype=torch.double)  # needs_input_grad[0] is False for it
out = LinearFunction.apply(frozen, weight, None)
out.sum().backward()
print(frozen.grad, weight.grad.tolist())

x = torch.tensor([1.0, -2.0, 3.0], dtype=torch.double, requires_grad=True)
y = MulConstant.apply(x, 5.5)
y.sum().backward()
print(y.tolist(), x.grad.tolist())
print(gradcheck(lambda t: MulConstant.apply(t, -0.25), (x,)))
