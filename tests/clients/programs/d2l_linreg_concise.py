# Mirrors: Dive into Deep Learning, "Concise Implementation of Linear Regression"
# (PyTorch): load_array with data.TensorDataset and data.DataLoader(shuffle=is_train),
# next(iter(data_iter)), nn.Sequential(nn.Linear(2, 1)) initialised through
# net[0].weight.data.normal_/bias.data.fill_, nn.MSELoss, optim.SGD, three epochs, and the
# estimation errors. A shuffled loader visits the samples in numpy's permutation under
# naivegraph and torch's under torch, so the shuffled loader prints only what does not
# depend on the order, and training runs over the unshuffled loader.
# precision: float64
import numpy as np
import torch
from torch import nn
from torch.utils import data

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(1)

true_w = torch.tensor([2, -3.4])
true_b = 4.2
features = torch.tensor(rng.standard_normal((100, 2)))
labels = (torch.matmul(features, true_w) + true_b).reshape((-1, 1))
labels += torch.tensor(rng.normal(0, 0.01, (100, 1)))


def load_array(data_arrays, batch_size, is_train=True):
    """Construct a PyTorch data iterator."""
    dataset = data.TensorDataset(*data_arrays)
    return data.DataLoader(dataset, batch_size, shuffle=is_train)


batch_size = 10
data_iter = load_array((features, labels), batch_size)
X, y = next(iter(data_iter))
print("first batch:", type(next(iter(data_iter))).__name__, list(X.shape), list(y.shape))
print("batches per epoch:", len(data_iter))
torch.manual_seed(0)
for epoch in range(2):
    seen = torch.cat([xb for xb, _ in data_iter])
    print(
        "epoch",
        epoch + 1,
        "sees every sample once:",
        sorted(seen[:, 0].tolist()) == sorted(features[:, 0].tolist()),
    )

data_iter = load_array((features, labels), batch_size, is_train=False)
net = nn.Sequential(nn.Linear(2, 1))
net[0].weight.data.normal_(0, 0.01)
net[0].bias.data.fill_(0)
with torch.no_grad():  # the draws differ between libraries: fixed values in their place
    net[0].weight.copy_(torch.tensor([[0.004, -0.012]]))
loss = nn.MSELoss()
trainer = torch.optim.SGD(net.parameters(), lr=0.03)

num_epochs = 3
for epoch in range(num_epochs):
    for X, y in data_iter:
        l = loss(net(X), y)  # noqa: E741  (d2l's name)
        trainer.zero_grad()
        l.backward()
        trainer.step()
    l = loss(net(features), labels)  # noqa: E741
    print(f"epoch {epoch + 1}, loss {l:f}")

w = net[0].weight.data
print("error in estimating w:", (true_w - w.reshape(true_w.shape)).tolist())
b = net[0].bias.data
print("error in estimating b:", (true_b - b).tolist())
