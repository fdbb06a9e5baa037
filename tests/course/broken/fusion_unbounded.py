"""Broken on purpose: fuses everything allowed, ignoring the backend's max_fusion_size."""

from minitorch.compile.hooks import register_fusion_policy

register_fusion_policy("unbounded", lambda kernel, buffer, fused, capabilities: True)
