"""Every knob in one place (STYLE: core logic does not read the environment itself)."""

from __future__ import annotations

import os

# Bytecode capture (tracer/dynamo)
recompile_limit = 8  # cache entries per code object before the frame runs eagerly

# Code generation (codegen)
num_threads = max(1, min(os.cpu_count() or 1, 8))  # threads that split one big kernel
parallel_threshold = 1 << 17  # elements of work below which a kernel runs on one thread

# What MINITORCH_LOGS=graph,guards,... prints as it happens (read once, here).
logs = {part.strip() for part in os.environ.get("MINITORCH_LOGS", "").split(",") if part.strip()}

# The walkthrough's --backend: when set, every minitorch.compile call uses this backend.
force_backend: str | None = None
