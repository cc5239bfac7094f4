# Mirrors: jcjohnson/pytorch-examples, nn/two_layer_net_module.py (a TwoLayerNet subclass of
# torch.nn.Module with linear1/linear2 made in __init__, forward using
# self.linear1(x).clamp(min=0), MSELoss(reduction='sum'), torch.optim.SGD lr=1e-4).
# The layers start from numpy values copied in.
# precision: float64
import numpy as np
import torch


class TwoLayerNet(torch.nn.Module):
    def __init__(self, D_in, H, D_out):
        """Instantiate two nn.Linear modules and assign them as member variables."""
        super(TwoLayerNet, self).__init__()
        self.linear1 = torch.nn.Linear(D_in, H)
        self.linear2 = torch.nn.Linear(H, D_out)

    def forward(self, x):
        """Accept a Tensor of input data and return a Tensor of output data."""
        h_relu = self.linear1(x).clamp(min=0)
        y_pred = self.linear2(h_relu)
        return y_pred


N, D_in, H, D_out = 64, 1000, 100, 10

# float32 in the original: 200 float32 steps drift apart, so the run is in float64
torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(5)
x = torch.from_numpy(rng.standard_normal((N, D_in)))
y = torch.from_numpy(rng.standard_normal((N, D_out)))

model = TwoLayerNet(D_in, H, D_out)
with torch.no_grad():
    for param in model.parameters():
        param.copy_(torch.from_numpy(rng.uniform(-0.03, 0.03, tuple(param.shape))))
print([name for name, _ in model.named_parameters()])

criterion = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
for t in range(200):
    y_pred = model(x)

    loss = criterion(y_pred, y)
    if t % 40 == 39:
        print(t, loss.item())

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(model.linear2.bias.tolist())
