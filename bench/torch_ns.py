#!/usr/bin/env python3
"""muonref bench: PyTorch CPU Newton-Schulz timings for `muonref bench`.

The iteration is the NeMo seed's zeropower_via_newtonschulz5, written
against torch 1.13 APIs: cast to the dtype, transpose when rows > cols,
X / (||X||_F + 1e-7), then 5 steps of X <- a X + (b A + c A A) X with
A = X X^T and (a, b, c) = (3.4445, -4.7750, 2.0315); transposed back.

Usage: torch_ns.py [--reps N] CASE...
  CASE is DTYPE:NAME:SPEC, DTYPE bf16 or fp32, SPEC a '+'-joined list of
  RxC or RxC*K (K matrices of that shape), e.g. fp32:tf:768x768*48+768x3072*24.
For each case, after one untimed warm-up run of the case's first matrix,
prints one line "RESULT DTYPE NAME SECONDS" with the median over N runs of
the whole case (every matrix once per run).  Exit status 0; 2 for bad
arguments; 3 when torch cannot be imported (prints "NOTORCH reason")."""
import statistics
import sys
import time

COEFFS = (3.4445, -4.7750, 2.0315)


def newton_schulz(g, dtype, steps=5, eps=1e-7):
    import torch
    a, b, c = COEFFS
    x = g.to(dtype)
    tall = x.size(0) > x.size(1)
    if tall:
        x = x.T
    x = x / (x.norm() + eps)
    for _ in range(steps):
        A = x @ x.T
        B = b * A + c * A @ A
        x = a * x + B @ x
    if tall:
        x = x.T
    return x


def parse_spec(spec):
    mats = []
    for part in spec.split("+"):
        shape, _, count = part.partition("*")
        r, _, c = shape.partition("x")
        mats.append((int(r), int(c), int(count) if count else 1))
    return mats


def main(argv):
    reps = 3
    cases = []
    i = 0
    while i < len(argv):
        if argv[i] == "--reps" and i + 1 < len(argv):
            reps = int(argv[i + 1])
            i += 2
            continue
        parts = argv[i].split(":")
        if len(parts) != 3 or parts[0] not in ("bf16", "fp32"):
            print("torch_ns.py: bad case %r (want DTYPE:NAME:SPEC)" % argv[i], file=sys.stderr)
            return 2
        cases.append((parts[0], parts[1], parse_spec(parts[2])))
        i += 1
    try:
        import torch
    except Exception as e:  # pylint: disable=broad-except
        print("NOTORCH %s" % e)
        return 3
    torch.manual_seed(0)
    for dtype_name, name, mats in cases:
        dtype = torch.bfloat16 if dtype_name == "bf16" else torch.float32
        gs = [torch.randn(r, c) for r, c, k in mats for _ in range(k)]
        newton_schulz(gs[0], dtype)
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            for g in gs:
                newton_schulz(g, dtype)
            times.append(time.perf_counter() - t0)
        print("RESULT %s %s %.9f" % (dtype_name, name, statistics.median(times)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
