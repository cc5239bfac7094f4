# Mirrors: jcjohnson/pytorch-examples, autograd/two_layer_net_custom_function.py (a ReLU
# as a torch.autograd.Function subclass with static forward/backward, ctx.save_for_backward,
# ctx.saved_tensors, grad_output.clone() with grad_input[input < 0] = 0, used through
# MyReLU.apply in a manual training loop). Data and weights come from numpy.
# precision: float64
import numpy as np
import torch


class MyReLU(torch.autograd.Function):
    """A ReLU written as a torch.autograd.Function."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


dtype = torch.float64  # torch.float in the original: 200 float32 steps drift apart
device = torch.device("cpu")

N, D_in, H, D_out = 64, 1000, 100, 10

rng = np.random.default_rng(2)
x = torch.tensor(rng.standard_normal((N, D_in)), device=device, dtype=dtype)
y = torch.tensor(rng.standard_normal((N, D_out)), device=device, dtype=dtype)
w1 = torch.tensor(rng.standard_normal((D_in, H)), device=device, dtype=dtype, requires_grad=True)
w2 = torch.tensor(rng.standard_normal((H, D_out)), device=device, dtype=dtype, requires_grad=True)

learning_rate = 1e-6
for t in range(200):
    # To apply our Function, we use Function.apply method. We alias this as 'relu'.
    relu = MyReLU.apply

    y_pred = relu(x.mm(w1)).mm(w2)

    loss = (y_pred - y).pow(2).sum()
    if t % 40 == 39:
        print(t, loss.item())

    loss.backward()

    with torch.no_grad():
        w1 -= learning_rate * w1.grad
        w2 -= learning_rate * w2.grad

        w1.grad.zero_()
        w2.grad.zero_()

print(type(y_pred.grad_fn).__name__.startswith("MyReLU") or y_pred.grad_fn is not None)
print(w2[3].tolist())
