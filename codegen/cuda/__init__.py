"""The CUDA backend: the loop IR's kernels as LLVM IR for NVIDIA GPUs, compiled to PTX. The
files, in the order a kernel goes through them:

launch.py     the launch: strategy and block size, and the grid for given sizes; launch
              plans are a hook (register_launch_plan), the tree's registered through it
kernel.py     FusedKernel -> LLVM IR for NVPTX (or emulated): rows, phases, reductions
rows.py       how each strategy spreads the rows over the grid (thread, block, warp per row)
grid.py       blocks, threads, warps and their combines, on the GPU and emulated
probe.py      the GPU kernel's own index code run on the CPU thread by thread (a check)
target.py     IR -> PTX through LLVM's NVPTX target; which intrinsics it may use
ptxas.py      NVIDIA's assembler on our PTX: the check that it is valid, with no GPU
emulate.py    the kernels run on this CPU over every (block, thread): CudaEmulatorBackend
backend.py    CudaBackend: a graph's kernels as one PTX module, launched with cupy

The loop bodies are emitted by the CPU backend's ops handler and math library (codegen/llvm/
ops.py, mathlib.py, trig.py): one op, one emitter, for both targets.

[Note: threads, blocks and phases]
A GPU runs a kernel as a *grid* of *blocks* of *threads*, each thread the same function with
its own indices: `%tid.x` (the thread in its block, 0 to B - 1), `%ctaid.x` (the block, 0 to
G - 1) and `%nctaid.x` (G). Threads run in *warps* of 32 that execute each instruction
together; neighbouring threads reading neighbouring addresses is what makes memory fast
(*coalesced*). A kernel here takes one of two shapes (launch.py):

- Thread per row (pointwise kernels, column sums): thread t of block b takes rows
  b*B + t, then + G*B, ... (a *grid-stride loop*: any grid covers any size), and runs the
  whole row itself, in order, as the CPU does.
- Block per row (row reductions, softmax, layernorm): block b takes rows b, b + G, ...; in a
  row, thread t takes elements t, t + B, t + 2B, ... and keeps its own accumulator. Then the
  block *combines* them: a butterfly of warp shuffles (`shfl.sync.bfly`: each lane swaps its
  value with lane ^ 16, ^ 8, ^ 4, ^ 2, ^ 1, combining each time, until every lane holds its
  warp's total), lane 0 of each warp writes that to *shared memory*, a barrier waits for all,
  and every thread folds the warps' totals in order. Each thread then has the row's value,
  which the next loop of the row uses (softmax's max, then its sum, then its outputs).

The code between two combines is a *phase*: in it each thread runs on its own; a combine is
where they wait for one another (`bar.sync`). Values a thread keeps across a phase are
*private* (a register); values after a combine are the same in every thread of the block.

Address spaces: LLVM's pointers carry a number that says which memory they point to. Device
memory (cupy's arrays) is 1, *global*; the block's shared memory is 3; 0 is *generic*, which
may point to either. The kernel takes `ptr addrspace(1)` arguments and casts them to generic
pointers at once, so that the CPU's ops handler, which knows only `ptr`, emits the loads and
stores; NVPTX's address-space inference finds the casts and emits `ld.global` anyway.

The emulation (emulate.py) is the same generator with `EmulatedGrid` in place of
`DeviceGrid` (grid.py): the block index is a loop over the grid, and each phase is wrapped in
a loop over the block's threads; a private value is a [B] array indexed by the thread; and a
combine runs the butterfly over those arrays (every lane reads its partner's old value, as
the shuffle does) and folds the warps' results in the same order. A barrier needs no code
there: a phase's loop ends before the next begins, which is what the barrier guarantees on
the GPU. The grid, the block size and the warp size are the real ones, so indexing, strides,
edge checks and the order of each combine are exactly the GPU's, tested on the CPU against
the reference interpreter (`pytest tests/conformance --backend cuda_emulator`).
"""
