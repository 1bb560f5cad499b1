/* muonref: Python-compatible formatting of numbers and shapes.
 *
 * The error catalogue (spec/muon.md) keeps the wording of the NeMo seed,
 * whose messages embed Python's repr() of floats and shape tuples
 * (`Invalid learning rate: -1.0`, `got shape (48,)`).  These functions
 * reproduce repr() exactly so that a C caller and a Python port print the
 * same bytes for the same value. */
#ifndef MUONREF_PYFMT_H
#define MUONREF_PYFMT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes Python's repr(float(x)) into buf (size n, NUL-terminated, truncated
 * if n is too small): the shortest decimal string that reads back as x,
 * positional for decimal exponents -4..15 with a trailing ".0" when
 * integral, else scientific as "1e-07" / "1.5e+16"; "nan", "inf", "-inf";
 * "-0.0".  Returns buf.  Source: CPython's float_repr_style 'short'
 * (Python/pystrtod.c, PyOS_double_to_string with 'r'). */
char *muonref_py_float(char *buf, size_t n, double x);

/* Writes Python's repr of a tuple of ints: "()", "(48,)", "(3, 4, 5)".
 * shape has ndim entries (ndim may be 0).  Returns buf. */
char *muonref_py_shape(char *buf, size_t n, const size_t *shape, int ndim);

/* Writes str(torch.Size(shape)) as PyTorch prints it: "torch.Size([])",
 * "torch.Size([48])", "torch.Size([4, 2, 3, 3])" (the messages of
 * torch.optim.Muon quote p.size()).  Returns buf. */
char *muonref_py_torch_size(char *buf, size_t n, const size_t *shape, int ndim);

/* Writes Python's repr of a tuple of count strings: "('nemo',)",
 * "('fan_in', 'fan_out', 'none')".  Returns buf. */
char *muonref_py_str_tuple(char *buf, size_t n, const char *const *names, size_t count);

#ifdef __cplusplus
}
#endif
#endif
