# Mirrors: MorvanZhou/PyTorch-Tutorial, tutorial-contents/305_batch_train.py
# (Data.TensorDataset(x, y) of two torch.linspace tensors, Data.DataLoader with
# batch_size=5 and shuffle=True, three epochs of enumerate(loader) printing each batch's
# .numpy(); then batch_size=8, where the last batch is short). A shuffled order is the
# generator's, so with shuffle=True the program prints what every order shares (each epoch
# sees each sample once, pairs stay together); the printed batches come from an unshuffled
# loader. Batches load in the main process (num_workers=0; the original uses 2).
# precision: float32
import torch
import torch.utils.data as Data

torch.manual_seed(1)  # reproducible

BATCH_SIZE = 5

x = torch.linspace(1, 10, 10)  # this is x data (torch tensor)
y = torch.linspace(10, 1, 10)  # this is y data (torch tensor)

torch_dataset = Data.TensorDataset(x, y)
loader = Data.DataLoader(
    dataset=torch_dataset,  # torch TensorDataset format
    batch_size=BATCH_SIZE,  # mini batch size
    shuffle=True,  # random shuffle for training
    num_workers=0,  # subprocesses for loading data
)


def show_batch(loader):
    for epoch in range(3):  # train entire dataset 3 times
        seen = []
        for step, (batch_x, batch_y) in enumerate(loader):  # for each training step
            # train your data...
            if loader.sampler.__class__.__name__ == "SequentialSampler":
                print(
                    "Epoch: ", epoch, "| Step: ", step, "| batch x: ",
                    batch_x.numpy().tolist(), "| batch y: ", batch_y.numpy().tolist(),
                )  # fmt: skip
            seen += [(a, b) for a, b in zip(batch_x.tolist(), batch_y.tolist())]
        print(
            "epoch", epoch, "batches", len(loader), "sizes ok:",
            sorted(seen) == sorted(zip(x.tolist(), y.tolist())),
        )  # fmt: skip


show_batch(loader)
show_batch(Data.DataLoader(dataset=torch_dataset, batch_size=BATCH_SIZE, shuffle=False))
loader8 = Data.DataLoader(dataset=torch_dataset, batch_size=8, shuffle=False)
show_batch(loader8)
print(len(torch_dataset), torch_dataset[3][0].item(), torch_dataset[3][1].item())
