# Mirrors: jcjohnson/pytorch-examples, autograd/two_layer_net_autograd.py (weights with
# requires_grad=True, the forward pass x.mm(w1).clamp(min=0).mm(w2), loss.backward(), the
# update under torch.no_grad() and w.grad.zero_()). Data and weights come from numpy.
# precision: float64
import numpy as np
import torch

dtype = torch.float64  # torch.float in the original: 200 float32 steps drift apart
device = torch.device("cpu")

N, D_in, H, D_out = 64, 1000, 100, 10

rng = np.random.default_rng(1)
x = torch.tensor(rng.standard_normal((N, D_in)), device=device, dtype=dtype)
y = torch.tensor(rng.standard_normal((N, D_out)), device=device, dtype=dtype)
w1 = torch.tensor(rng.standard_normal((D_in, H)), device=device, dtype=dtype, requires_grad=True)
w2 = torch.tensor(rng.standard_normal((H, D_out)), device=device, dtype=dtype, requires_grad=True)

learning_rate = 1e-6
for t in range(200):
    # Forward pass: compute predicted y using operations on Tensors.
    y_pred = x.mm(w1).clamp(min=0).mm(w2)

    # Compute and print loss using operations on Tensors.
    loss = (y_pred - y).pow(2).sum()
    if t % 40 == 39:
        print(t, loss.item())

    # Use autograd to compute the backward pass.
    loss.backward()

    # Update weights using gradient descent; no_grad keeps the update out of the graph.
    with torch.no_grad():
        w1 -= learning_rate * w1.grad
        w2 -= learning_rate * w2.grad

        # Manually zero the gradients after running the backward pass
        w1.grad.zero_()
        w2.grad.zero_()

print(w1.requires_grad, w1.grad.abs().sum().item(), w2[0].tolist())
