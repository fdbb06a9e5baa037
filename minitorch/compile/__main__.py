"""`python -m minitorch.compile script.py`: the walkthrough (see walkthrough.py)."""

import sys

from minitorch.compile.walkthrough import main

sys.exit(main())
