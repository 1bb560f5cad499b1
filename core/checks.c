/* muonref: the catalogues of checks as data (see checks.h).  The rows
 * reproduce each port's constructor checks in its order and words; the
 * sources are those of muonref_catalogue (include/muonref/options.h). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/checks.h"
#include "core/fail.h"
#include "core/pyfmt.h"

#define MAXS MUONREF_MAX_NS_STEPS
#define REAL(f, rule, msg) {f, MUONREF_RULE_##rule, 0, 0, msg}
#define STEPS(lo, hi, msg) {"ns_steps", MUONREF_RULE_RANGE, lo, hi, msg}
#define STEPS_MSG "Invalid number of Newton-Schulz steps: {}"

/* NeMo's Muon.__init__ (nemo/core/optim/muon.py), in its order. */
static const muonref_check NEMO[] = {
  REAL("lr", NONNEGATIVE, "Invalid learning rate: {}"), REAL("momentum", UNIT, "Invalid momentum: {}"),
  STEPS(1, MAXS, STEPS_MSG), REAL("weight_decay", NONNEGATIVE, "Invalid weight decay: {}"),
  REAL("adam_betas", UNIT, "Invalid AdamW betas: {}"), REAL("adam_eps", NONNEGATIVE, "Invalid AdamW epsilon: {}"),
};
/* torch.optim.Muon.__init__ (torch/optim/_muon.py @b5ee4d7a; torch.md 1.1): `not 0.0 <= x`;
 * ns_steps < 100 from _zeropower_via_newtonschulz (a negative count in NeMo's words). */
static const muonref_check TORCH[] = {
  REAL("lr", NONNEGATIVE, "Learning rate should be >= 0 but is: {}"),
  REAL("momentum", NONNEGATIVE, "momentum should be >= 0 but is: {}"),
  REAL("weight_decay", NONNEGATIVE, "weight decay should be >= 0 but is: {}"),
  STEPS(INT_MIN, 99, "Number of steps must be less than 100 for computational efficiency"), STEPS(0, INT_MAX, STEPS_MSG),
  REAL("adam_betas", UNIT, "Invalid AdamW betas: {}"), REAL("adam_eps", NONNEGATIVE, "Invalid AdamW epsilon: {}"),
};
/* timm's Muon.__init__ (timm/optim/muon.py @aa4b5850, _helpers._validate_scalar; timm.md 1.1). */
static const muonref_check TIMM[] = {
  REAL("lr", NONNEGATIVE, "Invalid learning rate: {}"), REAL("weight_decay", NONNEGATIVE, "Invalid weight_decay: {}"),
  REAL("momentum", UNIT, "Invalid momentum: {}"), REAL("ns_eps", NONNEGATIVE, "Invalid epsilon: {}"),
  STEPS(0, MAXS, STEPS_MSG), REAL("adam_betas", UNIT, "Invalid AdamW betas: {}"),
  REAL("adam_eps", NONNEGATIVE, "Invalid AdamW epsilon: {}"),
};
/* dion.Muon.__init__ (dion/muon.py @0a059a4; dion.md 2): lr, mu, betas >= 0; the rest finite. */
static const muonref_check DION[] = {
  REAL("lr", NONNEGATIVE, "Invalid learning rate: {}"), REAL("momentum", NONNEGATIVE, "Invalid momentum factor (mu): {}"),
  REAL("adam_betas", NONNEGATIVE, "Invalid betas: {}"), STEPS(0, MAXS, STEPS_MSG),
  REAL("weight_decay", FINITE, "Invalid weight decay: {}"), REAL("adam_eps", FINITE, "Invalid AdamW epsilon: {}"),
};
/* dion.NorMuon.__init__ (dion/normuon.py @0a059a4; normuon.md 2): dion's checks with muon_beta2 >= 0
 * between mu and betas (no upper bound: muonref's own rule, 0 <= beta2 <= 1, refuses more). */
static const muonref_check NORMUON[] = {
  REAL("lr", NONNEGATIVE, "Invalid learning rate: {}"), REAL("momentum", NONNEGATIVE, "Invalid momentum factor (mu): {}"),
  REAL("moment2_beta", NONNEGATIVE, "Invalid muon_beta2: {}"), REAL("adam_betas", NONNEGATIVE, "Invalid betas: {}"),
  STEPS(0, MAXS, STEPS_MSG), REAL("weight_decay", FINITE, "Invalid weight decay: {}"),
  REAL("adam_eps", FINITE, "Invalid AdamW epsilon: {}"),
};
/* A port that checks nothing (Moonlight, Keller, Paddle, optax, keras): what cannot be computed. */
#define UNCHECKED(steps...)                                                                                         \
  REAL("lr", FINITE, "Invalid learning rate: {}"), REAL("momentum", FINITE, "Invalid momentum: {}"), steps,         \
    REAL("weight_decay", FINITE, "Invalid weight decay: {}"), REAL("adam_betas", FINITE, "Invalid AdamW betas: {}"), \
    REAL("adam_eps", FINITE, "Invalid AdamW epsilon: {}")
static const muonref_check NONE[] = {UNCHECKED(STEPS(0, MAXS, STEPS_MSG))};
/* Emerging-Optimizers' Muon.__init__ (muon.py @fd77292), its AdaptiveMuon.__init__ (adaptive_muon.py
 * @fd77292, 89-90) and Megatron-LM's TensorParallelMuon (muon.py 025c931a): num_ns_steps >= 1, the same
 * words. */
static const muonref_check EMERGING[] = {
  UNCHECKED(STEPS(1, INT_MAX, "num_ns_steps must be at least 1, got {}"), STEPS(INT_MIN, MAXS, STEPS_MSG))};
/* optax's scale_by_muon.init_fn (_muon.py @2edbcbe2): `if not ns_coeffs.shape[0] <= ns_steps`, the
 * message the wrong way round as upstream words it; after the optax fields. */
static const muonref_check OPTAX_LATE[] = {{"coeffs", MUONREF_RULE_COEFFS_FIT, 0, 0, "Not enough coeffs to perform {} steps"}};

#define N(a) (sizeof a / sizeof a[0])
static const struct {
  const muonref_check *head, *late;
  size_t n_head, n_late;
} CATALOGUES[] = {
  [MUONREF_CATALOGUE_NEMO] = {NEMO, NULL, N(NEMO), 0},
  [MUONREF_CATALOGUE_TORCH] = {TORCH, NULL, N(TORCH), 0},
  [MUONREF_CATALOGUE_NONE] = {NONE, NULL, N(NONE), 0},
  [MUONREF_CATALOGUE_TIMM] = {TIMM, NULL, N(TIMM), 0},
  [MUONREF_CATALOGUE_EMERGING] = {EMERGING, NULL, N(EMERGING), 0},
  [MUONREF_CATALOGUE_DION] = {DION, NULL, N(DION), 0},
  [MUONREF_CATALOGUE_PADDLE] = {NONE, NULL, N(NONE), 0},
  [MUONREF_CATALOGUE_OPTAX] = {NONE, OPTAX_LATE, N(NONE), N(OPTAX_LATE)},
  [MUONREF_CATALOGUE_MEGATRON] = {EMERGING, NULL, N(EMERGING), 0},
  [MUONREF_CATALOGUE_KERAS] = {NONE, NULL, N(NONE), 0},
  [MUONREF_CATALOGUE_NORMUON] = {NORMUON, NULL, N(NORMUON), 0},
  [MUONREF_CATALOGUE_EMERGING_ADAPTIVE] = {EMERGING, NULL, N(EMERGING), 0},
};
_Static_assert(N(CATALOGUES) == MUONREF_CATALOGUE_EMERGING_ADAPTIVE + 1, "a row of checks per catalogue");

int muonref_catalogue_checks(muonref_catalogue c, const muonref_check **head, size_t *n_head,
                             const muonref_check **late, size_t *n_late)
{
  if ((int)c < 0 || (size_t)c >= N(CATALOGUES))
    return 0;
  *head = CATALOGUES[c].head, *n_head = CATALOGUES[c].n_head;
  *late = CATALOGUES[c].late, *n_late = CATALOGUES[c].n_late;
  return 1;
}

static double real_of(const muonref_options *o, const char *f)
{
  return !strcmp(f, "lr")             ? o->lr
         : !strcmp(f, "momentum")     ? o->momentum
         : !strcmp(f, "weight_decay") ? o->weight_decay
         : !strcmp(f, "ns_eps")       ? o->ns_eps
         : !strcmp(f, "moment2_beta") ? o->moment2_beta
                                      : o->adam_eps;
}

static int real_ok(muonref_check_rule r, double x)
{
  return isfinite(x) && (r == MUONREF_RULE_FINITE || (r == MUONREF_RULE_NONNEGATIVE && x >= 0.0) ||
                         (r == MUONREF_RULE_UNIT && x >= 0.0 && x < 1.0));
}

/* Whether row c holds for o; the value as printed into val. */
static int holds(const muonref_check *c, const muonref_options *o, char *val, size_t n)
{
  char b1[40], b2[40];
  switch (c->rule) {
  case MUONREF_RULE_RANGE:
    snprintf(val, n, "%d", o->ns_steps);
    return o->ns_steps >= c->lo && o->ns_steps <= c->hi;
  case MUONREF_RULE_COEFFS_FIT:
    snprintf(val, n, "%d", o->ns_steps);
    return !(o->coeff_order == MUONREF_ORDER_LIST && o->n_coeffs >= 2 && o->n_coeffs > o->ns_steps);
  default:
    if (!strcmp(c->field, "adam_betas")) {
      snprintf(val, n, "(%s, %s)", muonref_py_float(b1, sizeof b1, o->adam_beta1),
               muonref_py_float(b2, sizeof b2, o->adam_beta2));
      return real_ok(c->rule, o->adam_beta1) && real_ok(c->rule, o->adam_beta2);
    }
    muonref_py_float(val, n, real_of(o, c->field));
    return real_ok(c->rule, real_of(o, c->field));
  }
}

int muonref_checks_run(const muonref_check *rows, size_t n, const char *only, const muonref_options *o,
                       muonref_error *err)
{
  char val[96], msg[MUONREF_ERROR_MESSAGE_MAX];
  for (size_t i = 0; i < n; i++) {
    if ((only && strcmp(only, rows[i].field)) || holds(&rows[i], o, val, sizeof val))
      continue;
    const char *at = strstr(rows[i].message, "{}");
    if (at)
      snprintf(msg, sizeof msg, "%.*s%s%s", (int)(at - rows[i].message), rows[i].message, val, at + 2);
    else
      snprintf(msg, sizeof msg, "%s", rows[i].message);
    return muonref_fail(err, MUONREF_EOPTION, "%s", msg);
  }
  return MUONREF_OK;
}

char *muonref_check_rule_text(const muonref_check *c, char *buf, size_t n)
{
  switch (c->rule) {
  case MUONREF_RULE_FINITE: snprintf(buf, n, "finite"); break;
  case MUONREF_RULE_NONNEGATIVE: snprintf(buf, n, ">= 0"); break;
  case MUONREF_RULE_UNIT: snprintf(buf, n, "0 <= x < 1"); break;
  case MUONREF_RULE_COEFFS_FIT: snprintf(buf, n, "list: triples <= ns_steps"); break;
  case MUONREF_RULE_RANGE:
    if (c->lo == INT_MIN)
      snprintf(buf, n, "<= %d", c->hi);
    else if (c->hi == INT_MAX)
      snprintf(buf, n, ">= %d", c->lo);
    else
      snprintf(buf, n, "%d..%d", c->lo, c->hi);
    break;
  }
  return buf;
}
