"""Variants of the profiles' PyTorch test ports (tests/ports/torch_<profile>_port.py), for the
measurements of spec/vectors.md 2.3, 3.1 and 5.1, chosen by the environment variable

    MUONREF_PORT_VARIANT=PROFILE:KIND[:ARG]

KIND:
  float32, float64  the port with its Newton-Schulz in that dtype (every bf16 cast of its module
                    made to the dtype; paddle through ns_matmul_dtype; nemo is
                    tests/variants/torch_port_fp32_ns.py / torch_port_fp64_ns.py): a correct port of the
                    profile, judged with --ns-format fp32 (the ns function's float64 result is
                    returned as float32, as a port returns the parameter's dtype)
  scale:FACTOR      the Muon update FACTOR times the port's own: the Newton-Schulz output, as step()
                    uses it, times FACTOR in float32 (a scale error: 1.01 is 1 %)
  typo              a one-digit typo in the port's default coefficients, where only the cases
                    without options see them (torch: DEFAULT_COEFFS 3.4445 -> 3.4454; timm: the
                    quintic preset's first a 4.0848 -> 4.0884)
  addmm             moonlight only: its iteration written with torch.optim.Muon's two addmm (the
                    fused order of spec/muon.md 7.2), everything else Moonlight's
  fp16:first        the Newton-Schulz input cast to float16 before anything else (elements beyond
                    65504 become +-Inf, its norm +Inf, the output NaN), then the port's own
                    Newton-Schulz: the bug of DeepSpeed PR #8533 and openvpi/DiffSinger PR #301
                    (bug-reports N02)
  fp16:after        their fix: the input normalised in float32 (Frobenius norm + 1e-7) first, then
                    cast to float16 and given to the port's own Newton-Schulz (which normalises
                    again: the norm is 1 within float16's rounding)

The module exposes the port's names (its classes, its Newton-Schulz function), so the driver
runs it as the port itself, e.g.

    MUONREF_PORT_VARIANT=torch:float32 /usr/bin/python3 vectors/drivers/torch_driver.py --mode neutral \\
        --optimizer tests/variants/torch_port_variant.py:Muon --adapter torch --ns-format fp32 --out r.json vectors/torch
"""

import functools
import importlib
import os
import sys
import types

import torch

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the ports they change
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]

# the Newton-Schulz function step() calls, by port (a module global, looked up at call time):
# from the records and the adapters (tests/variants/port_ns_names.py), so every record's port has variants
from port_ns_names import NS_HOLDER, ns_names, port_modules  # noqa: E402

NS_NAME = ns_names()

_variant = os.environ.get('MUONREF_PORT_VARIANT', '')
_profile, _, _rest = _variant.partition(':')
_kind, _, _arg = _rest.partition(':')
if _profile not in NS_NAME or _kind not in ('float32', 'float64', 'scale', 'typo', 'addmm', 'fp16'):
    raise ImportError(f"MUONREF_PORT_VARIANT={_variant!r}: expected PROFILE:float32|float64|scale:FACTOR|typo|addmm|fp16:first|fp16:after "
                      f"with PROFILE one of {', '.join(NS_NAME)}")

if _profile == 'nemo' and _kind in ('float32', 'float64'):
    _m = importlib.import_module('torch_port_fp32_ns' if _kind == 'float32' else 'torch_port_fp64_ns')
else:
    _m = importlib.import_module(port_modules()[_profile])
globals().update({k: v for k, v in vars(_m).items() if not k.startswith('__')})
_holder = getattr(_m, NS_HOLDER[_profile]) if _profile in NS_HOLDER else _m
_ns = getattr(_holder, NS_NAME[_profile])

if _kind in ('float32', 'float64') and _profile != 'nemo':
    _dt = getattr(torch, _kind)
    _proxy = types.ModuleType('torch')  # the module's `torch`, with bfloat16 meaning _dt
    _proxy.__dict__.update(torch.__dict__)
    _proxy.bfloat16 = _dt
    _m.torch = _proxy
    if hasattr(_m, 'NS_DTYPE'):
        _m.NS_DTYPE = _dt

    def _float_ns(*args, **kwargs):
        if _profile == 'paddle':
            args, kwargs = args[:4], dict(kwargs, ns_matmul_dtype=_dt)
        out = _ns(*args, **kwargs)
        return out.to(torch.float32) if isinstance(out, torch.Tensor) and out.dtype == torch.float64 else out

    setattr(_holder, NS_NAME[_profile], _float_ns)
    globals()[NS_NAME[_profile]] = _float_ns
    if _profile == 'paddle':
        class Muon(_m.Muon):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **dict(kwargs, ns_matmul_dtype=_dt))

elif _kind == 'scale':
    _factor = float(_arg or 1.01)

    def _scaled_ns(*args, **kwargs):
        return _ns(*args, **kwargs).float() * _factor

    setattr(_holder, NS_NAME[_profile], _scaled_ns)  # step() only: the ns cases keep the port's own function

elif _kind == 'typo':
    if _profile == 'torch':
        _typo = (3.4454, -4.7750, 2.0315)

        class Muon(_m.Muon):
            def __init__(self, params, *args, ns_coefficients=_typo, **kwargs):
                super().__init__(params, *args, ns_coefficients=ns_coefficients, **kwargs)
    elif _profile == 'timm':
        _m.PRESETS['quintic'] = [(4.0884, -6.8946, 2.9270)] + list(_m.PRESETS['quintic'][1:])
    else:
        raise ImportError(f"MUONREF_PORT_VARIANT={_variant!r}: typo is written for torch and timm")

elif _kind == 'fp16':
    if _arg not in ('first', 'after'):
        raise ImportError(f"MUONREF_PORT_VARIANT={_variant!r}: fp16 takes first or after")

    @functools.wraps(_ns)  # the driver binds the ns cases' arguments by the port's own signature
    def _fp16_ns(G, *args, **kwargs):
        x = G.float()
        if _arg == 'after':
            x = x / (x.norm() + 1e-7)
        return _ns(x.to(torch.float16).float(), *args, **kwargs)

    setattr(_holder, NS_NAME[_profile], _fp16_ns)
    globals()[NS_NAME[_profile]] = _fp16_ns

elif _kind == 'addmm':
    if _profile != 'moonlight':
        raise ImportError(f"MUONREF_PORT_VARIANT={_variant!r}: addmm is written for moonlight")

    def zeropower_via_newtonschulz5(G, steps):
        """Moonlight's iteration (spec/profiles/moonlight.md 5) in the fused order."""
        assert len(G.shape) == 2
        a, b, c = (3.4445, -4.7750, 2.0315)
        X = G.to(_m.NS_DTYPE)
        tall = G.size(0) > G.size(1)
        if tall:
            X = X.T
        X = X / (X.norm() + 1e-7)
        for _ in range(steps):
            A = X @ X.T
            B = torch.addmm(A, A, A, beta=b, alpha=c)
            X = torch.addmm(X, B, X, beta=a)
        if tall:
            X = X.T
        return X

    _m.zeropower_via_newtonschulz5 = zeropower_via_newtonschulz5
