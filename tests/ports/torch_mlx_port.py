"""A test port of mlx.optimizers.Muon, written in PyTorch from spec/profiles/mlx.md
alone (torch and the standard library only; no upstream code): the profile `mlx`,
ml-explore/mlx python/mlx/optimizers/optimizers.py @846d17622.

    Muon(params, learning_rate, momentum=0.95, weight_decay=0.01, nesterov=True,
         ns_steps=5)

MLX has no parameter groups: every option is the optimizer's (kept in the one
param group, where a scheduler sets them).  One update (mlx.md 3): the state of
every parameter with a gradient is made at the first update (`v` zeros in the
gradient's dtype; a parameter that first gets a gradient later has no state, and
MLX fails with a KeyError naming its key: so does this port, unless the state was loaded into a
fresh optimizer, which makes it then); the step count + 1; then per parameter
with a gradient (mlx.md 4): g + wd p (when wd != 0), v = momentum v +
(1 - momentum) g, the update g (1 - momentum) + v momentum (Nesterov) or v, lr in
the gradient's dtype; a parameter of two or more dimensions flattened to
(shape[0], -1), orthogonalized (mlx.md 5) and its lr times
sqrt(max(1, shape[-2] / shape[-1])) of the original shape; p - lr update.  Every
parameter's state holds `v` (the results protocol's momentum_buffer; the
adapter `mlx` counts its steps).  Used by vectors/drivers/torch_driver.py with
the adapter `mlx`."""
import torch


def zeropower_via_newtonschulz5(X, steps):
    """mlx.md 5: in X's dtype; a tall matrix transposed; X / (||X||_F + 1e-7); `steps` times
    A = X X^T, B = addmm(b A, A, A, alpha=c), X = addmm(a X, B, X)."""
    if X.ndim != 2:
        raise AssertionError(f"Expected a 2D array for Newton-Schulz iteration, got shape {tuple(X.shape)} instead.")
    a, b, c = (3.4445, -4.7750, 2.0315)
    transpose_needed = X.shape[-2] > X.shape[-1]
    if transpose_needed:
        X = X.T
    X = X / (torch.linalg.norm(X) + 1e-7)
    for _ in range(steps):
        A = X @ X.T
        B = torch.addmm(b * A, A, A, beta=1.0, alpha=c)
        X = torch.addmm(a * X, B, X, beta=1.0, alpha=1.0)
    if transpose_needed:
        X = X.T
    return X


class Muon(torch.optim.Optimizer):
    def __init__(self, params, learning_rate, momentum=0.95, weight_decay=0.01, nesterov=True, ns_steps=5):
        defaults = dict(learning_rate=learning_rate, momentum=momentum, weight_decay=weight_decay,
                        nesterov=nesterov, ns_steps=ns_steps)
        super().__init__(params, defaults)
        self.initialized = False

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        self.initialized = False  # mlx.md 3: `state.setter` clears _initialized

    # -- mlx.md 4
    def apply_single(self, gradient, parameter, state, o):
        if o['weight_decay'] != 0:
            gradient = gradient + o['weight_decay'] * parameter
        v = o['momentum'] * state['v']
        v = v + (1 - o['momentum']) * gradient
        state['v'] = v
        if o['nesterov']:
            update = gradient * (1 - o['momentum']) + v * o['momentum']
        else:
            update = v
        lr = torch.tensor(o['learning_rate'], dtype=torch.float32).to(gradient.dtype)
        if update.ndim >= 2:
            original_shape = update.shape
            reshape_needed = update.ndim > 2
            if reshape_needed:
                update = update.reshape(update.shape[0], -1)
            update = zeropower_via_newtonschulz5(update, steps=o['ns_steps'])
            if reshape_needed:
                update = update.reshape(original_shape)
            lr = lr * max(1, update.shape[-2] / update.shape[-1]) ** 0.5
        return parameter - lr * update

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        o = self.param_groups[0]
        active = [p for group in self.param_groups for p in group['params'] if p.grad is not None]
        for p in active:
            if p.grad.is_sparse or p.grad.is_complex():
                raise ValueError("mlx: a sparse or complex gradient has no mlx array to apply")
        if not self.initialized:  # mlx.md 3: Optimizer.init(gradients) at the first update
            for p in active:
                if 'v' not in self.state[p]:
                    self.state[p]['v'] = torch.zeros_like(p.grad)
            self.initialized = True
        for p in active:
            if 'v' not in self.state[p]:  # MLX's tree_map over the state: the parameter's own key
                raise KeyError(f"parameter of shape {tuple(p.shape)} (no state: its first gradient came late)")
            p.copy_(self.apply_single(p.grad, p, self.state[p], o))
        return loss
