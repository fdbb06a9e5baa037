"""DCGAN (Radford et al., 2015): a transposed-convolution generator and a convolutional
discriminator, trained against each other.

The paper's recipe as tutorials write it: generator = ConvTranspose2d + BatchNorm2d + ReLU
blocks ending in Tanh; discriminator = strided Conv2d + LeakyReLU(0.2) (BatchNorm2d from the
second block) ending in Sigmoid; weights drawn from N(0, 0.02), BatchNorm's scale from
N(1, 0.02); BCELoss; two Adam optimizers with lr=2e-4 and betas=(0.5, 0.999); each iteration
one discriminator step (real batch, then a detached fake batch) and one generator step (fake
batch labelled real). Here: 16x16 single-channel "images", a few iterations.
"""

import minitorch as torch
import minitorch.nn as nn
import minitorch.optim as optim

nz = 8  # size of the latent vector
ngf = 8  # generator feature maps
ndf = 8  # discriminator feature maps
nc = 1  # image channels


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            # z: (N, nz, 1, 1)
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            # (N, ngf*2, 4, 4)
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            # (N, ngf, 8, 8)
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
            nn.Tanh(),
            # (N, nc, 16, 16)
        )

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            # (N, nc, 16, 16)
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            # (N, ndf, 8, 8)
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            # (N, ndf*2, 4, 4)
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, input):
        return self.main(input)


criterion = nn.BCELoss()
real_label = 1.0
fake_label = 0.0


def discriminator_step(netD, real, fake):
    """errD = BCE(D(real), 1) + BCE(D(G(z).detach()), 0)."""
    b_size = real.size(0)
    label = torch.full((b_size,), real_label, dtype=torch.float, device=real.device)
    output = netD(real).view(-1)
    errD_real = criterion(output, label)
    # NOTE: a new label tensor, not label.fill_(fake_label): BCELoss saved `label` for the
    # backward, which runs after both halves here (PyTorch raises on the fill_ too).
    label = torch.full((b_size,), fake_label, dtype=torch.float, device=real.device)
    output = netD(fake.detach()).view(-1)
    errD_fake = criterion(output, label)
    return errD_real + errD_fake


def generator_step(netD, fake):
    """errG = BCE(D(G(z)), 1): the generator wants its fakes called real."""
    label = torch.full((fake.size(0),), real_label, dtype=torch.float, device=fake.device)
    output = netD(fake).view(-1)
    return criterion(output, label)


def example():
    torch.manual_seed(0)
    netG, netD = Generator(), Discriminator()
    netG.apply(weights_init)
    netD.apply(weights_init)
    real = torch.rand(4, nc, 16, 16) * 2 - 1
    fake = netG(torch.randn(4, nz, 1, 1))
    return discriminator_step, (netD, real, fake)


def main(iters=3):
    torch.manual_seed(999)
    torch.backends.cudnn.benchmark = True
    device = "cuda" if torch.cuda.is_available() else "cpu"
    netG = Generator().to(device)
    netG.apply(weights_init)
    netD = Discriminator().to(device)
    netD.apply(weights_init)
    fixed_noise = torch.randn(4, nz, 1, 1, device=device)
    optimizerD = optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
    # NOTE: G(z) is made outside the discriminator's step: a compiled step that returned the
    # fake batch would make it an output of the step's one backward node, which errD.backward()
    # frees, so errG.backward() through it would be a second backward (PyTorch's too).
    generate = torch.compile(netG)
    d_step = torch.compile(discriminator_step)
    g_step = torch.compile(generator_step)
    dataset = torch.rand(12, nc, 16, 16) * 2 - 1  # "images" in [-1, 1]
    losses = []
    for i in range(iters):
        real = dataset[4 * i : 4 * i + 4].to(device)
        noise = torch.randn(real.size(0), nz, 1, 1, device=device)
        # (1) update D: maximize log(D(x)) + log(1 - D(G(z)))
        fake = generate(noise)
        netD.zero_grad(set_to_none=True)
        errD = d_step(netD, real, fake)
        errD.backward()
        optimizerD.step()
        # (2) update G: maximize log(D(G(z)))
        netG.zero_grad(set_to_none=True)
        errG = g_step(netD, fake)
        errG.backward()
        optimizerG.step()
        print(f"[{i}/{iters}] Loss_D: {errD.item():.4f} Loss_G: {errG.item():.4f}")
        losses += [errD.item(), errG.item()]
    with torch.no_grad():
        netG.eval()
        samples = netG(fixed_noise).detach().cpu()
        print(f"samples in [{samples.min().item():.3f}, {samples.max().item():.3f}]")
        losses.append(samples.mean().item())
    return losses
