"""A test port of keras.optimizers.Muon (Keras 3, v3.13.0 and later), written in
PyTorch from spec/profiles/keras.md alone (torch and the standard library only;
no upstream code): the profile `keras`, keras-team/keras @3422977a.

    Muon(params, learning_rate=0.001, adam_beta_1=0.9, adam_beta_2=0.999,
         adam_weight_decay=0.004, epsilon=1e-7, weight_decay=0.004,
         clipnorm=None, clipvalue=None, global_clipnorm=None, loss_scale_factor=None,
         gradient_accumulation_steps=None, use_ema=False, ema_momentum=0.99,
         ema_overwrite_frequency=None, exclude_layers=None, exclude_embeddings=True, muon_a=3.4445,
         muon_b=-4.7750, muon_c=2.0315, adam_lr_ratio=1, momentum=0.95,
         ns_steps=5, nesterov=True, rms_rate=0.2)

Keras has no parameter groups: every option is the optimizer's (kept in the one
param group, where a scheduler sets them).  A variable's path is the
parameter's attribute `path` (the driver sets it to the vector's name; absent:
no name rule matches).  One apply (keras.md 3): the variables without a
gradient are dropped (none left: ValueError "No gradients provided for any
variable."); the gradients are divided by loss_scale_factor and clipped
(keras.md 1: clipnorm each by its own norm, global_clipnorm by the global
scale, clipvalue a clamp, in float32, on copies); every slot is built at the first apply (momentum for all,
velocity for the AdamW ones, zeros); the decay `v - (v * wd) * lr` in float32
on every variable with a gradient, wd = adam_weight_decay (AdamW) or
weight_decay (Muon), lr the Muon learning rate; then the Muon (keras.md 4, 5)
or AdamW (keras.md 6) update; then iterations + 1.  Routing (keras.md 7):
AdamW unless exactly 2-D, for a path containing "embedding" (any case) under
exclude_embeddings, or one where an exclude_layers regular expression is
found (re.search).  Every parameter's state holds `step` = iterations (the
optimizer's count; the results protocol's step).  gradient_accumulation_steps N
(spec/muon.md 3.3; set: at least 2): a step that is not the N-th of its micro-steps
only adds each gradient (after the unscaling) into the variable's accumulator; the
N-th steps with (g + acc) / N, clipped after, and zeroes every accumulator;
`iterations` counts the N-th steps (keras' `_iterations // N`), the state keeps
the count of calls too.  use_ema (spec/muon.md 8.2): after every step each
variable's average `m a + (1 - m) v` in float32, m = ema_momentum, 0 while
iterations is 0; every ema_overwrite_frequency updates the variables take their
averages.  Used by
vectors/drivers/torch_driver.py with the adapter `keras`."""
import math
import re

import torch


def transpose_last_axis(x):
    """ops.transpose: a new array under the TensorFlow and JAX backends (made contiguous here,
    so that NS(G^T) is bitwise NS(G)^T: spec/vectors.md 2.3)."""
    return x.transpose(-2, -1).contiguous()


def zeropower_via_newtonschulz5(x, steps, a=3.4445, b=-4.7750, c=2.0315):
    """keras.md 4: float32 throughout; a tall matrix transposed; x / (||x||_F + 1e-7);
    `steps` times A = x x^T, B = b A + (c A) A, x = a x + B x."""
    if x.ndim < 2:
        raise ValueError("Expected gradient or momentum to have at least 2 dimensions. "
                         f"Received: shape={tuple(x.shape)}")
    tall = x.shape[-2] > x.shape[-1]
    if tall:
        x = transpose_last_axis(x)
    x = x / (torch.linalg.norm(x, dim=(-2, -1), keepdim=True) + 1e-7)
    for _ in range(steps):
        temp_a = x @ transpose_last_axis(x)
        temp_b = b * temp_a + c * temp_a @ temp_a
        x = a * x + temp_b @ x
    if tall:
        x = transpose_last_axis(x)
    return x


def _f32(v):
    """A Python number cast to the variable's dtype, as `ops.cast(v, float32)`."""
    return torch.tensor(v, dtype=torch.float32)


class Muon(torch.optim.Optimizer):
    def __init__(self, params, learning_rate=0.001, adam_beta_1=0.9, adam_beta_2=0.999, adam_weight_decay=0.004,
                 epsilon=1e-7, weight_decay=0.004, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 loss_scale_factor=None, gradient_accumulation_steps=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, exclude_layers=None, exclude_embeddings=True, muon_a=3.4445,
                 muon_b=-4.7750, muon_c=2.0315, adam_lr_ratio=1, momentum=0.95, ns_steps=5, nesterov=True,
                 rms_rate=0.2, **kwargs):
        if kwargs:
            raise ValueError(f"Argument(s) not recognized: {kwargs}")
        if gradient_accumulation_steps and not gradient_accumulation_steps >= 2:  # BaseOptimizer.__init__
            raise ValueError("`gradient_accumulation_steps` must be an integer >= 2. Received: "
                             f"gradient_accumulation_steps={gradient_accumulation_steps}")
        self.gradient_accumulation_steps = gradient_accumulation_steps
        if use_ema:  # BaseOptimizer.__init__, after the accumulation's check
            if ema_momentum > 1 or ema_momentum < 0:
                raise ValueError(f"`ema_momentum` must be in the range [0, 1]. Received: ema_momentum={ema_momentum}")
            if ema_overwrite_frequency and (not isinstance(ema_overwrite_frequency, int) or ema_overwrite_frequency < 1):
                raise ValueError("`ema_overwrite_frequency` must be an integer >= 1 or None. Received: "
                                 f"ema_overwrite_frequency={ema_overwrite_frequency}")
        self.use_ema, self.ema_momentum, self.ema_overwrite_frequency = use_ema, ema_momentum, ema_overwrite_frequency
        if sum(a is not None for a in (clipnorm, clipvalue, global_clipnorm)) > 1:  # keras.md 2
            raise ValueError("Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be set. Received: "
                             f"clipnorm={clipnorm}, clipvalue={clipvalue}, global_clipnorm={global_clipnorm}")
        self.clipnorm, self.clipvalue, self.global_clipnorm = clipnorm, clipvalue, global_clipnorm
        self.loss_scale_factor = loss_scale_factor
        defaults = dict(learning_rate=learning_rate, adam_beta_1=adam_beta_1, adam_beta_2=adam_beta_2,
                        adam_weight_decay=adam_weight_decay, epsilon=epsilon, weight_decay=weight_decay,
                        exclude_layers=list(exclude_layers or []), exclude_embeddings=exclude_embeddings,
                        muon_a=muon_a, muon_b=muon_b, muon_c=muon_c, adam_lr_ratio=adam_lr_ratio,
                        momentum=momentum, ns_steps=ns_steps, nesterov=nesterov, rms_rate=rms_rate)
        super().__init__(params, defaults)
        self.calls = 0  # keras' _iterations: every apply

    @property
    def iterations(self):
        """keras' `iterations`: `_iterations // gradient_accumulation_steps` under accumulation."""
        n = self.gradient_accumulation_steps
        return self.calls // n if n else self.calls

    MUON_NDIMS = (2,)  # keras.md 7: exactly 2-D (v3.10 to v3.12 also 3-D: tests/ports/torch_keras_3_10_port.py)

    # -- keras.md 7
    @classmethod
    def should_use_adamw(cls, p, o):
        if p.ndim not in cls.MUON_NDIMS:
            return True
        path = getattr(p, 'path', None) or ''
        if o['exclude_embeddings'] and 'embedding' in path.lower():
            return True
        return any(re.search(keyword, path) for keyword in o['exclude_layers'])

    def _build(self, params, o):
        for p in params:
            state = self.state[p]
            if 'momentum' in state:
                continue
            state['momentum'] = torch.zeros_like(p, memory_format=torch.preserve_format)
            if self.should_use_adamw(p, o):
                state['velocity'] = torch.zeros_like(p, memory_format=torch.preserve_format)
            if self.gradient_accumulation_steps:
                state['gradient_accumulator'] = torch.zeros_like(p, memory_format=torch.preserve_format)
            if self.use_ema:
                state['average'] = torch.zeros_like(p, memory_format=torch.preserve_format)

    # -- keras.md 1: the base optimizer's _clip_gradients, every number a float32 tensor
    def _clip_gradients(self, grads):
        if self.clipnorm and self.clipnorm > 0:
            c = _f32(self.clipnorm)
            out = []
            for g in grads:
                l2sum = torch.sum(torch.square(g))
                l2norm = torch.sqrt(l2sum) if l2sum > 0 else l2sum
                out.append((g * c) / torch.maximum(l2norm, c))
            return out
        if self.global_clipnorm and self.global_clipnorm > 0:
            use_norm = torch.sqrt(torch.sum(torch.stack([torch.sum(torch.square(g)) for g in grads])))
            scale = _f32(self.global_clipnorm) * torch.minimum(1.0 / use_norm, _f32(1.0 / self.global_clipnorm))
            scale = scale + (use_norm - use_norm)
            return [g * scale for g in grads]
        if self.clipvalue and self.clipvalue > 0:
            v = _f32(self.clipvalue)
            return [torch.clip(g, min=-v, max=v) for g in grads]
        return grads

    # -- keras.md 3, step 3
    def _apply_weight_decay(self, p, o):
        wd = o['adam_weight_decay'] if 'velocity' in self.state[p] else o['weight_decay']
        if wd is None:
            return
        p.copy_(p - p * _f32(wd) * _f32(o['learning_rate']))

    # -- keras.md 4, 5
    def _muon_update_step(self, g, p, lr, o):
        m = self.state[p]['momentum']
        m.add_(g + m * (o['momentum'] - 1))
        u = g + o['momentum'] * m if o['nesterov'] else m
        update = zeropower_via_newtonschulz5(u, o['ns_steps'], o['muon_a'], o['muon_b'], o['muon_c'])
        x = lr * update
        if o['rms_rate'] is not None:
            x = x * torch.sqrt(_f32(float(max(x.shape[0], x.shape[1])))) * o['rms_rate']
        p.sub_(x)

    # -- keras.md 6
    def _adamw_update_step(self, g, p, lr, o):
        m, v = self.state[p]['momentum'], self.state[p]['velocity']
        lr = lr.to(torch.float32)
        local_step = _f32(float(self.iterations + 1))
        b1_power = torch.pow(_f32(o['adam_beta_1']), local_step)
        b2_power = torch.pow(_f32(o['adam_beta_2']), local_step)
        alpha = lr * torch.sqrt(1 - b2_power) / (1 - b1_power)
        m.add_((g - m) * (1 - o['adam_beta_1']))
        v.add_((torch.square(g) - v) * (1 - o['adam_beta_2']))
        p.sub_((m * alpha) / (torch.sqrt(v) + o['epsilon']))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        o = self.param_groups[0]
        params = [p for group in self.param_groups for p in group['params']]
        self._build(params, o)
        active = [p for p in params if p.grad is not None]
        if not active:
            raise ValueError("No gradients provided for any variable.")
        for p in active:
            if p.grad.is_sparse or p.grad.is_complex():
                raise TypeError("keras Muon: a sparse or complex gradient cannot be applied to a float32 variable")
        lr = _f32(o['learning_rate'])
        grads = [p.grad for p in active]
        if self.loss_scale_factor is not None:  # keras.md 1: BaseOptimizer.apply unscales first
            grads = [g / self.loss_scale_factor for g in grads]
        n = self.gradient_accumulation_steps
        if n and (self.calls + 1) % n != 0:  # spec/muon.md 3.3: a micro-step adds, nothing else
            for p, g in zip(active, grads):
                acc = self.state[p]['gradient_accumulator']
                acc.copy_(g + acc)
        else:
            if n:
                grads = [(g + self.state[p]['gradient_accumulator']) / n for p, g in zip(active, grads)]
            grads = self._clip_gradients(grads)
            for p in active:
                self._apply_weight_decay(p, o)
            for p, g in zip(active, grads):
                if 'velocity' in self.state[p]:
                    self._adamw_update_step(g, p, lr * o['adam_lr_ratio'], o)
                else:
                    self._muon_update_step(g, p, lr, o)
            for p in params if n else ():  # every accumulator, also of a variable without a gradient
                self.state[p]['gradient_accumulator'].zero_()
        if self.use_ema:  # _update_model_variables_moving_average over every variable, then the overwrite
            m = _f32(float(self.iterations != 0)) * _f32(self.ema_momentum)
            for p in params:
                a = self.state[p]['average']
                a.copy_(m * a + (1 - m) * p)
            if self.ema_overwrite_frequency and (self.iterations + 1) % self.ema_overwrite_frequency == 0:
                for p in params:
                    p.copy_(self.state[p]['average'])
        self.calls += 1
        for p in params:
            self.state[p]['step'] = self.iterations
            if n or self.use_ema:  # keras' _iterations, which iterations does not give back under accumulation
                self.state[p]['calls'] = self.calls
        return loss

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        calls = [s['calls'] if 'calls' in s else s['step'] for s in self.state.values() if 'step' in s]
        self.calls = int(max(calls)) if calls else 0
