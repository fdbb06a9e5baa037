"""Super-resolution with ESPCN (Shi et al., 2016), against a bilinear baseline.

The paper's network: feature maps computed at the low resolution (Conv2d 5x5, then 3x3, tanh),
a last Conv2d to r*r channels and a sub-pixel convolution (nn.PixelShuffle(r)) that rearranges
them into an r-times larger image. The baseline is F.interpolate(mode="bilinear"); a second
model learns a residual on top of an nn.Upsample. Trained with MSE on random low-resolution
images made from 16x16 "high-resolution" ones by average pooling; PSNR reported in eval.
"""

import math

import minitorch as torch
import minitorch.nn as nn
import minitorch.nn.functional as F


class ESPCN(nn.Module):
    def __init__(self, upscale_factor, channels=1):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 16, kernel_size=5, padding=2)
        self.conv2 = nn.Conv2d(16, 8, kernel_size=3, padding=1)
        self.conv3 = nn.Conv2d(8, channels * upscale_factor**2, kernel_size=3, padding=1)
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        self._initialize_weights()

    def _initialize_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="tanh")
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = torch.tanh(self.conv1(x))
        x = torch.tanh(self.conv2(x))
        return self.pixel_shuffle(self.conv3(x))


class UpsampleResidual(nn.Module):
    """Bilinear upsampling plus a learned correction (a VDSR-like residual)."""

    def __init__(self, upscale_factor, channels=1):
        super().__init__()
        self.upsample = nn.Upsample(
            scale_factor=upscale_factor, mode="bilinear", align_corners=False
        )
        self.body = nn.Sequential(
            nn.Conv2d(channels, 8, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(8, channels, 3, padding=1),
        )

    def forward(self, x):
        up = self.upsample(x)
        return up + self.body(up)


def step(model, low_res, high_res):
    return F.mse_loss(model(low_res), high_res)


def psnr(mse):
    return 10 * math.log10(1 / mse)


def make_pairs(n, upscale_factor):
    high = torch.rand(n, 1, 16, 16)
    low = F.avg_pool2d(high, upscale_factor)
    return low, high


def example():
    torch.manual_seed(0)
    low, high = make_pairs(2, 2)
    return step, (ESPCN(2), low, high)


def main(epochs=3):
    torch.manual_seed(123)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    upscale_factor = 2
    low, high = make_pairs(8, upscale_factor)
    compiled_step = torch.compile(step)
    losses = []
    for model in (ESPCN(upscale_factor).to(device), UpsampleResidual(upscale_factor).to(device)):
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
        for epoch in range(epochs):
            model.train()
            for i in range(0, 8, 4):
                x, y = low[i : i + 4].to(device), high[i : i + 4].to(device)
                optimizer.zero_grad(set_to_none=True)
                loss = compiled_step(model, x, y)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
            scheduler.step()
            model.eval()
            with torch.no_grad():
                mse = F.mse_loss(model(low.to(device)), high.to(device)).item()
            print(f"{type(model).__name__} epoch {epoch}: PSNR {psnr(mse):.2f} dB")
            losses.append(mse)
    with torch.no_grad():
        bilinear = F.interpolate(
            low, scale_factor=upscale_factor, mode="bilinear", align_corners=False
        )
        baseline = F.mse_loss(bilinear, high).item()
    print(f"bilinear baseline: PSNR {psnr(baseline):.2f} dB")
    return losses + [baseline]
