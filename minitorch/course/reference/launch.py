"""The reference solution of the assignment `launch`: the tree's warp per row, turned on.

    python -m minitorch.course grade launch --plugin minitorch.course.reference.launch

Warp per row is in the tree (codegen/cuda/launch.py, rows.py and grid.py's `warps()`,
[Note: a warp per row]), registered but not active: nobody has measured it against block per
row on a GPU. Turning it on makes it a plan the grader sees, and grades.
"""

from codegen.cuda.launch import WARP_PER_ROW, activate_launch_plan

activate_launch_plan(WARP_PER_ROW)
