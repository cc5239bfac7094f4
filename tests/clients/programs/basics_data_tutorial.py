# Mirrors: PyTorch tutorial "Datasets & DataLoaders" (Learn the Basics): a custom Dataset
# with __init__/__len__/__getitem__ and a transform, DataLoader(batch_size=..., shuffle=True)
# for training and without shuffle for testing, next(iter(loader)) for one batch of
# features and labels, and the number of batches. In place of FashionMNIST files, the
# dataset computes small synthetic "images" (shapes printed as lists); with shuffle the
# order is numpy's under naivegraph and torch's under torch, so shuffled batches print
# only order-free facts.
# precision: float64
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class CustomImageDataset(Dataset):
    def __init__(self, count, transform=None, target_transform=None):
        rng = np.random.default_rng(count)
        self.images = rng.random((count, 1, 4, 4))
        self.labels = rng.integers(0, 10, count)
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        image = torch.tensor(self.images[idx])
        label = int(self.labels[idx])
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            label = self.target_transform(label)
        return image, label


def one_hot(y):  # the tutorial's Lambda target transform, a row of eye for scatter_
    return torch.eye(10, dtype=torch.float64)[y]


training_data = CustomImageDataset(50, transform=lambda img: img * 2 - 1)
test_data = CustomImageDataset(20, target_transform=one_hot)
print("len:", len(training_data), len(test_data))
img, label = training_data[3]
print("sample:", list(img.shape), label, round(img.sum().item(), 12))

train_dataloader = DataLoader(training_data, batch_size=8, shuffle=True)
test_dataloader = DataLoader(test_data, batch_size=8)
print("batches:", len(train_dataloader), len(test_dataloader))

torch.manual_seed(0)
train_features, train_labels = next(iter(train_dataloader))
print(f"Feature batch shape: {list(train_features.size())}")
print(f"Labels batch shape: {list(train_labels.size())}", train_labels.dtype == torch.int64)
total = sum(features.sum().item() for features, _ in train_dataloader)
print(
    "epoch total:", round(total, 9), "of", round(float(training_data.images.sum() * 2 - 50 * 16), 9)
)

for features, labels in test_dataloader:
    print(list(features.shape), labels.argmax(dim=1).tolist())
drop = DataLoader(test_data, batch_size=8, drop_last=True)
print("drop_last batches:", len(drop), [list(x.shape) for x, _ in drop])
