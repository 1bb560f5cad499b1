"""Measures how far muonref's bf16 Newton-Schulz lies from a binary64 one on
Gaussian matrices (the figure quoted in README.md and spec/vectors.md 5.1):
relative Frobenius distance, 5 steps of the nemo profile, 3 seeds per shape.
Run from the build directory after `make`: /usr/bin/python3 bench/bf16_noise.py
(about 2 minutes on 2 cores; PyTorch for the binary64 iteration)."""
import ctypes
import os
import sys

import torch

torch.manual_seed(20261130)
lib = ctypes.CDLL(os.path.join(os.getcwd(), '.libs', 'libmuonref.so'))
buf = ctypes.create_string_buffer(4096)   # larger than muonref_options
err = ctypes.create_string_buffer(520)
assert lib.muonref_profile_options(b"nemo", buf, err) == 0


def ns64(g, steps=5):
    """spec/muon.md section 7 in binary64: X / (||X||_F + 1e-7), Keller's triple."""
    X = g.double()
    tr = X.shape[0] > X.shape[1]
    if tr:
        X = X.T
    X = X / (X.norm() + 1e-7)
    a, b, c = 3.4445, -4.775, 2.0315
    for _ in range(steps):
        A = X @ X.T
        X = a * X + (b * A + c * A @ A) @ X
    return X.T if tr else X


for (r, c) in [(64, 64), (256, 256), (256, 1024), (1024, 1024), (1024, 4096)]:
    vals = []
    for seed in range(3):
        g = torch.randn(r, c, dtype=torch.float32).contiguous()
        out = torch.empty_like(g)
        st = lib.muonref_fast_ns(ctypes.c_void_p(out.data_ptr()), ctypes.c_void_p(g.data_ptr()),
                                 ctypes.c_size_t(r), ctypes.c_size_t(c), buf, None, err)
        assert st == 0, err.value
        e = ns64(g)
        vals.append(float((out.double() - e).norm() / e.norm()))
    print(f"{r}x{c}: bf16 vs binary64 relative Frobenius distance {min(vals):.3f}-{max(vals):.3f} (3 seeds)")
    sys.stdout.flush()
