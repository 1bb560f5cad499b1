"""Unit tests of the training-loop lifecycle's gradient split (vectors/drivers/torch_driver.py
split_gradient): the two micro-batch gradients sum to the vector's gradient bit for bit in
float32, on random values of every binade and on the special values (signed zeros,
subnormals, the largest finite values, values that round to bf16 infinity, infinities,
NaNs with payloads; a signalling NaN comes back quieted, as any float32 addition does).  A naive split by rounding to nearest bf16 is run on the same values
and must fail (the test can tell a wrong split).  Prints a Check-style summary line.

Usage: torch_lifecycle_test.py SRCDIR.  Exit 0 pass, 1 fail."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(sys.argv[1], 'vectors', 'drivers'))
from torch_driver import split_gradient  # noqa: E402

checks = fails = 0


def check(name, ok, detail=''):
    global checks, fails
    checks += 1
    if not ok:
        fails += 1
        print(f"torch-lifecycle:0:F:split:{name}:0: {detail}")


def bits(t):
    return t.contiguous().view(torch.int32)


def from_bits(ints):
    return torch.tensor(ints, dtype=torch.int64).to(torch.int32).view(torch.float32)


SPECIAL = [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x3f800000, 0x3f800001,
           0x3f80ffff, 0x3f808000, 0x7f7fffff, 0xff7fffff, 0x7f7f8000, 0x7f7fc000, 0x7f7fc001, 0x7f800000,
           0xff800000, 0x7fc00000, 0x7fc00001, 0xffc12345, 0x7f812345]
gen = torch.Generator().manual_seed(20261130)
rand = torch.randint(0, 2 ** 32, (200000,), generator=gen, dtype=torch.int64)
for name, g in (('special', from_bits(SPECIAL)), ('random_bits', from_bits(rand.tolist())),
                ('normal', torch.randn(4096, generator=gen)), ('matrix', torch.randn(16, 32, generator=gen) * 1e-30)):
    g1, g2 = split_gradient(g)
    s = g1 + g2
    # a signalling NaN (exponent all ones, quiet bit clear, payload not 0) is quieted by any
    # addition: expected back with the quiet bit set, every other value bit for bit
    b = bits(g)
    snan = ((b & 0x7f800000) == 0x7f800000) & ((b & 0x007fffff) != 0) & ((b & 0x00400000) == 0)
    want = torch.where(snan, b | 0x00400000, b)
    check(f'{name}_sum_exact', torch.equal(bits(s), want),
          f"{int((bits(s) != want).sum())} elements of g1 + g2 differ from g")
    finite = torch.isfinite(g)
    check(f'{name}_g1_bf16', bool(((bits(g1) & 0xffff) == 0)[finite].all()), "g1 is not bf16-valued")
    check(f'{name}_shapes', g1.shape == g.shape and g2.shape == g.shape and g1.dtype == torch.float32)

# the test tells a wrong split: rounding to nearest bf16 carries into infinity near FLT_MAX
g = from_bits(SPECIAL)
n1 = g.to(torch.bfloat16).to(torch.float32)
n2 = g - n1
check('naive_round_split_is_caught', not torch.equal(bits(n1 + n2), bits(g)),
      "rounding to nearest gave an exact split on the special values: the test could not fail")
print(f"{(checks - fails) * 100 // checks}%: Checks: {checks}, Failures: {fails}, Errors: 0")
sys.exit(1 if fails else 0)
