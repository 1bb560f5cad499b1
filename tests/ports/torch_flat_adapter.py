"""The user adapter of the worked example (vectors/drivers/README.md, "Your own adapter"): runs
tests/ports/torch_flat_port.py's Muon + AdamW pair over keller's vectors.

    torch_driver.py --optimizer tests/ports/torch_flat_port.py:Muon \
        --adapter tests/ports/torch_flat_adapter.py:FlatMuonAdapter --out r.json vectors/keller

The driver hands construct_native each vector group's options under keller's names (a Muon
group: lr, momentum, weight_decay, use_muon=True; an Adam group: lr, betas, eps, weight_decay,
use_muon=False) with its parameters; this adapter builds one Muon or AdamW per group, with the
port's own names (wd), and gives the driver the pair as one optimizer (adapters.Combined).
Options a vector leaves out keep the port's defaults.  Everything else (reading the state back,
the Newton-Schulz function zeropower_via_newtonschulz5 of the port's module) is KellerAdapter's.
"""

import sys

import adapters  # the driver's adapters.py: its folder is on sys.path when the driver runs


class FlatMuonAdapter(adapters.KellerAdapter):
    # keller's option names -> the port's, per branch
    MUON = {'lr': 'lr', 'momentum': 'momentum', 'weight_decay': 'wd'}
    ADAMW = {'lr': 'lr', 'betas': 'betas', 'eps': 'eps', 'weight_decay': 'weight_decay'}

    def construct_native(self, cls, groups):
        port = sys.modules[cls.__module__]  # the port's module, loaded by --optimizer
        optimizers = []
        for options, params in groups:
            if not params:  # keller's vectors may hold an empty group: torch's optimizers refuse one
                continue
            o = adapters.native(options)
            if o.get('use_muon'):
                optimizers.append(cls(params, **{self.MUON[k]: v for k, v in o.items() if k in self.MUON}))
            else:
                optimizers.append(port.AdamW(params, **{self.ADAMW[k]: v for k, v in o.items() if k in self.ADAMW}))
        return adapters.Combined(*optimizers)

    def set_options(self, opt, params, profile, options, changed):
        """A scheduled change (spec/vectors.md 2.8) under the port's names: the Muon groups call
        the weight decay wd."""
        for group in opt.param_groups:
            if any(p is q for p in group['params'] for q in params):
                names = self.MUON if 'wd' in group else self.ADAMW
                for key in changed:
                    group[names[key]] = adapters.native({key: options[key]})[key]
