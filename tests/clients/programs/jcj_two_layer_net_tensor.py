# Mirrors: jcjohnson/pytorch-examples, tensor/two_layer_net_tensor.py (a two-layer ReLU
# network fit to random data with torch Tensors only: mm, clamp(min=0), t(), clone, masked
# assignment grad_h[h < 0] = 0, in-place weight updates; dtype torch.float on the CPU).
# The data and weights come from numpy, not torch.randn, so both runs start alike.
# precision: float64
import numpy as np
import torch

dtype = torch.float64  # torch.float in the original: 200 float32 steps drift apart
device = torch.device("cpu")

# N is batch size; D_in is input dimension; H is hidden dimension; D_out is output dimension.
N, D_in, H, D_out = 64, 1000, 100, 10

rng = np.random.default_rng(0)
x = torch.from_numpy(rng.standard_normal((N, D_in))).to(device)
y = torch.from_numpy(rng.standard_normal((N, D_out))).to(device)
w1 = torch.tensor(rng.standard_normal((D_in, H)), device=device, dtype=dtype)
w2 = torch.tensor(rng.standard_normal((H, D_out)), device=device, dtype=dtype)
print(x.dtype == torch.float64, w1.dtype == dtype, tuple(w1.shape), tuple(w2.shape))

learning_rate = 1e-6
for t in range(200):
    # Forward pass: compute predicted y
    h = x.mm(w1)
    h_relu = h.clamp(min=0)
    y_pred = h_relu.mm(w2)

    loss = (y_pred - y).pow(2).sum().item()
    if t % 40 == 39:
        print(t, loss)

    # Backprop to compute gradients of w1 and w2 with respect to loss
    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.t().mm(grad_y_pred)
    grad_h_relu = grad_y_pred.mm(w2.t())
    grad_h = grad_h_relu.clone()
    grad_h[h < 0] = 0
    grad_w1 = x.t().mm(grad_h)

    # Update weights using gradient descent
    w1 -= learning_rate * grad_w1
    w2 -= learning_rate * grad_w2

print(w2[:2].tolist())
