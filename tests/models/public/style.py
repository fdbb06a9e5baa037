"""Fast neural style transfer (Johnson et al., 2016): a feed-forward transformer network.

The paper's image transformation network: reflection-padded convolutions, instance
normalization (Ulyanov et al.) with a learned scale and shift, three strided downsampling
layers, residual blocks, and upsampling by nearest-neighbour interpolation followed by a
convolution (F.interpolate(scale_factor=2, mode="nearest"), which avoids transposed
convolutions' checkerboards). The loss network is a fixed convolutional feature extractor
(VGG-16 in the paper; a tiny random one here, frozen with requires_grad_(False)): a content
loss on one layer's features and a style loss on the Gram matrices (computed with bmm) of
every layer's features against the style image's. The trained net is saved with torch.save
of its state_dict and loaded back to stylize an image, as the example script's two modes do.
"""

import os
import re
import tempfile

import minitorch as torch
import minitorch.nn as nn
import minitorch.nn.functional as F


class ConvLayer(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.reflection_pad = nn.ReflectionPad2d(kernel_size // 2)
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        return self.conv2d(self.reflection_pad(x))


class ResidualBlock(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in1 = nn.InstanceNorm2d(channels, affine=True)
        self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in2 = nn.InstanceNorm2d(channels, affine=True)
        self.relu = nn.ReLU()

    def forward(self, x):
        residual = x
        out = self.relu(self.in1(self.conv1(x)))
        out = self.in2(self.conv2(out))
        return out + residual


class UpsampleConvLayer(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super().__init__()
        self.upsample = upsample
        self.reflection_pad = nn.ReflectionPad2d(kernel_size // 2)
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        if self.upsample:
            x = F.interpolate(x, mode="nearest", scale_factor=self.upsample)
        return self.conv2d(self.reflection_pad(x))


class TransformerNet(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.conv1 = ConvLayer(3, c, kernel_size=9, stride=1)
        self.in1 = nn.InstanceNorm2d(c, affine=True)
        self.conv2 = ConvLayer(c, 2 * c, kernel_size=3, stride=2)
        self.in2 = nn.InstanceNorm2d(2 * c, affine=True)
        self.res1 = ResidualBlock(2 * c)
        self.res2 = ResidualBlock(2 * c)
        self.deconv1 = UpsampleConvLayer(2 * c, c, kernel_size=3, stride=1, upsample=2)
        self.in3 = nn.InstanceNorm2d(c, affine=True)
        self.deconv2 = UpsampleConvLayer(c, 3, kernel_size=9, stride=1)
        self.relu = nn.ReLU()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.res2(self.res1(y))
        y = self.relu(self.in3(self.deconv1(y)))
        return self.deconv2(y)


class LossNet(nn.Module):
    """A frozen feature extractor standing in for VGG-16: features after each ReLU block."""

    def __init__(self):
        super().__init__()
        self.slice1 = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU())
        self.slice2 = nn.Sequential(nn.MaxPool2d(2), nn.Conv2d(4, 8, 3, padding=1), nn.ReLU())
        for p in self.parameters():
            p.requires_grad_(False)

    def forward(self, x):
        relu1 = self.slice1(x)
        relu2 = self.slice2(relu1)
        return relu1, relu2


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    return features.bmm(features_t) / (ch * h * w)


def normalize_batch(batch):
    mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    batch = batch.div_(255.0)  # NOTE: in place: the caller's images are scaled too
    return (batch - mean) / std


mse_loss = nn.MSELoss()


def step(transformer, vgg, x, gram_style, content_weight=1e5, style_weight=1e10):
    """content + style loss of one batch; gram_style: the style image's Gram matrices."""
    n_batch = x.size(0)
    y = transformer(x)
    y, x = normalize_batch(y), normalize_batch(x)
    features_y = vgg(y)
    features_x = vgg(x)
    content_loss = content_weight * mse_loss(features_y[1], features_x[1])
    style_loss = 0.0
    for ft_y, gm_s in zip(features_y, gram_style):
        gm_y = gram_matrix(ft_y)
        style_loss += mse_loss(gm_y, gm_s[:n_batch, :, :])
    style_loss *= style_weight
    return content_loss + style_loss


def load_images(n, size=16):
    """n random RGB "images" with values in [0, 255], as the script's ToTensor + mul(255)."""
    return torch.rand(n, 3, size, size).mul(255)


def style_grams(vgg, style, batch_size):
    """The style image's Gram matrices, one copy per image of a batch."""
    return grams_of(vgg, style.repeat(batch_size, 1, 1, 1))


def grams_of(vgg, images):
    with torch.no_grad():
        return [gram_matrix(y) for y in vgg(normalize_batch(images))]


def example():
    torch.manual_seed(0)
    vgg = LossNet()
    grams = grams_of(vgg, load_images(2))  # two style images
    return step, (TransformerNet(), vgg, load_images(2), grams)


def main(steps=3):
    torch.manual_seed(42)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    transformer = TransformerNet().to(device)
    vgg = LossNet().to(device)
    optimizer = torch.optim.Adam(transformer.parameters(), 1e-3)
    gram_style = style_grams(vgg, load_images(1).to(device), 2)
    content_images = load_images(2 * steps)
    compiled_step = torch.compile(step)
    losses = []
    transformer.train()
    for i in range(steps):
        x = content_images[2 * i : 2 * i + 2].to(device)
        optimizer.zero_grad(set_to_none=True)
        loss = compiled_step(transformer, vgg, x, gram_style)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        print(f"batch {i}: total {loss.item():.2f}")
    transformer.eval().cpu()
    with tempfile.TemporaryDirectory() as save_model_dir:
        save_model_path = os.path.join(save_model_dir, "style_epoch_1.model")
        torch.save(transformer.state_dict(), save_model_path)
        print(f"Done, trained model saved at {save_model_path}")
        losses.append(stylize(save_model_path, content_images[:1]))
    return losses


def stylize(model_path, content_image):
    """Load a saved transformer and stylize one image, as the script's eval mode does."""
    with torch.no_grad():
        style_model = TransformerNet()
        state_dict = torch.load(model_path)
        # remove saved deprecated running_* keys in InstanceNorm from the checkpoint
        for k in list(state_dict.keys()):
            if re.search(r"in\d+\.running_(mean|var)$", k):
                del state_dict[k]
        style_model.load_state_dict(state_dict)
        style_model.eval()
        output = style_model(content_image).clamp(0, 255)
    print(f"stylized image mean {output.mean().item():.4f}")
    return output.mean().item()
