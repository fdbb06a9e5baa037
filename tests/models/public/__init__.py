"""Eight kinds of real model, written from their public shape as a new user writes them.

Each program starts `import minitorch as torch`, `import minitorch.nn as nn`,
`import minitorch.nn.functional as F` and then reads as ordinary PyTorch: the names a PyTorch
user reaches for (torch.backends.cudnn.benchmark, `device = "cuda" if
torch.cuda.is_available() else "cpu"`, nn.init, lr schedulers, `with torch.no_grad():`,
`.item()` logging), tiny sizes. None is copied from a repository; each is written from the
paper's or the common tutorial's structure.

The map:

- llama.py         a tiny Llama: RMSNorm, rotary embeddings from torch.outer cos/sin tables,
                   SwiGLU MLP, grouped-query attention through F.scaled_dot_product_attention
                   (or written out with a torch.triu mask: use_sdpa=False), tied embeddings;
                   AdamW, cosine schedule, gradient clipping
- dcgan.py         DCGAN: ConvTranspose2d + BatchNorm2d + ReLU + Tanh generator, Conv2d +
                   LeakyReLU discriminator, BCELoss, two Adams (betas=(0.5, 0.999)), alternating
- espcn.py         super-resolution: ESPCN (Conv2d + PixelShuffle) against a bilinear
                   F.interpolate baseline, MSE and PSNR
- reinforce.py     REINFORCE with torch.distributions.Categorical on a small corridor world
- a2c.py           advantage actor-critic with Normal for a continuous action, entropy bonus,
                   returns by a reversed Python loop normalized with .std()
- gat.py           a graph attention network: dense adjacency mask, LeakyReLU scores,
                   masked_fill(-inf), softmax, ELU, dropout, on a small random graph
- style.py         Johnson-style fast style transfer: ReflectionPad2d, Conv2d, InstanceNorm2d,
                   residual blocks, nearest upsampling; content loss and Gram-matrix style loss;
                   torch.save / torch.load of the trained state_dict
- unet.py          U-Net: MaxPool2d encoder, ConvTranspose2d decoder, F.pad and torch.cat skips;
                   RMSprop, ReduceLROnPlateau, autocast and GradScaler as training scripts use

Every module has `main()` (the training script, compiling its step with `torch.compile`, which
returns the losses it logged) and `example()` (the compiled step and one call's arguments, for
`minitorch._dynamo.explain`). tests/models/test_public_shapes.py runs them.
"""
