"""How closely a backend must agree with the reference interpreter, op by op.

[Note: where backends must agree]
Backends compute transcendental functions their own way (LLVM's are polynomials in
codegen/llvm/mathlib.py, trig.py and activations.py), so they agree with the interpreter to
within a few units in the last place (ulps), on a domain of inputs. The conformance tests check
this and nothing stricter; outside the domain a backend may answer anything, NaN included.
Today every op's domain is every input (MATH_DOMAINS is empty).

Everywhere in the domain: NaN exactly where the interpreter has NaN, the same infinities,
zeros of the same sign (except maximum and minimum: llvm.maximum orders -0.0 below 0.0, numpy
gives b at a tie), and finite results with |got - want| <= ulps * spacing(|want|) in the
result's dtype.

    op                        domain (float32, float64)    ulps
    ------------------------  ---------------------------  ---------------------------------
    sin cos                   every a                      4   (|a| > 2**30 reduces by pi/2
                                                                exactly: codegen/llvm/trig.py)
    exp log                   every a                      4
    sqrt rsqrt                every a                      4
    erf sigmoid               every a                      8
    tanh log1p expm1          every a                      16  (their defaults chain exp,
                                                                log and a division)
    pow(a, c)  float32        every a and c                4
    pow(a, c)  float64        integral c, |c| <= 64        4 + |c|  (|c| multiplications)
                              any other c                  4 + 2|c ln|a||  (exp(c log a))
    sum of n terms            every term                   any order of adding: within
                                                           (n - 1) eps sum |term|
    to_dtype float -> int     a whose truncation fits      0 (numpy warns and PyTorch calls
                              the integer (not NaN, inf)   the rest undefined; LLVM poison)
    everything else           every a                      0: one IEEE rounding, the same
                                                           bits everywhere (integers exact)

pow(a, 0.5) is a square root in the interpreter (numpy's power computes it so: pow(-0.0,
0.5) = -0.0, pow(-inf, 0.5) = NaN), which is what makes sqrt's default exact; LLVM agrees.
The measured worst cases, LLVM against the interpreter: 1 ulp for sin and cos, 2 for exp and
log in float32, 3 for tanh, sigmoid and log1p, 4 for expm1, 5 for erf in float64; the
defaults, run on numpy's core ops: 8 for tanh, 6 for expm1 and 5 for log1p in float32, and
sigmoid exactly (tests/codegen/test_agreement.py holds LLVM to the table).

MATH_DOMAINS and MATH_ULPS below hold the same table, for tests (tests/conformance,
tests/codegen/test_agreement.py) to read.
"""

# op -> the largest |a| on which backends must agree with the interpreter ([Note: where
# backends must agree]); ops not listed agree on every input, as all of them do today.
MATH_DOMAINS: dict[str, float] = {}
# op -> how many ulps a backend may be from the interpreter on that domain; float64 pow may
# be further (see the note); ops not listed are exact.
MATH_ULPS = {
    "sin": 4, "cos": 4, "exp": 4, "log": 4, "sqrt": 4, "rsqrt": 4, "pow": 4,
    "erf": 8, "sigmoid": 8, "tanh": 16, "log1p": 16, "expm1": 16,
}  # fmt: skip
