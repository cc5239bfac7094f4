# Mirrors: the torch.optim documentation ("Per-parameter options" with a base and a
# classifier group, "How to adjust learning rate" with ExponentialLR and StepLR stepped
# once per epoch, and optimizer.state_dict()), with Adam and SGD-with-momentum.
# precision: float64
import torch
from torch import nn, optim
from torch.optim.lr_scheduler import ExponentialLR, StepLR

torch.set_default_dtype(torch.float64)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
        self.classifier = nn.Linear(4, 2)

    def forward(self, x):
        return self.classifier(self.base(x))


def fixed(model):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(torch.linspace(-0.6, 0.6, p.numel()).reshape(p.shape) + 0.05 * i)
    return model


X = torch.linspace(-1, 1, 15).reshape(5, 3)
target = torch.tensor([0, 1, 1, 0, 1])
loss_fn = nn.CrossEntropyLoss()

model = fixed(Net())
optimizer = optim.SGD(
    [
        {"params": model.base.parameters()},
        {"params": model.classifier.parameters(), "lr": 1e-3},
    ],
    lr=1e-2,
    momentum=0.9,
)
print([g["lr"] for g in optimizer.param_groups], optimizer.param_groups[1]["momentum"])
scheduler = ExponentialLR(optimizer, gamma=0.9)
for epoch in range(5):
    optimizer.zero_grad()
    loss = loss_fn(model(X), target)
    loss.backward()
    optimizer.step()
    scheduler.step()
    print(epoch, loss.item(), scheduler.get_last_lr())
print(model.classifier.weight.tolist())

model = fixed(Net())
optimizer = optim.Adam(model.parameters(), lr=0.05, betas=(0.9, 0.99), weight_decay=1e-3)
scheduler = StepLR(optimizer, step_size=2, gamma=0.5)
for epoch in range(6):
    optimizer.zero_grad()
    loss = loss_fn(model(X), target)
    loss.backward()
    optimizer.step()
    scheduler.step()
    print(epoch, loss.item(), optimizer.param_groups[0]["lr"])
state = optimizer.state_dict()
print(sorted(state), state["param_groups"][0]["params"], float(state["state"][0]["step"]))
print(state["state"][0]["exp_avg"].tolist())
