"""A test port of keras.optimizers.Muon at the releases v3.10.0 (3bedb9a9) to v3.12.4 (muon.py the same at
each tag): the profile `keras@3.10` (spec/profiles/keras.md 12), written in PyTorch from that section alone.
The class of tests/ports/torch_keras_port.py (v3.13.0 and later), whose code this reuses, but for four things:

- the update is `lr * NS(u) * max(1, shape[0] / shape[1]) ** 0.5` on the variable's own shape (no rms_rate);
- a 2-D or a 3-D variable takes Muon (`if not 1 < len(variable.shape) < 4: return True` in _should_use_adamw),
  a 3-D one orthogonalised as a batch of its last two dimensions' matrices; the name rules as in v3.13;
- the base optimizer's decay `v - v * weight_decay * lr` on every variable (there is no adam_weight_decay);
- the defaults weight_decay 0.1, adam_lr_ratio 0.1, ns_steps 6.

Standard library and torch only, as every test port, and the v3.13 port beside it (copy both)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import torch_keras_port as _v313  # noqa: E402
except ImportError as exc:  # a copy made elsewhere: this port is the v3.13 port's subclass
    raise ImportError(f"{__file__}: needs tests/ports/torch_keras_port.py beside it (it subclasses that port's Muon; "
                      "copy both)") from exc

# the same Newton-Schulz (keras.md 4), a name of this module: the driver's Newton-Schulz cases call it, and the
# step below calls it through this module
zeropower_via_newtonschulz5 = _v313.zeropower_via_newtonschulz5
_f32 = _v313._f32


class Muon(_v313.Muon):
    def __init__(self, params, learning_rate=0.001, adam_beta_1=0.9, adam_beta_2=0.999, epsilon=1e-7,
                 weight_decay=0.1, clipnorm=None, clipvalue=None, global_clipnorm=None, loss_scale_factor=None,
                 gradient_accumulation_steps=None, use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None,
                 exclude_layers=None, exclude_embeddings=True, muon_a=3.4445, muon_b=-4.7750,
                 muon_c=2.0315, adam_lr_ratio=0.1, momentum=0.95, ns_steps=6, nesterov=True, **kwargs):
        if kwargs:
            raise ValueError(f"Argument(s) not recognized: {kwargs}")
        # the v3.13 class without its two new keywords: every variable decays by weight_decay, no rms_rate
        super().__init__(params, learning_rate=learning_rate, adam_beta_1=adam_beta_1, adam_beta_2=adam_beta_2,
                         adam_weight_decay=None, epsilon=epsilon, weight_decay=weight_decay, clipnorm=clipnorm,
                         clipvalue=clipvalue, global_clipnorm=global_clipnorm, loss_scale_factor=loss_scale_factor,
                         gradient_accumulation_steps=gradient_accumulation_steps, use_ema=use_ema,
                         ema_momentum=ema_momentum, ema_overwrite_frequency=ema_overwrite_frequency,
                         exclude_layers=exclude_layers, exclude_embeddings=exclude_embeddings, muon_a=muon_a,
                         muon_b=muon_b, muon_c=muon_c, adam_lr_ratio=adam_lr_ratio, momentum=momentum,
                         ns_steps=ns_steps, nesterov=nesterov, rms_rate=None)
        for group in self.param_groups:
            del group['adam_weight_decay'], group['rms_rate']
        del self.defaults['adam_weight_decay'], self.defaults['rms_rate']

    MUON_NDIMS = (2, 3)  # keras.md 12: `if not 1 < len(variable.shape) < 4: return True`; the name rules as v3.13's

    # -- keras.md 12: BaseOptimizer._apply_weight_decay, one weight_decay for every variable
    def _apply_weight_decay(self, p, o):
        if o['weight_decay'] is None:
            return
        p.copy_(p - p * _f32(o['weight_decay']) * _f32(o['learning_rate']))

    # -- keras.md 12: Keller's rule on the variable's first two dimensions
    def _muon_update_step(self, g, p, lr, o):
        m = self.state[p]['momentum']
        m.add_(g + m * (o['momentum'] - 1))
        u = g + o['momentum'] * m if o['nesterov'] else m
        update = zeropower_via_newtonschulz5(u, o['ns_steps'], o['muon_a'], o['muon_b'], o['muon_c'])
        p.sub_(lr * update * max(1, p.shape[0] / p.shape[1]) ** 0.5)
