# Mirrors: jcjohnson/pytorch-examples, nn/two_layer_net_nn.py (torch.nn.Sequential of
# Linear, ReLU, Linear; torch.nn.MSELoss(reduction='sum'); model.zero_grad(),
# loss.backward(), and the update param.data -= learning_rate * param.grad over
# model.parameters()). The layers start from numpy values copied in, not torch's draws.
# precision: float64
import numpy as np
import torch

N, D_in, H, D_out = 64, 1000, 100, 10

# float32 in the original: 200 float32 steps drift apart, so the run is in float64
torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(3)
x = torch.from_numpy(rng.standard_normal((N, D_in)))
y = torch.from_numpy(rng.standard_normal((N, D_out)))

model = torch.nn.Sequential(
    torch.nn.Linear(D_in, H),
    torch.nn.ReLU(),
    torch.nn.Linear(H, D_out),
)
with torch.no_grad():
    for param in model.parameters():
        bound = 1 / np.sqrt(param.shape[-1] if param.dim() == 2 else 100)
        param.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(param.shape))))
print(model)

loss_fn = torch.nn.MSELoss(reduction="sum")

learning_rate = 1e-4
for t in range(200):
    y_pred = model(x)

    loss = loss_fn(y_pred, y)
    if t % 40 == 39:
        print(t, loss.item())

    # Zero the gradients before running the backward pass.
    model.zero_grad()

    loss.backward()

    # Update the weights using gradient descent.
    for param in model.parameters():
        param.data -= learning_rate * param.grad

print([tuple(p.shape) for p in model.parameters()])
print(model[2].bias.tolist())
