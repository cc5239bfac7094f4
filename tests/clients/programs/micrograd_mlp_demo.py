# Mirrors: micrograd's demo notebook (a 2-16-16-1 MLP on a two-moons style data set,
# SVM max-margin loss (1 - y*score).relu().mean() plus L2 regularisation, accuracy, and
# SGD with a decaying learning rate), written with torch tensors.
# precision: float64
import numpy as np
import torch

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(1337)
n = 40
angles = rng.uniform(0, np.pi, n)
upper = rng.random(n) < 0.5
X_np = np.stack(
    [
        np.where(upper, np.cos(angles), 1 - np.cos(angles)),
        np.where(upper, np.sin(angles), 0.5 - np.sin(angles)),
    ],
    axis=1,
) + rng.normal(0, 0.1, (n, 2))
y_np = np.where(upper, 1.0, -1.0)
X = torch.tensor(X_np)
y = torch.tensor(y_np)

model = torch.nn.Sequential(
    torch.nn.Linear(2, 16),
    torch.nn.ReLU(),
    torch.nn.Linear(16, 16),
    torch.nn.ReLU(),
    torch.nn.Linear(16, 1),
)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.uniform(-1, 1, tuple(p.shape))))
print("number of parameters", sum(p.numel() for p in model.parameters()))


def loss_fn():
    scores = model(X).squeeze(1)
    losses = (1 + -y * scores).relu()
    data_loss = losses.sum() * (1.0 / losses.numel())
    alpha = 1e-4
    reg_loss = alpha * sum((p * p).sum() for p in model.parameters())
    total_loss = data_loss + reg_loss
    accuracy = ((y > 0) == (scores > 0)).double().mean()
    return total_loss, accuracy


for k in range(20):
    total_loss, acc = loss_fn()
    model.zero_grad()
    total_loss.backward()
    learning_rate = 1.0 - 0.9 * k / 100
    with torch.no_grad():
        for p in model.parameters():
            p -= learning_rate * p.grad
    if k % 5 == 0:
        print(f"step {k} loss {total_loss.item()}, accuracy {acc.item() * 100}%")
print(model[0].bias.tolist())
