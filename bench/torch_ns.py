#!/usr/bin/env python3
"""muonref bench: PyTorch CPU Newton-Schulz timings for `muonref bench`.

The iteration is the NeMo seed's zeropower_via_newtonschulz5, written
against torch 1.13 APIs: cast to the dtype, transpose when rows > cols,
X / (||X||_F + 1e-7), then 5 steps of X <- a X + (b A + c A A) X with
A = X X^T and (a, b, c) = (3.4445, -4.7750, 2.0315); transposed back.

Usage: torch_ns.py [--reps N] [--threads T] CASE...
  CASE is DTYPE:NAME:SPEC, DTYPE bf16, fp32 or bf16native (bf16 with
  oneDNN disabled: ATen's own bf16 matmul, the slow path of CPUs without
  AVX-512 bf16 support), SPEC a '+'-joined list of RxC or RxC*K (K matrices
  of that shape), e.g. fp32:tf:768x768*48+768x3072*24.
Runs with T intra-op threads (default: os.cpu_count(), the threads
OpenBLAS uses on the C side) and prints "THREADS T".  For each case, after
one untimed warm-up run of the case's first matrix, prints one line
"RESULT DTYPE NAME SECONDS" with the median over N runs of the whole case
(every matrix once per run).  Last, "PEAKRSS KIB": the peak resident memory
of this process (VmHWM, not ru_maxrss: after fork and exec, ru_maxrss keeps
the parent's figure).  Exit status 0; 2 for bad arguments; 3 when torch
cannot be imported (prints "NOTORCH reason")."""
import os
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


def peak_rss_kib():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def main(argv):
    reps = 3
    threads = os.cpu_count() or 1
    cases = []
    i = 0
    while i < len(argv):
        if argv[i] in ("--reps", "--threads") and i + 1 < len(argv):
            if argv[i] == "--reps":
                reps = int(argv[i + 1])
            else:
                threads = int(argv[i + 1])
            i += 2
            continue
        parts = argv[i].split(":")
        if len(parts) != 3 or parts[0] not in ("bf16", "fp32", "bf16native"):
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
    torch.set_num_threads(threads)
    print("THREADS %d" % torch.get_num_threads(), flush=True)
    for dtype_name, name, mats in cases:
        dtype = torch.float32 if dtype_name == "fp32" else torch.bfloat16
        gs = [torch.randn(r, c) for r, c, k in mats for _ in range(k)]
        with torch.backends.mkldnn.flags(enabled=dtype_name != "bf16native"):
            newton_schulz(gs[0], dtype)
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                for g in gs:
                    newton_schulz(g, dtype)
                times.append(time.perf_counter() - t0)
        print("RESULT %s %s %.9f" % (dtype_name, name, statistics.median(times)), flush=True)
    print("PEAKRSS %d" % peak_rss_kib())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
