# Mirrors: jcjohnson/pytorch-examples, nn/two_layer_net_optim.py (nn.Sequential of Linear,
# ReLU, Linear; MSELoss(reduction='sum'); torch.optim.Adam(model.parameters(), lr=1e-4) with
# optimizer.zero_grad(), loss.backward(), optimizer.step()). Layers start from numpy values.
# precision: float64
import numpy as np
import torch

N, D_in, H, D_out = 64, 1000, 100, 10

# float32 in the original: 200 float32 steps drift apart, so the run is in float64
torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(4)
x = torch.from_numpy(rng.standard_normal((N, D_in)))
y = torch.from_numpy(rng.standard_normal((N, D_out)))

model = torch.nn.Sequential(
    torch.nn.Linear(D_in, H),
    torch.nn.ReLU(),
    torch.nn.Linear(H, D_out),
)
with torch.no_grad():
    for param in model.parameters():
        param.copy_(torch.from_numpy(rng.uniform(-0.03, 0.03, tuple(param.shape))))
loss_fn = torch.nn.MSELoss(reduction="sum")

learning_rate = 1e-4
optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
for t in range(200):
    y_pred = model(x)

    loss = loss_fn(y_pred, y)
    if t % 40 == 39:
        print(t, loss.item())

    # Before the backward pass, zero the gradients of the variables the optimizer updates.
    optimizer.zero_grad()

    loss.backward()

    # Calling the step function on an Optimizer makes an update to its parameters
    optimizer.step()

group = optimizer.param_groups[0]
print(len(optimizer.param_groups), group["lr"], group["betas"])
print(model[2].bias.tolist())
