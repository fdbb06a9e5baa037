"""Public programs as a new user writes them, with `import minitorch as torch` for `import torch`.

One module per program, each written from the public original (pytorch/examples' MNIST, VAE,
regression and forward-forward; the PyTorch tutorials; nanoGPT, minGPT and makemore;
torchvision's ResNet; pytorch/examples' fx programs): the model code and the training step as
the original has them, shortened loops, small synthetic data. Each module's docstring names
its source and what was changed. tests/models/test_programs.py runs them.
"""
