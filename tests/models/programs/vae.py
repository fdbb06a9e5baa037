"""pytorch/examples vae/main.py: the VAE (reparameterize with randn_like) and its BCE + KLD loss.

Changed: 64-pixel inputs (784 in the original), 32 hidden units and 8 latents.
"""

import minitorch as torch
from minitorch import nn, optim
from minitorch.nn import functional as F


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 32)
        self.fc21 = nn.Linear(32, 8)
        self.fc22 = nn.Linear(32, 8)
        self.fc3 = nn.Linear(8, 32)
        self.fc4 = nn.Linear(32, 64)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 64))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 64), reduction="sum")
    # 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


def step(model, data, _label):
    recon_batch, mu, logvar = model(data)
    return loss_function(recon_batch, data, mu, logvar)


def batches(n=2):
    return [(torch.rand(4, 1, 8, 8), torch.zeros(4)) for _ in range(n)]


def main():
    torch.manual_seed(1)
    model = VAE()
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    compiled_step = torch.compile(step)
    model.train()
    losses = []
    for batch_idx, (data, label) in enumerate(batches(3)):
        optimizer.zero_grad()
        loss = compiled_step(model, data, label)
        loss.backward()
        optimizer.step()
        print(
            f"Train Epoch: 1 [{batch_idx * len(data)}/{3 * len(data)}]\t"
            f"Loss: {loss.item() / len(data):.6f}"
        )
        losses.append(loss.item() / len(data))
    with torch.no_grad():
        sample = torch.randn(4, 8)
        sample = model.decode(sample)
    return losses, tuple(sample.view(4, 1, 8, 8).shape)
