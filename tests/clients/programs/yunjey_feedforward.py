# Mirrors: yunjey/pytorch-tutorial, tutorials/01-basics/feedforward_neural_network/main.py
# (a NeuralNet module with fc1, nn.ReLU and fc2, nn.CrossEntropyLoss,
# torch.optim.Adam(lr=0.001), DataLoader batches reshaped with .reshape(-1, 28*28).to(device),
# the test under torch.no_grad() with torch.max(outputs.data, 1), and the checkpoint of
# model.state_dict()). Made-up 28x28 images replace MNIST; a hidden size of 64 replaces 500;
# the train loader does not shuffle (torch's and numpy's draws differ).
# precision: float64
import numpy as np
import torch
import torch.nn as nn

torch.set_default_dtype(torch.float64)

# Device configuration
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
print(device)

# Hyper-parameters
input_size = 784
hidden_size = 64
num_classes = 10
num_epochs = 3
batch_size = 40
learning_rate = 0.001

rng = np.random.default_rng(34)


def make_images(n):
    """Label k lights columns 2k..2k+5 of a noisy 28x28 image."""
    labels = rng.integers(0, num_classes, n)
    images = rng.uniform(0, 0.3, (n, 1, 28, 28))
    for i, k in enumerate(labels):
        images[i, 0, :, 2 * k : 2 * k + 6] += 0.7
    return torch.from_numpy(images), torch.from_numpy(labels)


train_dataset = torch.utils.data.TensorDataset(*make_images(200))
test_dataset = torch.utils.data.TensorDataset(*make_images(80))
train_loader = torch.utils.data.DataLoader(dataset=train_dataset, batch_size=batch_size)
test_loader = torch.utils.data.DataLoader(
    dataset=test_dataset, batch_size=batch_size, shuffle=False
)


# Fully connected neural network with one hidden layer
class NeuralNet(nn.Module):
    def __init__(self, input_size, hidden_size, num_classes):
        super(NeuralNet, self).__init__()
        self.fc1 = nn.Linear(input_size, hidden_size)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(hidden_size, num_classes)

    def forward(self, x):
        out = self.fc1(x)
        out = self.relu(out)
        out = self.fc2(out)
        return out


model = NeuralNet(input_size, hidden_size, num_classes).to(device)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.05, 0.05, tuple(p.shape))))
print(model)

# Loss and optimizer
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)

# Train the model
total_step = len(train_loader)
for epoch in range(num_epochs):
    for i, (images, labels) in enumerate(train_loader):
        # Move tensors to the configured device
        images = images.reshape(-1, 28 * 28).to(device)
        labels = labels.to(device)

        # Forward pass
        outputs = model(images)
        loss = criterion(outputs, labels)

        # Backward and optimize
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        if (i + 1) % 5 == 0:
            print(
                "Epoch [{}/{}], Step [{}/{}], Loss: {:.8f}".format(
                    epoch + 1, num_epochs, i + 1, total_step, loss.item()
                )
            )

# Test the model
with torch.no_grad():
    correct = 0
    total = 0
    for images, labels in test_loader:
        images = images.reshape(-1, 28 * 28).to(device)
        labels = labels.to(device)
        outputs = model(images)
        _, predicted = torch.max(outputs.data, 1)
        total += labels.size(0)
        correct += (predicted == labels).sum().item()

    print("Accuracy of the network on the 80 test images: {} %".format(100 * correct / total))

state = model.state_dict()
print(list(state.keys()), state["fc2.bias"].tolist())
