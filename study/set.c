/* muonref study: coefficient sets (presets and custom lists) as the study
 * runs them; spec/coefficients.md defines the presets. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "study.h"
#include "core/fail.h"

void mst_set_from_preset(mst_set *s, const muonref_preset *p)
{
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "%s", p->name);
  muonref_preset_apply(p, &s->o);
  s->norm_safety = muonref_preset_norm_safety(p);
  s->default_steps = p->default_steps;
}

muonref_coeff mst_step_coeff(const mst_set *s, int k)
{
  muonref_coeff t = muonref_ns_coeff_at(&s->o, k - 1);
  if (k == 1 && s->norm_safety != 1.0) {
    double g = s->norm_safety;
    t.a /= g;
    t.b /= g * g * g;
    t.c /= g * g * g * g * g;
  }
  return t;
}

/* Reads one finite number at *p (strtod), skipping blanks; advances *p. */
static int number(const char **p, double *v)
{
  char *end;
  while (isspace((unsigned char)**p))
    (*p)++;
  errno = 0;
  *v = strtod(*p, &end);
  if (end == *p || errno == ERANGE || !isfinite(*v))
    return -1;
  *p = end;
  while (isspace((unsigned char)**p))
    (*p)++;
  return 0;
}

int mst_set_parse_custom(mst_set *s, const char *text, muonref_coeff_order order, muonref_error *err)
{
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "custom");
  const char *p = text;
  int n = 0;
  while (1) {
    double v[3];
    if (n == MUONREF_MAX_COEFFS)
      return muonref_fail(err, MUONREF_EOPTION, "--coeffs '%s': more than %d triples", text, MUONREF_MAX_COEFFS);
    for (int j = 0; j < 3; j++) {
      if (number(&p, &v[j]))
        return muonref_fail(err, MUONREF_EOPTION,
                            "--coeffs '%s': triple %d, value %c is not a finite number "
                            "(expected \"a,b,c;a,b,c;...\")", text, n, "abc"[j]);
      if (j < 2 && *p++ != ',')
        return muonref_fail(err, MUONREF_EOPTION,
                            "--coeffs '%s': triple %d needs three comma-separated numbers", text, n);
    }
    s->o.coeffs[n++] = (muonref_coeff){v[0], v[1], v[2]};
    if (*p == '\0')
      break;
    if (*p++ != ';')
      return muonref_fail(err, MUONREF_EOPTION, "--coeffs '%s': triples are separated by ';' (after triple %d)",
                          text, n - 1);
  }
  s->o.n_coeffs = n;
  s->o.coeff_order = order;
  s->norm_safety = 1.0;
  s->default_steps = n;
  return MUONREF_OK;
}
