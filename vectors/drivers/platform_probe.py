#!/usr/bin/python3
"""Measures how the running PyTorch evaluates the bf16 operations spec/muon.md relies on.

spec/muon.md section 7 defines the bf16 Newton-Schulz iteration as: every
operation computed with products accumulated in at least binary32, the
scalars entering as binary32 values, the result rounded once to bf16.  A
port's code may be right and the platform still evaluate it otherwise
(PyTorch 1.13 on the CPU does).  This module measures, on the running
PyTorch, each behaviour as a named finding with a short value, so that a
driver's results file says what the platform did:

| finding | what is measured | a value per spec |
|---|---|---|
| `scalar_mul` | Python float 3.4445 * bf16 matrix | `binary32` |
| `tensor0d_mul` | 0-dim float32 tensor 3.4445 * bf16 matrix | `binary32` |
| `matmul_MxKxN_contiguous` | bf16 A @ B, both contiguous | `binary32` |
| `matmul_MxKxN_transposed_a` | A a transposed view (strided) | `binary32` |
| `matmul_MxKxN_transposed_b` | B a transposed view (strided) | `binary32` |
| `addmm_MxKxN` | torch.addmm(C, A, B, beta=-4.775, alpha=2.0315) on bf16 | `one rounding, binary32 scalars` |
| `addmm_MxKxN_accumulation` | torch.addmm(0, A, B, beta=0, alpha=1): the product alone | `binary32` |
| `baddbmm_2xMxKxN` | torch.baddbmm, the same on a batch of two | `one rounding, binary32 scalars` |
| `baddbmm_2xMxKxN_accumulation` | torch.baddbmm(0, A, B, beta=0, alpha=1) | `binary32` |
| `norm` | the Frobenius norm of a bf16 matrix | `one rounding` |

The matrices are of the sizes of the golden vectors (8x16 @ 16x8 and
16x32 @ 32x16; PyTorch 1.13 picks its bf16 matmul kernel by size, so a tiny
1x4 @ 4x1 product says nothing about them) and hold small integers in
[-15, 15]: every partial sum of a product is an integer below 2^24, exact in
binary32, while bf16 (8 significant bits) cannot hold most of them.  So
"binary32" is decided by equality with the exact product rounded once to
bf16, whatever the order of accumulation, and anything else shows.

Values: `binary32` (as the spec requires), `rounded to bf16` (a scalar
rounded to bf16 before multiplying), `not binary32 (K of N differ)` (an
accumulation or rounding that is not the spec's, K elements of N differ
from the exact result rounded once), `one rounding, binary32 scalars` /
`one rounding, bf16 scalars` / `separate roundings, ...` (addmm forms), or
`error: ...` when the operation raised.

Run alone, it prints the findings:

    /usr/bin/python3 vectors/drivers/platform_probe.py [--json]

Standard library and torch only.
"""

import json
import re
import struct
import sys
from typing import Callable, Dict, List

import torch

BF16 = torch.bfloat16
F64 = torch.float64

# the sizes of the probes: (rows, inner, cols); PyTorch 1.13 CPU switches bf16
# matmul kernels between them (at rows*inner*cols = 4096)
SIZES = ((8, 16, 8), (16, 32, 16))
SCALAR = 3.4445  # Keller's a: its binary32 and bf16 values differ (3.4445 vs 3.4375)
BETA, ALPHA = -4.775, 2.0315  # Keller's b and c, as torch.optim.Muon's addmm form uses them

SPEC_VALUES = {
    'scalar_mul': 'binary32',
    'tensor0d_mul': 'binary32',
    'matmul': 'binary32',
    'addmm': 'one rounding, binary32 scalars',
    'baddbmm': 'one rounding, binary32 scalars',
    'norm': 'one rounding',
}


def f32(x: float) -> float:
    """The binary32 value nearest to x."""
    return struct.unpack('<f', struct.pack('<f', x))[0]


def bf16_value(x: float) -> float:
    """The bf16 value nearest to x (ties to even)."""
    return float(torch.tensor(x, dtype=F64).to(BF16))


def round_bf16(t: torch.Tensor) -> torch.Tensor:
    """A float64 tensor of values exact in binary32 (as every candidate here is) rounded once to bf16."""
    return t.to(torch.float32).to(BF16)


def integer_matrix(gen: torch.Generator, shape) -> torch.Tensor:
    """Small integers in [-15, 15], as float64 (exact)."""
    return torch.randint(-15, 16, tuple(shape), generator=gen).to(F64)


def differ(got: torch.Tensor, want: torch.Tensor) -> int:
    return int((got.to(F64) != want.to(F64)).sum())


def accumulation_value(got: torch.Tensor, exact: torch.Tensor) -> str:
    """binary32 when got is the exact (binary32-exact) product rounded once to bf16."""
    k = differ(got, round_bf16(exact))
    return 'binary32' if k == 0 else f'not binary32 ({k} of {exact.numel()} differ)'


def scalar_value(got: torch.Tensor, x: torch.Tensor) -> str:
    """How a scalar multiplied a bf16 matrix x: as binary32, or rounded to bf16 first."""
    xd = x.to(F64)
    if differ(got, round_bf16(xd * f32(SCALAR))) == 0:
        return 'binary32'
    if differ(got, round_bf16(xd * bf16_value(SCALAR))) == 0:
        return 'rounded to bf16'
    return f'neither binary32 nor bf16 ({differ(got, round_bf16(xd * f32(SCALAR)))} of {x.numel()} differ)'


def fused_value(got: torch.Tensor, c: torch.Tensor, p: torch.Tensor) -> str:
    """Which evaluation of beta*C + alpha*P (P = A@B exact) gave got."""
    n = c.numel()
    for scalars, b, a in (('binary32', f32(BETA), f32(ALPHA)), ('bf16', bf16_value(BETA), bf16_value(ALPHA))):
        # one rounding: the sum computed exactly (float64 holds it) or in binary32, then bf16
        exact = b * c + a * p
        in_f32 = (c.float() * b + p.float() * a).to(BF16)
        if differ(got, round_bf16(exact)) == 0 or differ(got, in_f32) == 0:
            return f'one rounding, {scalars} scalars'
    for scalars, b, a in (('binary32', f32(BETA), f32(ALPHA)), ('bf16', bf16_value(BETA), bf16_value(ALPHA))):
        sep = round_bf16(round_bf16(b * c).to(F64) + round_bf16(a * round_bf16(p).to(F64)).to(F64))
        if differ(got, sep) == 0:
            return f'separate roundings, {scalars} scalars'
    k = differ(got, round_bf16(f32(BETA) * c + f32(ALPHA) * p))
    return f'not binary32 ({k} of {n} differ from one rounding)'


def _guard(fn: Callable[[], str]) -> str:
    try:
        return fn()
    except Exception as exc:  # a platform without the operation still gets a finding
        return f'error: {type(exc).__name__}: {exc}'


def findings() -> Dict[str, str]:
    """Every finding, by name, in a fixed order; deterministic (a seeded generator)."""
    gen = torch.Generator().manual_seed(20261130)
    out: Dict[str, str] = {}
    x = integer_matrix(gen, (16, 32))
    xb = x.to(BF16)
    out['scalar_mul'] = _guard(lambda: scalar_value(SCALAR * xb, x))
    out['tensor0d_mul'] = _guard(lambda: scalar_value(torch.tensor(SCALAR, dtype=torch.float32) * xb, x))
    for m, k, n in SIZES:
        a = integer_matrix(gen, (m, k))
        b = integer_matrix(gen, (k, n))
        c = integer_matrix(gen, (m, n))
        p = a @ b  # exact: integers below 2^24
        ab, bb, cb = a.to(BF16), b.to(BF16), c.to(BF16)
        at = a.T.contiguous().to(BF16).T  # the same values, a transposed (strided) view
        bt = b.T.contiguous().to(BF16).T
        size = f'{m}x{k}x{n}'
        out[f'matmul_{size}_contiguous'] = _guard(lambda: accumulation_value(ab @ bb, p))
        out[f'matmul_{size}_transposed_a'] = _guard(lambda: accumulation_value(at @ bb, p))
        out[f'matmul_{size}_transposed_b'] = _guard(lambda: accumulation_value(ab @ bt, p))
        out[f'addmm_{size}'] = _guard(lambda: fused_value(torch.addmm(cb, ab, bb, beta=BETA, alpha=ALPHA), c, p))
        zero = torch.zeros(m, n, dtype=BF16)
        out[f'addmm_{size}_accumulation'] = _guard(
            lambda: accumulation_value(torch.addmm(zero, ab, bb, beta=0.0, alpha=1.0), p)
        )
        out[f'baddbmm_2x{size}'] = _guard(
            lambda: fused_value(
                torch.baddbmm(
                    cb.expand(2, m, n).contiguous(),
                    ab.expand(2, m, k).contiguous(),
                    bb.expand(2, k, n).contiguous(),
                    beta=BETA,
                    alpha=ALPHA,
                )[1],
                c,
                p,
            )
        )
        out[f'baddbmm_2x{size}_accumulation'] = _guard(
            lambda: accumulation_value(
                torch.baddbmm(zero.expand(2, m, n).contiguous(), ab.expand(2, m, k).contiguous(),
                              bb.expand(2, k, n).contiguous(), beta=0.0, alpha=1.0)[1],
                p,
            )
        )

    def norm_value() -> str:
        got = xb.norm()
        want = round_bf16(torch.tensor(float(x.pow(2).sum()), dtype=F64).sqrt())
        return 'one rounding' if differ(got, want) == 0 else f'not one rounding (got {float(got)!r}, expected {float(want)!r})'

    out['norm'] = _guard(norm_value)
    return out


def spec_value(name: str) -> str:
    """The value the spec requires of a finding."""
    if name.endswith('_accumulation'):
        return 'binary32'
    for key, value in SPEC_VALUES.items():
        if name == key or name.startswith(key + '_'):
            return value
    raise KeyError(name)


def deviations(found: Dict[str, str]) -> List[str]:
    """The names of the findings whose value is not the spec's."""
    return [k for k, v in found.items() if v != spec_value(k)]


def cpu_flags() -> List[str]:
    """The CPU's vector flags that decide PyTorch's bf16 kernels (Linux /proc/cpuinfo), and
    PyTorch's own 'CPU capability usage' (e.g. AVX2) as 'capability:AVX2'."""
    flags: List[str] = []
    try:
        with open('/proc/cpuinfo', encoding='utf-8', errors='replace') as f:
            for line in f:
                if line.startswith('flags'):
                    have = set(line.split(':', 1)[1].split())
                    wanted = ('avx2', 'fma', 'avx512f', 'avx512bw', 'avx512_vnni', 'avx512_bf16', 'amx_tile', 'amx_bf16')
                    flags = [w for w in wanted if w in have]
                    break
    except OSError:
        pass
    try:
        m = re.search(r'CPU capability usage: (\S+)', torch.__config__.show())
        if m:
            flags.append(f'capability:{m.group(1)}')
    except Exception:
        pass
    return flags


def describe() -> Dict[str, object]:
    """The entries of a results file: {"torch": version, "cpu": [flags], "platform": {finding: value}}."""
    return {'torch': torch.__version__, 'cpu': cpu_flags(), 'platform': findings()}


def format_findings(found: Dict[str, str]) -> str:
    """One line per finding, the deviations from the spec marked."""
    width = max(len(k) for k in found)
    lines = []
    for k, v in found.items():
        mark = '' if v == spec_value(k) else f'   <- spec: {spec_value(k)}'
        lines.append(f'{k:<{width}}  {v}{mark}')
    return '\n'.join(lines)


def main(argv: List[str]) -> int:
    if argv not in ([], ['--json']):
        sys.stderr.write('usage: platform_probe.py [--json]\n')
        return 2
    info = describe()
    if argv == ['--json']:
        json.dump(info, sys.stdout, indent=1)
        sys.stdout.write('\n')
        return 0
    print(f"torch {info['torch']}, cpu {' '.join(info['cpu']) or 'unknown'}")
    print(format_findings(info['platform']))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
