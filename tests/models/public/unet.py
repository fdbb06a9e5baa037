"""U-Net (Ronneberger et al., 2015) for binary segmentation.

The paper's shape as tutorials write it: (Conv2d 3x3 -> BatchNorm2d -> ReLU) twice per level;
MaxPool2d(2) on the way down; ConvTranspose2d(kernel 2, stride 2) on the way up, the upsampled
map padded with F.pad to the skip connection's size (odd sizes lose a row when pooled) and
joined to it with torch.cat; a 1x1 output convolution. Trained with BCEWithLogitsLoss plus a
soft Dice loss on random images of odd size, RMSprop, ReduceLROnPlateau, and the mixed-precision
scaffolding of common training scripts (torch.autocast around the step, GradScaler's
scale/unscale_/step/update; amp=False by default, as those scripts have it).
"""

import minitorch as torch
import minitorch.nn as nn
import minitorch.nn.functional as F
from minitorch import optim


class DoubleConv(nn.Module):
    """(convolution => [BN] => ReLU) * 2"""

    def __init__(self, in_channels, out_channels, mid_channels=None):
        super().__init__()
        if not mid_channels:
            mid_channels = out_channels
        self.double_conv = nn.Sequential(
            nn.Conv2d(in_channels, mid_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(mid_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_channels, out_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )

    def forward(self, x):
        return self.double_conv(x)


class Down(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.maxpool_conv = nn.Sequential(nn.MaxPool2d(2), DoubleConv(in_channels, out_channels))

    def forward(self, x):
        return self.maxpool_conv(x)


class Up(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_channels, in_channels // 2, kernel_size=2, stride=2)
        self.conv = DoubleConv(in_channels, out_channels)

    def forward(self, x1, x2):
        x1 = self.up(x1)
        # input is CHW
        diffY = x2.size()[2] - x1.size()[2]
        diffX = x2.size()[3] - x1.size()[3]
        x1 = F.pad(x1, [diffX // 2, diffX - diffX // 2, diffY // 2, diffY - diffY // 2])
        x = torch.cat([x2, x1], dim=1)
        return self.conv(x)


class UNet(nn.Module):
    def __init__(self, n_channels=1, n_classes=1, base=4):
        super().__init__()
        self.inc = DoubleConv(n_channels, base)
        self.down1 = Down(base, base * 2)
        self.down2 = Down(base * 2, base * 4)
        self.up1 = Up(base * 4, base * 2)
        self.up2 = Up(base * 2, base)
        self.outc = nn.Conv2d(base, n_classes, kernel_size=1)

    def forward(self, x):
        x1 = self.inc(x)  # (N, base, H, W)
        x2 = self.down1(x1)  # (N, 2 base, H/2, W/2)
        x3 = self.down2(x2)  # (N, 4 base, H/4, W/4)
        x = self.up1(x3, x2)
        x = self.up2(x, x1)
        return self.outc(x)


def dice_loss(input, target, epsilon=1e-6):
    inter = 2 * (input * target).sum(dim=(-1, -2))
    sets_sum = input.sum(dim=(-1, -2)) + target.sum(dim=(-1, -2))
    sets_sum = torch.where(sets_sum == 0, inter, sets_sum)
    dice = (inter + epsilon) / (sets_sum + epsilon)
    return 1 - dice.mean()


criterion = nn.BCEWithLogitsLoss()


def step(model, images, true_masks):
    masks_pred = model(images)
    loss = criterion(masks_pred.squeeze(1), true_masks.float())
    return loss + dice_loss(F.sigmoid(masks_pred.squeeze(1)), true_masks.float())


def make_data(n, size=18):
    images = torch.rand(n, 1, size, size)
    masks = (images[:, 0] > 0.5).long()  # learn to threshold
    return images, masks


def example():
    torch.manual_seed(0)
    images, masks = make_data(2)
    return step, (UNet(), images, masks)


def autocast_step(model, images, true_masks, amp=False):
    """The step as training scripts write it with mixed precision: forward and loss under
    torch.autocast (enabled=amp)."""
    with torch.autocast("cpu", enabled=amp):
        return step(model, images, true_masks)


def main(epochs=2, amp=False):
    torch.manual_seed(0)
    torch.backends.cudnn.benchmark = True
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = UNet().to(device=device, memory_format=torch.channels_last)
    optimizer = optim.RMSprop(model.parameters(), lr=1e-3, weight_decay=1e-8, momentum=0.9)
    scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, "max", patience=2)
    grad_scaler = torch.amp.GradScaler(device.type, enabled=amp)
    images, masks = make_data(4)
    compiled_step = torch.compile(step)
    losses = []
    for epoch in range(epochs):
        model.train()
        for i in range(0, 4, 2):
            x = images[i : i + 2].to(
                device=device, dtype=torch.float32, memory_format=torch.channels_last
            )
            y = masks[i : i + 2].to(device=device, dtype=torch.long)
            with torch.autocast(device.type if device.type != "mps" else "cpu", enabled=amp):
                loss = compiled_step(model, x, y)
            optimizer.zero_grad(set_to_none=True)
            grad_scaler.scale(loss).backward()
            grad_scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            grad_scaler.step(optimizer)
            grad_scaler.update()
            losses.append(loss.item())
        model.eval()
        with torch.no_grad():
            pred = (F.sigmoid(model(images.to(device))) > 0.5).float()
            val_score = 1 - dice_loss(pred.squeeze(1), masks.to(device).float()).item()
        scheduler.step(val_score)
        print(
            f"epoch {epoch}: train loss {losses[-1]:.4f}, validation Dice {val_score:.4f}, "
            f"lr {optimizer.param_groups[0]['lr']:.1e}"
        )
        losses.append(val_score)
    return losses
