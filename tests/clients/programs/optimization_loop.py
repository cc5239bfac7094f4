# Mirrors: PyTorch tutorial "Optimizing Model Parameters" (beginner basics/optimization):
# train_loop / test_loop with CrossEntropyLoss and SGD, model.train()/model.eval(),
# accuracy via argmax -- with a synthetic data set batched by hand instead of a DataLoader.
# precision: float64
import numpy as np
import torch
from torch import nn

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(2)
centres = rng.standard_normal((4, 10)) * 2
labels = rng.integers(0, 4, 96)
features = centres[labels] + rng.standard_normal((96, 10))
train = [
    (torch.tensor(features[i : i + 16]), torch.tensor(labels[i : i + 16])) for i in range(0, 64, 16)
]
test = [
    (torch.tensor(features[i : i + 16]), torch.tensor(labels[i : i + 16]))
    for i in range(64, 96, 16)
]


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(10, 12), nn.ReLU(), nn.Linear(12, 12), nn.ReLU(), nn.Linear(12, 4)
        )

    def forward(self, x):
        return self.linear_relu_stack(self.flatten(x))


model = NeuralNetwork()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.uniform(-0.3, 0.3, tuple(p.shape))))

learning_rate = 1e-2
batch_size = 16
epochs = 4


def train_loop(dataloader, model, loss_fn, optimizer):
    size = 64
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        pred = model(X)
        loss = loss_fn(pred, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if batch % 2 == 0:
            loss, current = loss.item(), batch * batch_size + len(X)
            print(f"loss: {loss}  [{current:>5d}/{size:>5d}]")


def test_loop(dataloader, model, loss_fn):
    model.eval()
    size = 32
    num_batches = len(dataloader)
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).float().sum().item()
    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \n Accuracy: {100 * correct}%, Avg loss: {test_loss} \n")


loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate * 10, momentum=0.5)
for t in range(epochs):
    print(f"Epoch {t + 1}\n-------------------------------")
    train_loop(train, model, loss_fn, optimizer)
    test_loop(test, model, loss_fn)
print("Done!")
