# Mirrors: PyTorch notes "Extending PyTorch", section "Extending torch.nn -- Adding a
# Module" (a Linear module holding nn.Parameters, register_parameter('bias', None),
# extra_repr), computing through a custom autograd Function.
# precision: float64
import torch
import torch.nn as nn


class LinearFunction(torch.autograd.Function):
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
        grad_bias = grad_output.sum(0) if bias is not None else None
        return grad_output.mm(weight), grad_output.t().mm(input), grad_bias


class Linear(nn.Module):
    def __init__(self, input_features, output_features, bias=True):
        super().__init__()
        self.input_features = input_features
        self.output_features = output_features
        self.weight = nn.Parameter(torch.empty(output_features, input_features))
        if bias:
            self.bias = nn.Parameter(torch.empty(output_features))
        else:
            self.register_parameter("bias", None)
        # the notes draw uniform(-0.1, 0.1) values; fixed ones keep both runs identical
        with torch.no_grad():
            self.weight.copy_(
                torch.linspace(-0.1, 0.1, output_features * input_features).reshape(
                    output_features, input_features
                )
            )
            if self.bias is not None:
                self.bias.fill_(0.05)

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)

    def extra_repr(self):
        return "input_features={}, output_features={}, bias={}".format(
            self.input_features, self.output_features, self.bias is not None
        )


torch.set_default_dtype(torch.float64)
model = nn.Sequential(Linear(4, 3), nn.Tanh(), Linear(3, 2, bias=False))
print(model)
print([name for name, _ in model.named_parameters()])
x = torch.linspace(-2, 2, 8).reshape(2, 4)
out = model(x)
out.sum().backward()
print(out.tolist())
print(model[0].weight.grad.tolist(), model[0].bias.grad.tolist(), model[2].weight.grad.tolist())
print(model[2].bias)
