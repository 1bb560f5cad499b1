#!/usr/bin/env python3
"""Checks that each profile port (tests/ports/torch_<profile>_port.py) does what its spec page
(spec/profiles/<profile>.md) states, on small hand-checkable inputs; no upstream code needed.
Run by tests/scripts/profile-ports.sh under `make check`. Prints one line per check; exit 1 on a failure."""

import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports'))
import torch_dion_port as dion  # noqa: E402
import torch_keller_port as keller  # noqa: E402
import torch_megatron_port as megatron  # noqa: E402
import torch_keras_port as keras_port  # noqa: E402
import torch_moonlight_port as moonlight  # noqa: E402
import torch_optax_port as optax  # noqa: E402
import torch_paddle_port as paddle  # noqa: E402
import torch_timm_port as timm  # noqa: E402
import torch_torch_port as tport  # noqa: E402

failures = 0


def check(name, ok):
    global failures
    print(f"{'ok  ' if ok else 'FAIL'} {name}")
    failures += not ok


def error_of(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001
        return f"{type(exc).__name__}: {exc}"
    return None


def P(*shape, value=0.0):
    return torch.nn.Parameter(torch.full(shape, value))


# ---- keller (spec/profiles/keller.md)
w, b = P(4, 8), P(5)
opt = keller.SingleDeviceMuonWithAuxAdam([dict(params=[w], use_muon=True), dict(params=[b], use_muon=False)])
w.grad = torch.ones(4, 8)
opt.step()
M = opt.state[w]["momentum_buffer"]
check("keller 4: EMA buffer after one step of ones is 1 - beta", torch.allclose(M, torch.full_like(M, 0.05)))
check("keller 8: p.grad holds the Nesterov input (1-beta)G + beta M", torch.allclose(w.grad, torch.full_like(M, 0.05 + 0.95 * 0.05)))
check("keller 3: a missing gradient becomes zeros and counts an Adam step", b.grad is not None and opt.state[b]["step"] == 1)
check("keller 1.1: group keys are exact (nesterov refused)",
      error_of(lambda: keller.SingleDeviceMuonWithAuxAdam([dict(params=[P(2, 2)], use_muon=True, nesterov=True)])) == "AssertionError: ")
check("keller 1.1: use_muon is required",
      error_of(lambda: keller.SingleDeviceMuonWithAuxAdam([dict(params=[P(2, 2)])])) == "AssertionError: ")
# 4-D scale from the last two dims: a (4, 2, 3, 1) filter gets sqrt(3) on top of the flattened NS output
conv, flat = P(4, 2, 3, 1), P(4, 6)
g = torch.randn(4, 2, 3, 1, generator=torch.Generator().manual_seed(1))
o = keller.SingleDeviceMuonWithAuxAdam([dict(params=[conv, flat], use_muon=True, lr=1.0)])
conv.grad, flat.grad = g.clone(), g.reshape(4, 6).clone()
o.step()
ratio = (conv.detach().reshape(4, 6).norm() / flat.detach().norm()).item()
check(f"keller 4.5: 4-D scale sqrt(kh/kw) = sqrt(3) (measured {ratio:.4f})", abs(ratio - math.sqrt(3)) < 0.02)
a = P(3, value=1.0)
o = keller.SingleDeviceMuonWithAuxAdam([dict(params=[a], use_muon=False, lr=0.1, eps=0.5)])
a.grad = torch.ones(3)
o.step()
check("keller 6: Adam step 1 moves by lr/(1+eps)", torch.allclose(a.detach(), torch.full((3,), 1 - 0.1 / 1.5)))

# ---- torch (spec/profiles/torch.md)
check("torch 1.1: Learning rate should be >= 0 but is: -1.0",
      error_of(lambda: tport.Muon([P(2, 2)], lr=-1.0)) == "ValueError: Learning rate should be >= 0 but is: -1.0")
check("torch 1.1: NaN lr refused", error_of(lambda: tport.Muon([P(2, 2)], lr=float("nan"))) is not None)
check("torch 1.1: momentum has no upper bound", error_of(lambda: tport.Muon([P(2, 2)], momentum=1.5)) is None)
check("torch 1.1: 2-D only, at construction", error_of(lambda: tport.Muon([P(3)])) ==
      "ValueError: Muon only supports 2D parameters whereas we found a parameter with size: torch.Size([3])")
check("torch 1.1: adjust_lr_fn checked", error_of(lambda: tport.Muon([P(2, 2)], adjust_lr_fn="x")) ==
      "ValueError: Adjust learning rate function x is not supported")
moves = {}
for fn in (None, "match_rms_adamw"):
    q = P(16, 4)
    o = tport.Muon([q], lr=1.0, weight_decay=0.0, adjust_lr_fn=fn)
    q.grad = torch.randn(16, 4, generator=torch.Generator().manual_seed(2))
    gq = q.grad.clone()
    o.step()
    moves[fn] = q.detach().norm().item()
check("torch 7: p.grad untouched", torch.equal(q.grad, gq))
r = moves["match_rms_adamw"] / moves[None]
check(f"torch 4.4: match_rms_adamw / original = 0.2*sqrt(16)/sqrt(4) = 0.4 (measured {r:.6f})", abs(r - 0.4) < 1e-6)
check("torch 6: state is momentum_buffer only", set(o.state[q]) == {"momentum_buffer"})

# ---- moonlight (spec/profiles/moonlight.md)
w, b = P(4, 8), P(5, value=1.0)
o = moonlight.Muon(lr=0.1, wd=0.0, muon_params=[w], adamw_params=[b], adamw_eps=0.5)
check("moonlight 7: use_muon in the state from construction", o.state[w] == {"use_muon": True} and o.state[b] == {"use_muon": False})
w.grad, b.grad = torch.ones(4, 8), torch.ones(5)
o.step()
check("moonlight 4: sum buffer after one step of ones is 1", torch.allclose(o.state[w]["momentum_buffer"], torch.ones(4, 8)))
s2 = math.sqrt(0.05)
check("moonlight 6: AdamW eps on the uncorrected sqrt(v): step 1 moves by lr*sqrt(1-b2)/(sqrt(1-b2)+eps)",
      torch.allclose(b.detach(), torch.full((5,), 1 - 0.1 * s2 / (s2 + 0.5))))
check("moonlight 1.1: 4-D Muon parameter: AssertionError: 4", error_of(lambda: moonlight.Muon(muon_params=[P(2, 3, 3, 3)])) == "AssertionError: 4")
check("moonlight 6: state keys", set(o.state[b]) == {"use_muon", "step", "moment1", "moment2"})
u = P(8, 32)
o = moonlight.Muon(lr=1.0, wd=0.0, muon_params=[u], nesterov=False)
u.grad = torch.randn(8, 32, generator=torch.Generator().manual_seed(3))
o.step()
rms = (u.detach().norm() / math.sqrt(u.numel())).item()
check(f"moonlight 4.5: update RMS about 0.2 (0.2*sqrt(32)*O, O RMS about 1/sqrt(32); measured {rms:.3f})", 0.13 < rms < 0.27)

# ---- timm (spec/profiles/timm.md)
check("timm 1.1: Invalid learning rate: -1.0", error_of(lambda: timm.Muon([P(2, 2)], lr=-1.0)) == "ValueError: Invalid learning rate: -1.0")
check("timm 1.1: NaN lr accepted", error_of(lambda: timm.Muon([P(2, 2)], lr=float("nan"))) is None)
check("timm 1.1: Invalid momentum: 1.0", error_of(lambda: timm.Muon([P(2, 2)], momentum=1.0)) == "ValueError: Invalid momentum: 1.0")
q = P(8, 8)
o = timm.Muon([q])
q.grad = torch.ones(8, 8).to_sparse()
check("timm 1.2: Muon does not support sparse gradients", error_of(o.step) == "RuntimeError: Muon does not support sparse gradients")
routes = {s: timm.suitable_for_muon(torch.empty(s)) for s in [(64, 128), (96, 3, 4, 4), (4, 2048), (64,), (1, 196, 768), (3, 16), (4, 512), (4, 513)]}
check("timm 2: routing examples (64,128) (96,3,4,4) (4,512) Muon; (4,2048) (64,) (1,196,768) (3,16) (4,513) AdamW",
      routes == {(64, 128): True, (96, 3, 4, 4): True, (4, 2048): False, (64,): False, (1, 196, 768): False,
                 (3, 16): False, (4, 512): True, (4, 513): False})
for nesterov in (False, True):
    q, bias = P(8, 8), P(8, value=1.0)
    o = timm.Muon([q, bias], nesterov=nesterov, lr=0.1, fallback_lr_scale=0.5, eps=0.5)
    q.grad, bias.grad = torch.ones(8, 8), torch.ones(8)
    o.step()
    check(f"timm 8: nesterov={nesterov}: p.grad {'rewritten' if nesterov else 'untouched'}",
          torch.equal(q.grad, torch.ones(8, 8)) != nesterov)
    m_num = (0.9 * 0.1 + 0.1) / 0.1 if nesterov else 1.0   # NAdamW numerator / bc1 at step 1
    check(f"timm 6: nesterov={nesterov}: fallback lr = lr*fallback_lr_scale, eps shared"
          f"{', NAdamW' if nesterov else ''}", torch.allclose(bias.detach(), torch.full((8,), 1 - 0.05 * m_num / 1.5)))
check("timm 7: state keys", set(o.state[q]) == {"use_muon", "momentum_buffer"} and set(o.state[bias]) == {"use_muon", "step", "exp_avg", "exp_avg_sq"})
seq_ok = True
X = torch.randn(6, 10, generator=torch.Generator().manual_seed(4))
one = timm.zeropower_via_newtonschulz(X, 7, [(3.4445, -4.775, 2.0315), (2.0, -1.5, 0.5)])
ref = timm.zeropower_via_newtonschulz(X, 7, [(3.4445, -4.775, 2.0315)] + [(2.0, -1.5, 0.5)] * 6)
check("timm 5: coefficient order repeat_last", torch.equal(one, ref))

# ---- dion (spec/profiles/dion.md)
check("dion 2: Invalid learning rate: -1.0", error_of(lambda: dion.Muon([P(2, 2)], lr=-1.0)) == "ValueError: Invalid learning rate: -1.0")
check("dion 2: Invalid momentum factor (mu): -0.5",
      error_of(lambda: dion.Muon([P(2, 2)], mu=-0.5)) == "ValueError: Invalid momentum factor (mu): -0.5")
check("dion 2: Invalid betas: (0.9, -0.1)",
      error_of(lambda: dion.Muon([P(2, 2)], betas=(0.9, -0.1))) == "ValueError: Invalid betas: (0.9, -0.1)")
check("dion 2: NaN lr, mu 1.0 and a negative weight_decay accepted",
      error_of(lambda: dion.Muon([P(2, 2)], lr=float("nan"), mu=1.0, weight_decay=-1.0)) is None)
b = P(8)
o = dion.Muon([b])
b.grad = torch.ones(8)
check("dion 2: a 1-D Muon parameter: AssertionError at the step",
      error_of(o.step) == "AssertionError: Muon optimizer only supports matrix parameters.")
q = P(8, 8)
o = dion.Muon([dict(params=[q], algorithm="sgd")])
q.grad = torch.ones(8, 8)
check("dion 2: Unknown algorithm: sgd", error_of(o.step) == "ValueError: Unknown algorithm: sgd")
q = P(8, 8)
o = dion.Muon([q], mu=0.5)
for _ in range(2):
    q.grad = torch.ones(8, 8)
    o.step()
check("dion 3: sum momentum buffer (1 then 1.5 for mu 0.5)", torch.equal(o.state[q]["momentum"], torch.full((8, 8), 1.5)))
check("dion 9: Muon state key momentum", set(o.state[q]) == {"momentum"})
check("dion 5: spectral_norm sqrt(rows/cols) without max: 0.5 for (8, 32), 2 for (32, 8)",
      dion.adjusted_lr(1.0, (8, 32), "spectral_norm", False) == 0.5 and dion.adjusted_lr(1.0, (32, 8), "spectral_norm", False) == 2.0)
check("dion 5: flatten=True takes (d0, rest): (4, 2, 3, 3) -> sqrt(4/18)",
      dion.adjusted_lr(1.0, (4, 2, 3, 3), "spectral_norm", True) == math.sqrt(4 / 18))
bias = P(8, value=1.0)
o = dion.Muon([dict(params=[bias], algorithm="adamw")], lr=0.1, weight_decay=0.0, epsilon=0.5)
bias.grad = torch.ones(8)
o.step()
check("dion 8: AdamW step 1: lr * m_hat / (sqrt(v_hat) + eps) = 0.1 / 1.5, the one epsilon",
      torch.allclose(bias.detach(), torch.full((8,), 1 - 0.1 / 1.5)))
check("dion 9: AdamW state keys momentum, variance, step_dev",
      set(o.state[bias]) == {"momentum", "variance", "step_dev"} and o.state[bias]["step_dev"].dtype == torch.float32)
check("dion 1: group keys beta1 and beta2", {"beta1", "beta2", "mu", "epsilon"} <= set(o.param_groups[0]))

# ---- optax (spec/profiles/optax.md)
check("optax 2: Unknown ns_coeff preset string: muon",
      error_of(lambda: optax.muon(0.1, ns_coeffs="muon")) == "ValueError: Unknown ns_coeff preset string: muon")
check("optax 2: ns_coeffs must have shape (3,) or (n, 3), got (2, 2)",
      error_of(lambda: optax.Muon([P(2, 2)], 0.1, ns_coeffs=((1.0, 2.0), (3.0, 4.0))))
      == "ValueError: ns_coeffs must have shape (3,) or (n, 3), got (2, 2)")
check("optax 2: 'dion' with ns_steps 4: Not enough coeffs to perform 4 steps (inverted)",
      error_of(lambda: optax.Muon([P(2, 2)], 0.1, ns_coeffs="dion", ns_steps=4))
      == "ValueError: Not enough coeffs to perform 4 steps")
check("optax 2: NaN learning_rate, beta 1.0 and a negative weight_decay accepted",
      error_of(lambda: optax.Muon([P(2, 2)], float("nan"), beta=1.0, weight_decay=-1.0)) is None)
x = torch.randn(8, 16, generator=torch.Generator().manual_seed(1))
dion_list = optax._NS_COEFFS_PRESET_DICT["dion"]
check("optax 4: a list runs once each: 'dion' with ns_steps 7 equals ns_steps 5",
      torch.equal(optax.orthogonalize_via_newton_schulz(x, dion_list, 7), optax.orthogonalize_via_newton_schulz(x, dion_list, 5)))
check("optax 4: a triple runs ns_steps times: 3 steps differ from 5",
      not torch.equal(optax.orthogonalize_via_newton_schulz(x, optax.STANDARD, 3),
                      optax.orthogonalize_via_newton_schulz(x, optax.STANDARD, 5)))
check("optax 5: fan_out scale sqrt(max(1, cols/rows)): 2 for (8, 32), 1 for (32, 8); consistent_rms 0.2: 0.2 sqrt(32)",
      optax._scale((8, 32), None) == 2.0 and optax._scale((32, 8), None) == 1.0
      and optax._scale((8, 32), 0.2) == math.sqrt(32) * 0.2)
w, bias = P(4, 8), P(8)
o = optax.Muon([w, bias], 0.1)
w.grad, bias.grad = torch.ones(4, 8), torch.ones(8)
o.step()
check("optax 3: EMA buffer (1 - beta) g = 0.05 after one step, count 1",
      torch.allclose(o.state[w]["momentum_buffer"], torch.full((4, 8), 0.05)) and int(o.state[w]["step"]) == 1)
check("optax 6: NAdam step 1 on g = 1: -lr (0.9 * 0.1 / 0.19 + 0.1 / 0.1) / (1 + 1e-8)",
      torch.allclose(bias.detach(), torch.full((8,), -0.1 * (0.9 * 0.1 / 0.19 + 1.0) / (1 + 1e-8))))
check("optax 7: a 1-D leaf takes Adam (exp_avg, exp_avg_sq)", {"exp_avg", "exp_avg_sq", "step"} == set(o.state[bias]))
# ---- megatron (spec/profiles/megatron.md)
check("megatron 2: num_ns_steps must be at least 1, got 0",
      error_of(lambda: megatron.MegatronMuon([P(2, 2)], muon_num_ns_steps=0)) == "ValueError: num_ns_steps must be at least 1, got 0")
w, b, e, c = P(4, 4), P(4), P(6, 4), P(2, 2, 2)
o = megatron.MegatronMuon([dict(params=[w, b, c]), dict(params=[e], use_muon=False)])
check("megatron 3: untagged 2-D Muon, 1-D Adam, tagged 2-D Adam, untagged 3-D Adam",
      [o.is_muon(g, p) for g, p in ((o.param_groups[0], w), (o.param_groups[0], b), (o.param_groups[1], e),
                                   (o.param_groups[0], c))] == [True, False, False, False])
c.grad = torch.ones(2, 2, 2)
o.step()
check("megatron 3: a 3-D untagged parameter steps as Adam (exp_avg, exp_avg_sq)",
      {"exp_avg", "exp_avg_sq", "step"} == set(o.state[c]))
check("megatron 5: muon_coefficient_type outside Emerging-Optimizers v0.2.0 (cans): Invalid coefficient type",
      error_of(lambda: megatron.newton_schulz(torch.ones(2, 2), 5, 'cans')) == "ValueError: Invalid coefficient type: cans")
check("megatron 6: Nesterov off, spectral, 5 steps, clip 1.0 by default",
      not o.nesterov and o.scale_mode == "spectral" and o.num_ns_steps == 5 and o.clip_grad == 1.0)
bias = P(2, value=1.0)
o = megatron.MegatronMuon([bias], lr=0.1, weight_decay=0.0, clip_grad=1.0)
g = torch.tensor([3.0, 4.0])
check("megatron 1: clipping by the global norm 5: coefficient 1 / (5 + 1e-6)",
      torch.equal(o._clipped([g])[0], g * (1.0 / (5.0 + 1e-6))))
check("megatron 1: a global norm below the bound: unchanged", o._clipped([g / 10])[0] is not None and
      torch.equal(o._clipped([g / 10])[0], g / 10))
bias.grad = g.clone()
o.step()
check("megatron 4: Adam step 1 on a clipped gradient: lr * m_hat / (sqrt(v_hat) + eps), ~0.1 sign(g)",
      torch.allclose(bias.detach(), torch.full((2,), 1 - 0.1), atol=1e-6))
check("megatron 1: p.grad left as given (copies are scaled)", torch.equal(bias.grad, g))
check("megatron 4: Adam state step, exp_avg, exp_avg_sq", set(o.state[bias]) == {"step", "exp_avg", "exp_avg_sq"})
# ---- paddle (spec/profiles/paddle.md)
def PN(name, *shape, value=0.0):
    p = P(*shape, value=value)
    p.muonref_name = name
    return p


check("paddle 2: Invalid ns_coeff_type: quartic",
      error_of(lambda: paddle.Muon(parameters=[P(2, 2)], ns_coeff_type="quartic")) == "AssertionError: Invalid ns_coeff_type: quartic")
check("paddle 2: custom without ns_coeffs",
      error_of(lambda: paddle.Muon(parameters=[P(2, 2)], ns_coeff_type="custom"))
      == "AssertionError: ns_coeffs must be provided when ns_coeff_type is 'custom'.")
check("paddle 2: a list of dicts refused",
      error_of(lambda: paddle.Muon(parameters=[dict(params=[P(2, 2)])]))
      == "TypeError: Muon optimizer only supports a flat list of parameters, not a list of parameter groups.")
check("paddle 2: NaN lr, momentum 1.0 and a negative weight_decay accepted",
      error_of(lambda: paddle.Muon(float("nan"), [P(2, 2)], momentum=1.0, weight_decay=-1.0)) is None)
check("paddle 4: a 4-D Muon input refused",
      error_of(lambda: paddle.zeropower_via_newtonschulz5(torch.ones(2, 2, 2, 2)))
      == "ValueError: Input tensor X must be 2D or 3D (batched), got 4D")
check("paddle 7: substring rule: 'bias' excludes unbiased_proj.weight, 'embed' Embed_Tokens, not mlp_gate by 'mlp.gate'",
      not paddle.Muon._default_should_use_muon("unbiased_proj.weight", (4, 4), ["bias"])
      and not paddle.Muon._default_should_use_muon("Embed_Tokens", (4, 4), ["embed"])
      and paddle.Muon._default_should_use_muon("layers.0.mlp_gate", (4, 4), ["mlp.gate"])
      and not paddle.Muon._default_should_use_muon("conv", (4, 2, 3, 3), []))
q = PN("q", 8, 8)
o = paddle.Muon(0.1, [q], muon_param_info_map={})
q.grad = torch.ones(8, 8)
check("paddle 2: a parameter missing from the map", error_of(o.step) == "AssertionError: muon_param_info_map does not have q")
check("paddle 4: presets cycled: aol step 4 is its first triple",
      [paddle.NS_COEFFICIENT_SETS["aol"][i % 4] for i in range(5)][4] == (4.0098, -7.0585, 2.4635))
check("paddle 5: version 2 scale 2 on (8, 32) times 0.2, two bf16 products",
      torch.equal(paddle.scaling_fn(torch.ones(8, 32, dtype=torch.bfloat16), 2, 0.2),
                  torch.full((8, 32), 0.4, dtype=torch.float32).to(torch.bfloat16)))
b = PN("b", 8, value=1.0)
o = paddle.Muon(0.1, [b], weight_decay=0.0, adam_epsilon=0.5, muon_param_info_map={"b": paddle.MuonParamInfo(False)})
b.grad = torch.ones(8)
o.step()
check("paddle 6: AdamW step 1: lr * m_hat / (sqrt(v_hat) + eps) = 0.1 / 1.5 (pows start at beta)",
      torch.allclose(b.detach(), torch.full((8,), 1 - 0.1 / 1.5)))
w = PN("w", 4, 8, value=1.0)
o = paddle.Muon(0.1, [w], weight_decay=-0.5, muon_param_info_map={"w": paddle.MuonParamInfo(True)})
w.grad = torch.zeros(4, 8)
o.step()
check("paddle 5: a negative weight_decay does not decay a Muon parameter (zero gradient: no change)",
      torch.equal(w.detach(), torch.ones(4, 8)))
check("paddle 9: Muon state moment1 only", set(o.state[w]) == {"moment1"})
# ---- keras (spec/profiles/keras.md)
def KP(path, *shape, value=0.0):
    p = P(*shape, value=value)
    p.path = path
    return p


check("keras 2: no value checks (negative lr, momentum 1, NaN accepted)",
      error_of(lambda: keras_port.Muon([P(2, 2)], learning_rate=-1.0, momentum=1.0, weight_decay=float("nan"))) is None)
check("keras 2: Argument(s) not recognized: {'foo': 1}",
      error_of(lambda: keras_port.Muon([P(2, 2)], foo=1)) == "ValueError: Argument(s) not recognized: {'foo': 1}")
q = KP("dense/kernel", 2, 2)
o = keras_port.Muon([q])
check("keras 2: every gradient None: No gradients provided for any variable.",
      error_of(o.step) == "ValueError: No gradients provided for any variable.")
o = keras_port.Muon([P(4, 4)], exclude_layers=["dense.*out", "^head"])
route = {n: keras_port.Muon.should_use_adamw(KP(n, *s), o.param_groups[0]) for n, s in (
    ("dense/kernel", (4, 4)), ("dense/bias", (4,)), ("attn/kernel", (2, 4, 4)), ("Token_Embedding/table", (4, 4)),
    ("dense_1/output", (4, 4)), ("Dense_1/output", (4, 4)), ("head/kernel", (4, 4)), ("lm_head/kernel", (4, 4)))}
check("keras 7: 2-D only, embedding in any case, re.search case-sensitive and anchored",
      route == {"dense/kernel": False, "dense/bias": True, "attn/kernel": True, "Token_Embedding/table": True,
                "dense_1/output": True, "Dense_1/output": False, "head/kernel": True, "lm_head/kernel": False})
w, b = KP("dense/kernel", 4, 8, value=1.0), KP("dense/bias", 4, value=1.0)
o = keras_port.Muon([w, b], learning_rate=0.1, weight_decay=0.5, adam_weight_decay=0.2, adam_lr_ratio=0.5)
w.grad = torch.ones(4, 8)
o.step()
check("keras 3, 8: a variable without gradient is untouched; every slot built, step = iterations",
      torch.equal(b.detach(), torch.ones(4)) and set(o.state[b]) == {"momentum", "velocity", "step"}
      and o.state[b]["step"] == 1 and set(o.state[w]) == {"momentum", "step"})
b.grad = torch.ones(4)
w.grad = None
o.step()
# t = 2: decay 1 - 0.1 * 0.2; m = 0.1, v = 0.001; alpha = 0.05 sqrt(1 - 0.999^2) / (1 - 0.9^2)
alpha = 0.05 * math.sqrt(1 - 0.999 ** 2) / (1 - 0.9 ** 2)
want = (1 - 0.1 * 0.2) - 0.1 * alpha / (math.sqrt(0.001) + 1e-7)
check("keras 3, 6: AdamW decay with the Muon lr and adam_weight_decay; t = iterations + 1 = 2",
      abs(b[0].item() - want) < 1e-6 and o.state[b]["step"] == 2)
X = torch.randn(12, 6, generator=torch.Generator().manual_seed(5))
check("keras 4: Newton-Schulz of a tall matrix is the transpose of the wide one's, bit for bit",
      torch.equal(keras_port.zeropower_via_newtonschulz5(X, 5), keras_port.zeropower_via_newtonschulz5(X.T, 5).T))
w = KP("w", 8, 32, value=0.0)
o = keras_port.Muon([w], learning_rate=1.0, weight_decay=0.0, momentum=0.0, nesterov=False)
w.grad = torch.eye(8, 32)
o.step()
s_ns = keras_port.zeropower_via_newtonschulz5(torch.eye(8, 32), 5)
check("keras 5: update lr O 0.2 sqrt(max(8, 32))", torch.allclose(-w.detach(), s_ns * 0.2 * math.sqrt(32)))

print(f"{failures} failed")
sys.exit(1 if failures else 0)
