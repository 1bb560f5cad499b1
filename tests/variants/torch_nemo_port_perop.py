"""A variant of tests/ports/torch_nemo_port.py that rounds like NeMo's own code.

The port evaluates each element-wise update in float64 and rounds once; this
variant runs the NeMo seed's in-place float32 sequence instead (momentum
`buf.mul_(beta).add_(grad)`, Nesterov `grad.add(buf, alpha=beta)`, decay
`param.mul_(1 - lr wd)`, update `param.add_(O, alpha=-lr scale)`, and the
AdamW moments and `addcdiv_`), so every operation rounds to binary32.  It is
correct by spec/muon.md (which fixes no element-wise evaluation order), so
tests/scripts/torch-driver.sh requires it to pass every vector: that is the check
that the tolerances admit a port that rounds after every operation.
Newton-Schulz is the port's (bf16, binary32 scalars).
"""

import os
import sys

import torch

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)),  # the variants, then the ports they change
                os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports')]
import torch_nemo_port as _port  # noqa: E402

zeropower_via_newtonschulz5 = _port.zeropower_via_newtonschulz5


class Muon(_port.Muon):
    def _muon_update(self, param, grad, state, group):
        lr, beta, wd = float(group['lr']), float(group['momentum']), float(group['weight_decay'])
        if 'momentum_buffer' not in state:
            state['momentum_buffer'] = torch.zeros_like(param)
        buf = state['momentum_buffer']
        buf.mul_(beta).add_(grad)
        update = grad.add(buf, alpha=beta) if group['nesterov'] else buf
        matrix = update.reshape(param.shape[0], -1)
        orthogonal = zeropower_via_newtonschulz5(matrix, steps=group['ns_steps'])
        scale = _port.update_scale(matrix.shape, group['scale_mode'])
        if wd != 0:
            param.mul_(1 - lr * wd)
        param.add_(orthogonal.reshape(param.shape), alpha=-lr * scale)

    def _adamw_update(self, param, grad, state, group):
        lr_a = float(group['lr']) * float(group['adam_lr_ratio'])
        beta1, beta2 = (float(b) for b in group['adam_betas'])
        eps, wd = float(group['adam_eps']), float(group['weight_decay'])
        if 'exp_avg' not in state:
            state['step'] = 0
            state['exp_avg'] = torch.zeros_like(param)
            state['exp_avg_sq'] = torch.zeros_like(param)
        state['step'] = int(state['step']) + 1
        t = state['step']
        exp_avg, exp_avg_sq = state['exp_avg'], state['exp_avg_sq']
        exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1**t
        bias_correction2 = 1 - beta2**t
        denom = (exp_avg_sq.sqrt() / (bias_correction2**0.5)).add_(eps)
        if wd != 0:
            param.mul_(1 - lr_a * wd)
        # spec section 9: a zero denominator moves nothing (NeMo would write NaN)
        quotient = torch.where(denom == 0, torch.zeros_like(exp_avg), exp_avg / denom)
        param.add_(quotient, alpha=-lr_a / bias_correction1)
