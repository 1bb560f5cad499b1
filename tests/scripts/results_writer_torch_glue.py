"""Glue: a PyTorch port run through vectors/drivers/results_writer.py (tests/scripts/results-writer.sh).

The port is the file named by $MUONREF_GLUE_PORT (default tests/ports/torch_nemo_port.py),
class Muon and function zeropower_via_newtonschulz5; options go in by their
spec names, as torch_driver.py's `nemo` adapter does.  This is the ~40 lines a
framework user writes; spec/vectors.md section 4 has the JAX and Paddle forms.
"""
import copy, importlib.util, os
import torch

_path = os.environ.get('MUONREF_GLUE_PORT', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'ports', 'torch_nemo_port.py'))
_spec = importlib.util.spec_from_file_location('glue_port', _path)
port = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(port)
IMPLEMENTATION = f"{os.path.basename(_path)}:Muon via results_writer.py, torch {torch.__version__}"
NS_FORMAT = 'bf16'
_opt, _params = None, []


def _t(t):  # results_writer.Tensor -> torch (values are exact Python floats; a bf16 Tensor stays bf16)
    x = torch.tensor(t.values, dtype=torch.bfloat16 if t.dtype == 'bf16' else torch.float32).reshape(t.shape)
    return x.to_sparse() if t.layout == 'sparse' else x


def make_optimizer(groups):
    global _opt, _params
    _params = [None] * sum(len(g['params']) for g in groups)
    torch_groups = []
    for g in groups:
        for p in g['params']:
            x = _t(p['init'])
            _params[p['index']] = torch.nn.Parameter(x.to(torch.complex64) if p['complex'] else x)
        torch_groups.append(dict(g['options'], params=[_params[p['index']] for p in g['params']]))
    _opt = port.Muon(torch_groups, **groups[0]['options'])


def step(grads):
    for p, g in zip(_params, grads):
        p.grad = None if g is None else (torch.zeros(g.shape, dtype=torch.complex64) if g.dtype == 'c64' else _t(g))
    _opt.step()


def params():
    return [p.detach() if p.dtype == torch.bfloat16 else p.detach().float() for p in _params]


def state():
    return [{k: (int(v) if k == 'step' else v.float()) for k, v in _opt.state[p].items()} or None for p in _params]


def newton_schulz(x, steps):
    return port.zeropower_via_newtonschulz5(_t(x), steps).float()


def export_state():
    return copy.deepcopy(_opt.state_dict())


def import_state(saved):
    _opt.load_state_dict(saved)


def set_options(index, options):  # a scheduler's change (format 2): the group dict, as torch's schedulers do
    _opt.param_groups[index].update(options)
