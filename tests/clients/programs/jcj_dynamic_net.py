# Mirrors: jcjohnson/pytorch-examples, nn/dynamic_net.py (a DynamicNet module whose forward
# reuses middle_linear a random number of times, 0 to 3, drawn with Python's random.randint;
# MSELoss(reduction='sum'); torch.optim.SGD with lr=1e-4 and momentum=0.9). Python's random
# is seeded, the data and layers come from numpy, so both runs draw the same depths.
# precision: float64
import random

import numpy as np
import torch


class DynamicNet(torch.nn.Module):
    def __init__(self, D_in, H, D_out):
        """Three nn.Linear instances that we will use in the forward pass."""
        super(DynamicNet, self).__init__()
        self.input_linear = torch.nn.Linear(D_in, H)
        self.middle_linear = torch.nn.Linear(H, H)
        self.output_linear = torch.nn.Linear(H, D_out)

    def forward(self, x):
        """Apply the middle layer 0 to 3 times, reusing its weights each time."""
        h_relu = self.input_linear(x).clamp(min=0)
        for _ in range(random.randint(0, 3)):
            h_relu = self.middle_linear(h_relu).clamp(min=0)
        y_pred = self.output_linear(h_relu)
        return y_pred


random.seed(0)
N, D_in, H, D_out = 64, 1000, 100, 10

# float32 in the original: 200 float32 steps drift apart, so the run is in float64
torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(6)
x = torch.from_numpy(rng.standard_normal((N, D_in)))
y = torch.from_numpy(rng.standard_normal((N, D_out)))

model = DynamicNet(D_in, H, D_out)
with torch.no_grad():
    for param in model.parameters():
        param.copy_(torch.from_numpy(rng.uniform(-0.05, 0.05, tuple(param.shape))))

criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
for t in range(200):
    y_pred = model(x)

    loss = criterion(y_pred, y)
    if t % 40 == 39:
        print(t, loss.item())

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(model.output_linear.bias.tolist())
