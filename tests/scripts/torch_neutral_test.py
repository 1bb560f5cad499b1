#!/usr/bin/python3
"""Unit tests of the driver's neutral mode (vectors/drivers/neutral.py) and platform probe.

Run by tests/scripts/torch-neutral.sh under `make check`; alone:
    /usr/bin/python3 tests/scripts/torch_neutral_test.py [-v]

What must hold, on any platform:
- under Neutral every probe finding has the value spec/muon.md section 7
  requires (binary32 accumulation and scalars, one rounding);
- where the platform itself deviates (raw findings), the same probe
  inputs give other results in raw and neutral evaluation;
- each bf16 operation under Neutral equals the operation computed in
  binary32 from the same values and rounded once to bf16 (the expected
  values are computed here explicitly in float32/float64, never by the mode);
- a Newton-Schulz iteration written with plain bf16 tensor operations, run
  under Neutral, equals bit for bit the test port's explicit
  binary32-then-round emulation (tests/ports/torch_nemo_port.py), and gives
  bitwise transposes for transposed inputs; written in Keller's order
  (b*A + c*A@A) or with torch.optim.Muon's two addmm, it equals the
  emulations of tests/variants/torch_port_keller_order.py and torch_port_addmm.py
  (and differs from the spec's order);
- views stay views, float32 results stay float32, in-place and out=
  operations write their bf16 tensor.
"""

import os
import struct
import sys
import unittest

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'vectors', 'drivers'))
sys.path[:0] = [os.path.join(HERE, '..', 'ports'), os.path.join(HERE, '..', 'variants')]
import platform_probe  # noqa: E402
import torch_nemo_port  # noqa: E402
import torch_port_addmm  # noqa: E402
import torch_port_keller_order  # noqa: E402
from neutral import Neutral  # noqa: E402

BF = torch.bfloat16


def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def same(x, y):
    """Bitwise equality of two tensors (dtype, shape and every bit pattern)."""
    if x.dtype != y.dtype or x.shape != y.shape:
        return False
    ints = {BF: torch.int16, torch.float32: torch.int32, torch.float64: torch.int64}[x.dtype]
    return bool(torch.equal(x.contiguous().view(ints), y.contiguous().view(ints)))


def spec_order(x, a, b, c):
    aa = x @ x.T
    bb = b * aa + c * (aa @ aa)
    return a * x + bb @ x


def keller_order(x, a, b, c):
    aa = x @ x.T
    bb = b * aa + c * aa @ aa  # Python: (c * aa) @ aa
    return a * x + bb @ x


def addmm_order(x, a, b, c):
    aa = x @ x.T
    bb = torch.addmm(aa, aa, aa, beta=b, alpha=c)
    return torch.addmm(x, bb, x, beta=a)


def native_ns(grad, steps=5, step=spec_order):
    """Spec section 7 written with plain bf16 tensor operations (how ports write it): what bf16
    arithmetic this gives is the platform's, or the neutral mode's."""
    a, b, c = torch_nemo_port.NS_COEFFS
    x = grad.bfloat16()
    transpose = grad.size(0) > grad.size(1)
    if transpose:
        x = x.T
    x = x / (x.norm() + torch_nemo_port.NS_EPS)
    for _ in range(steps):
        x = step(x, a, b, c)
    if transpose:
        x = x.T
    return x.to(grad.dtype)


class ProbeUnderNeutral(unittest.TestCase):
    def test_every_finding_is_the_spec_value(self):
        with Neutral() as mode:
            found = platform_probe.findings()
        self.assertGreater(mode.ops, 0)
        self.assertEqual(platform_probe.deviations(found), [], found)

    def test_raw_and_neutral_differ_where_the_platform_deviates(self):
        raw = platform_probe.findings()
        with Neutral():
            neutral = platform_probe.findings()
        for name in platform_probe.deviations(raw):
            self.assertNotEqual(raw[name], neutral[name], name)
        sys.stderr.write(f"\n  platform deviates in {len(platform_probe.deviations(raw))} of {len(raw)} findings: "
                         f"{', '.join(platform_probe.deviations(raw)) or 'none'}\n")

    def test_probe_inputs_raw_product_differs_from_neutral(self):
        """The probe's small contiguous product: neutral is the exact product rounded once; raw,
        on a platform whose finding says so, is not."""
        gen = torch.Generator().manual_seed(5)
        a = platform_probe.integer_matrix(gen, (8, 16))
        b = platform_probe.integer_matrix(gen, (16, 8))
        want = platform_probe.round_bf16(a @ b)
        raw = a.to(BF) @ b.to(BF)
        with Neutral():
            neutral = a.to(BF) @ b.to(BF)
        self.assertTrue(same(neutral, want))
        if platform_probe.findings()['matmul_8x16x8_contiguous'] != 'binary32':
            self.assertFalse(same(raw, neutral))


class Operations(unittest.TestCase):
    def setUp(self):
        g = torch.Generator().manual_seed(7)
        self.x32 = torch.randn(16, 24, generator=g).to(BF).float()  # values exact in bf16
        self.y32 = torch.randn(16, 24, generator=g).to(BF).float()
        self.x, self.y = self.x32.to(BF), self.y32.to(BF)

    def check(self, got, want32):
        """got (bf16, from the mode) == the float32 computation rounded once."""
        self.assertEqual(got.dtype, BF)
        self.assertTrue(same(got, want32.to(BF)))

    def test_scalars_enter_as_binary32(self):
        s = 3.4445
        with Neutral():
            p, q, r = s * self.x, torch.tensor(s) * self.x, self.x * -4.775
        self.check(p, self.x32 * f32(s))
        self.check(q, self.x32 * f32(s))
        self.check(r, self.x32 * f32(-4.775))

    def test_elementwise(self):
        x, y, x32, y32 = self.x, self.y, self.x32, self.y32
        with Neutral():
            got = {
                'add': x + y, 'add_alpha': torch.add(x, y, alpha=0.3), 'sub': x - y, 'div': x / (y.abs() + 0.5),
                'neg': -x, 'sqrt': x.abs().sqrt(), 'clamp': x.clamp(-0.7, 0.9), 'clamp_min': x.clamp_min(0.1),
                'max': torch.maximum(x, y), 'lerp': torch.lerp(x, y, 0.3), 'addcmul': torch.addcmul(x, x, y, value=0.1),
                'addcdiv': torch.addcdiv(x, x, y.abs() + 1, value=0.1), 'sum': x.sum(), 'norm': x.norm(),
                'vector_norm': torch.linalg.vector_norm(x),
            }
        xa = (x32.abs()).to(BF).float()
        want = {
            'add': x32 + y32, 'add_alpha': torch.add(x32, y32, alpha=f32(0.3)), 'sub': x32 - y32,
            'div': x32 / (y32.abs() + 0.5).to(BF).float(), 'neg': -x32, 'sqrt': xa.sqrt(),
            'clamp': x32.clamp(f32(-0.7), f32(0.9)), 'clamp_min': x32.clamp_min(f32(0.1)),
            'max': torch.maximum(x32, y32), 'lerp': torch.lerp(x32, y32, f32(0.3)),
            'addcmul': torch.addcmul(x32, x32, y32, value=f32(0.1)),
            'addcdiv': torch.addcdiv(x32, x32, (y32.abs() + 1).to(BF).float(), value=f32(0.1)),
            'sum': x32.sum(), 'norm': x32.norm(), 'vector_norm': torch.linalg.vector_norm(x32),
        }
        for name in got:
            with self.subTest(op=name):
                self.check(got[name], want[name])

    def test_products_whatever_the_strides(self):
        g = torch.Generator().manual_seed(11)
        a = torch.randint(-15, 16, (8, 16), generator=g).double()
        b = torch.randint(-15, 16, (16, 8), generator=g).double()
        c = torch.randint(-15, 16, (8, 8), generator=g).double()
        ab, bb, cb = a.to(BF), b.to(BF), c.to(BF)
        at, bt = a.T.contiguous().to(BF).T, b.T.contiguous().to(BF).T
        exact = a @ b
        with Neutral():
            prods = [ab @ bb, at @ bb, ab @ bt, at @ bt, torch.mm(ab, bb), torch.matmul(ab, bb),
                     torch.bmm(ab[None], bb[None])[0]]
            fused = torch.addmm(cb, ab, bb, beta=-4.775, alpha=2.0315)
            bfused = torch.baddbmm(cb[None], ab[None], bb[None], beta=-4.775, alpha=2.0315)[0]
        for i, p in enumerate(prods):
            with self.subTest(product=i):
                self.assertTrue(same(p, platform_probe.round_bf16(exact)))
        want = platform_probe.round_bf16(f32(-4.775) * c + f32(2.0315) * exact)
        self.assertTrue(same(fused, want))
        self.assertTrue(same(bfused, want))

    def test_beta_zero_ignores_the_input_in_every_dtype(self):
        """Rule 5: addmm and baddbmm with beta=0 ignore their input, NaN included, in bf16 and in
        float32 (PyTorch 1.13 CPU's baddbmm propagates it: spec/profiles/timm.md 9a; timm's batched
        Newton-Schulz writes into torch.empty memory that way)."""
        g = torch.Generator().manual_seed(23)
        a = torch.randint(-15, 16, (9, 4, 8), generator=g).double()
        exact = a @ a.mT  # small integers: exact in binary32
        for dt in (BF, torch.float32):
            x = a.to(dt)
            want = platform_probe.round_bf16(exact) if dt == BF else exact.to(torch.float32)
            with self.subTest(dtype=str(dt)):
                with Neutral():
                    out = torch.full((9, 4, 4), float('nan'), dtype=dt)
                    r = torch.baddbmm(out, x, x.mT, beta=0.0, alpha=1.0, out=out)
                    m = torch.full((4, 4), float('nan'), dtype=dt)
                    s = torch.addmm(m, x[0], x[0].mT, beta=0.0)
                self.assertIs(r, out)
                self.assertTrue(same(out, want))
                self.assertTrue(same(s, want[0]))

    def test_in_place_out_and_foreach_write_their_bf16_tensor(self):
        x, y, x32, y32 = self.x, self.y, self.x32, self.y32
        with Neutral():
            z = x.clone()
            r = z.mul_(3.4445)
            w = x.clone()
            w.add_(y, alpha=2.0315)
            o = torch.empty(16, 16, dtype=BF)
            r2 = torch.mm(x, y.T, out=o)
            lst = [x.clone(), y.clone()]
            torch._foreach_mul_(lst, 3.4445)
            t = x.clone().T  # in place on a strided view
            t.mul_(3.4445)
        self.assertIs(r, z)
        self.assertIs(r2, o)
        self.check(z, x32 * f32(3.4445))
        self.check(w, x32 + y32 * f32(2.0315))
        self.check(o, x32 @ y32.T)
        self.check(lst[0], x32 * f32(3.4445))
        self.check(lst[1], y32 * f32(3.4445))
        self.check(t, (x32 * f32(3.4445)).T)

    def test_views_and_wider_results(self):
        with Neutral() as mode:
            v = self.x.T
            s = self.x[1:3]
            f = self.x32 * self.x  # float32 tensor times bf16 tensor: float32, as PyTorch types it
            c = self.x.float()
        self.assertIs(v._base, self.x)
        self.assertIs(s._base, self.x)
        self.assertEqual(f.dtype, torch.float32)
        self.assertTrue(same(f, self.x32 * self.x32))
        self.assertEqual(c.dtype, torch.float32)
        self.assertEqual(mode.ops, 1)  # only the product computed; views and conversions ran as they are

    def test_a_mix_pytorch_refuses_raises_as_raw(self):
        """Rule 6: lerp_ of a float32 buffer toward a bf16 gradient raises raw on every platform;
        under the mode it raises the same error (it computed it in binary32 before), and the buffer
        is left as it was; a mix PyTorch allows still runs."""
        raw = self.x32.clone()
        with self.assertRaises(RuntimeError) as want:
            raw.lerp_(self.y, 0.1)
        m = self.x32.clone()
        with self.assertRaises(RuntimeError) as got:
            with Neutral():
                m.lerp_(self.y, 0.1)
        self.assertEqual(str(got.exception), str(want.exception))
        self.assertTrue(same(m, self.x32))
        with Neutral():
            f = self.x32 * self.x
        self.assertTrue(same(f, self.x32 * self.x32))


class NewtonSchulz(unittest.TestCase):
    def test_native_bf16_code_under_neutral_is_binary32_then_round(self):
        g = torch.Generator().manual_seed(13)
        for shape in ((8, 8), (16, 32), (32, 16), (10, 30), (30, 10), (3, 17), (64, 64), (24, 40)):
            x = torch.randn(*shape, generator=g)
            with self.subTest(shape=shape):
                with Neutral():
                    got = native_ns(x)
                self.assertTrue(same(got, torch_nemo_port.zeropower_via_newtonschulz5(x)))

    def test_other_orders_under_neutral_are_the_variants_emulations(self):
        """Keller's b*A + c*A@A and torch.optim.Muon's two addmm, written natively, under Neutral
        equal the explicit emulations of tests/variants/torch_port_keller_order.py and torch_port_addmm.py."""
        g = torch.Generator().manual_seed(19)
        for step, port in ((keller_order, torch_port_keller_order), (addmm_order, torch_port_addmm)):
            for shape in ((8, 8), (16, 32), (32, 16), (10, 30), (64, 64)):
                x = torch.randn(*shape, generator=g)
                with self.subTest(order=step.__name__, shape=shape):
                    with Neutral():
                        got = native_ns(x, step=step)
                    self.assertTrue(same(got, port.zeropower_via_newtonschulz5(x)))
                    self.assertFalse(same(got, torch_nemo_port.zeropower_via_newtonschulz5(x)))

    def test_transpose_pairs_are_bitwise_under_neutral(self):
        g = torch.Generator().manual_seed(17)
        for shape in ((10, 30), (3, 17), (16, 40)):
            x = torch.randn(*shape, generator=g)
            with Neutral():
                o, ot = native_ns(x), native_ns(x.T.contiguous())
            with self.subTest(shape=shape):
                self.assertTrue(same(o.T.contiguous(), ot))


if __name__ == '__main__':
    unittest.main()
