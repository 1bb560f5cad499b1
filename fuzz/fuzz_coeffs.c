/* muonref fuzz target: `muonref ns --coeffs TEXT` (study/set.c,
 * mst_set_parse_custom).  A parsed list is then run by the fast
 * Newton-Schulz on a fixed 3x5 matrix in bf16 and fp32 for as many steps
 * as it has triples: whatever the coefficients, the result is MUONREF_OK
 * with a finite output or ENUMERIC with the output untouched. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../study/study.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = malloc(size + 1);
  if (!text)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  mst_set s;
  muonref_error err;
  for (int order = 0; order < 2; order++) {
    if (mst_set_parse_custom(&s, text, (muonref_coeff_order)order, &err) != MUONREF_OK)
      continue;
    muonref_options o;
    muonref_profile_options("nemo", &o, NULL);
    o.n_coeffs = s.o.n_coeffs;
    memcpy(o.coeffs, s.o.coeffs, sizeof o.coeffs);
    o.coeff_order = s.o.coeff_order;
    o.ns_steps = s.default_steps;
    float in[15], out[15];
    for (int i = 0; i < 15; i++)
      in[i] = (float)((i * 7) % 5) - 2.0f;
    for (int f = 0; f < 2; f++) {
      o.ns_format = f ? MUONREF_NS_FP32 : MUONREF_NS_BF16;
      memset(out, 0x7f, sizeof out);
      int st = muonref_fast_ns(out, in, 3, 5, &o, NULL, &err);
      for (int i = 0; st == MUONREF_OK && i < 15; i++)
        if (!isfinite(out[i]))
          abort(); /* OK must mean a finite output */
      if (st != MUONREF_OK && st != MUONREF_ENUMERIC)
        abort();
    }
  }
  free(text);
  return 0;
}
