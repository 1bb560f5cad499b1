/* muonref: Newton-Schulz coefficient presets (see presets.h and
 * spec/coefficients.md for the provenance of every number).
 *
 * Every list is written exactly as its source prints it (decimal literals
 * read as the nearest binary64, as Python reads them).  The order and the
 * default step count are those of the port named first in the spec; other
 * ports that run the same numbers differently are listed there. */
#include <math.h>
#include <string.h>
#include "muonref/presets.h"
#include "core/preset_match.h"

/* Keller Jordan's quintic triple, run for every step.  Source:
 * KellerJordan/Muon muon.py (zeropower_via_newtonschulz5) at 857d1ad; the
 * NeMo seed (PR #16427) uses the same numbers; Paddle calls it "simple",
 * timm "original". */
static const muonref_coeff SIMPLE[] = {{3.4445, -4.7750, 2.0315}};

/* The 5-step list of KellerJordan/modded-nanogpt train_gpt_medium.py
 * @0674386 (credited to @leloykun); timm, Paddle and Emerging-Optimizers
 * "quintic", optax "dion", dion's zeropower_via_newtonschulz5. */
static const muonref_coeff QUINTIC[] = {
  {4.0848, -6.8946, 2.9270}, {3.9505, -6.3029, 2.6377}, {3.7418, -5.5913, 2.3037},
  {2.8769, -3.1427, 1.2046}, {2.8366, -3.0525, 1.2012}};

/* Polar Express (Amsel, Persson, Musco, Gower 2025, arXiv:2505.16932),
 * Algorithm 1, before its safety division (coeff_safety 1.01 applies it). */
static const muonref_coeff PE_PAPER[] = {
  {8.28721201814563, -23.595886519098837, 17.300387312530933},
  {4.107059111542203, -2.9478499167379106, 0.5448431082926601},
  {3.9486908534822946, -2.908902115962949, 0.5518191394370137},
  {3.3184196573706015, -2.488488024314874, 0.51004894012372},
  {2.300652019954817, -1.6689039845747493, 0.4188073119525673},
  {1.891301407787398, -1.2679958271945868, 0.37680408948524835},
  {1.8750014808534479, -1.2500016453999487, 0.3750001645474248},
  {1.875, -1.25, 0.375}};

/* The paper's list after the 1.01 division, rounded to 4 decimals:
 * NVIDIA-NeMo/Emerging-Optimizers muon_utils.py @fd77292 (since ba5196b)
 * and PaddlePaddle/Paddle python/paddle/optimizer/muon.py @98af0a0. */
static const muonref_coeff PE_4DEC[] = {
  {8.2051, -22.9019, 16.4607}, {4.0664, -2.8612, 0.5184}, {3.9096, -2.8234, 0.5250},
  {3.2856, -2.4153, 0.4853},   {2.2779, -1.6198, 0.3985}, {1.8726, -1.2307, 0.3585},
  {1.8564, -1.2132, 0.3568},   {1.8750, -1.2500, 0.3750}};

/* timm "polar_express": huggingface/pytorch-image-models
 * timm/optim/muon.py @aa4b585 (PolarExpress optimal_composition, 8
 * iterations, safety_factor_eps 1e-2, cushion 0.02). */
static const muonref_coeff PE_TIMM[] = {
  {8.237312490495555, -23.157747414558198, 16.680568411445915},
  {4.082441999064835, -2.893047735332586, 0.5252849256975648},
  {3.9263479922546582, -2.8547468034765298, 0.5318022422894988},
  {3.2982187133085143, -2.424541981026706, 0.48632008358844075},
  {2.2970369434552573, -1.63662558125903, 0.4002628455953627},
  {1.8763805351440397, -1.2347896577722228, 0.35891887501668385},
  {1.8564423485617974, -1.2132449880935525, 0.3568003487825883},
  {1.8749994008682747, -1.2499988017229169, 0.3749994008546422}};

/* timm "polar_express_safer": same file, safety_factor_eps 2e-2. */
static const muonref_coeff PE_TIMM_SAFER[] = {
  {8.156554524902461, -22.48329292557795, 15.878769915207462},
  {4.0429299351667245, -2.808917465908704, 0.5000178451051299},
  {3.8916678022926563, -2.7724841532176825, 0.5060648178503389},
  {3.285753657755658, -2.3681294933425394, 0.46449024233003117},
  {2.3005307116270983, -1.6111665557258408, 0.3833374427545273},
  {1.8631210546382593, -1.2042160621002727, 0.3421879560523383},
  {1.8382572152247512, -1.1779263289537742, 0.3396513038637379},
  {1.8749999923301852, -1.2499999836060613, 0.374999991275876}};

/* The 5-iteration Polar Express list (safety 2e-2, cushion 0.02) of
 * KellerJordan/modded-nanogpt train_gpt.py (from 9350f4d) and
 * microsoft/dion dion/polar_express.py @0a059a4; both normalise by
 * 1.02 ||X||_F + eps. */
static const muonref_coeff PE5[] = {
  {8.156554524902461, -22.48329292557795, 15.878769915207462},
  {4.042929935166739, -2.808917465908714, 0.5000178451051316},
  {3.8916678022926607, -2.772484153217685, 0.5060648178503393},
  {3.285753657755655, -2.3681294933425376, 0.46449024233003106},
  {2.3465413258596377, -1.7097828382687081, 0.42323551169305323}};

/* CANS (arXiv:2506.10935) as Emerging-Optimizers muon_utils.py @fd77292. */
static const muonref_coeff CANS[] = {
  {8.4703, -25.1081, 18.6293}, {4.1828, -3.1087, 0.5806}, {3.9619, -2.9541, 0.5630},
  {3.2866, -2.4647, 0.5074},   {2.2737, -1.6447, 0.4162}};

/* The first AOL list of thib-s/flash-newton-schulz newton_schulz_triton.py
 * @b73111d, as Emerging-Optimizers and Paddle copy it (without the AOL
 * rescaling, which no port applies with this list). */
static const muonref_coeff AOL[] = {
  {4.0098, -7.0585, 2.4635}, {3.4585, -5.5479, 2.5959}, {2.7573, -3.2939, 1.4254},
  {2.7215, -3.0494, 1.3169}};

/* DeepSeek-V4 as Emerging-Optimizers (dd79ab1) and Paddle @98af0a0 write
 * it: Keller's triple 8 times, then p(x) = 2x - 1.5x^3 + 0.5x^5 twice. */
static const muonref_coeff DSV4[] = {
  {3.4445, -4.7750, 2.0315}, {3.4445, -4.7750, 2.0315}, {3.4445, -4.7750, 2.0315},
  {3.4445, -4.7750, 2.0315}, {3.4445, -4.7750, 2.0315}, {3.4445, -4.7750, 2.0315},
  {3.4445, -4.7750, 2.0315}, {3.4445, -4.7750, 2.0315}, {2.0, -1.5, 0.5},
  {2.0, -1.5, 0.5}};

/* cubic5 (arXiv:2606.00371): cubic steps (c = 0), Emerging-Optimizers. */
static const muonref_coeff CUBIC5[] = {
  {3.3656576, -3.3420992, 0.0}, {2.5744352, -1.4957376, 0.0}, {2.5368962, -1.4312570, 0.0},
  {2.4418906, -1.2764040, 0.0}, {2.2230472, -0.9630650, 0.0}};

#define LIST(x) (int)(sizeof x / sizeof x[0]), x
#define CYC MUONREF_ORDER_CYCLE
#define RPT MUONREF_ORDER_REPEAT_LAST

static const muonref_preset PRESETS[] = {
  {"simple", "original,standard,keller", LIST(SIMPLE), CYC, 5,
   "Keller Jordan, Muon (2024), KellerJordan/Muon muon.py @857d1ad; NVIDIA-NeMo PR #16427", 0, 0},
  {"quintic", "leloykun,optax_dion", LIST(QUINTIC), CYC, 5,
   "KellerJordan/modded-nanogpt train_gpt_medium.py @0674386; Emerging-Optimizers muon_utils.py @fd77292", 0, 0},
  {"polar_express_paper", "pe_paper", LIST(PE_PAPER), RPT, 8,
   "Amsel, Persson, Musco, Gower, The Polar Express (2025), arXiv:2505.16932, Algorithm 1", 1.01, 1.01},
  {"polar_express", "pe_4dec,polar_express_eo,polar_express_paddle", LIST(PE_4DEC), RPT, 5,
   "NVIDIA-NeMo/Emerging-Optimizers muon_utils.py @fd77292; PaddlePaddle/Paddle muon.py @98af0a0", 0, 0},
  {"polar_express_timm", "pe_timm", LIST(PE_TIMM), RPT, 5,
   "huggingface/pytorch-image-models timm/optim/muon.py @aa4b585 (\"polar_express\")", 0, 0},
  {"polar_express_safer", "pe_timm_safer", LIST(PE_TIMM_SAFER), RPT, 5,
   "huggingface/pytorch-image-models timm/optim/muon.py @aa4b585 (\"polar_express_safer\")", 0, 0},
  {"polar_express_5", "pe5,polar_express_dion,polar_express_modded", LIST(PE5), RPT, 5,
   "KellerJordan/modded-nanogpt train_gpt.py (from 9350f4d); microsoft/dion dion/polar_express.py @0a059a4", 0,
   1.02},
  {"cans", "", LIST(CANS), RPT, 5, "CANS, arXiv:2506.10935; Emerging-Optimizers muon_utils.py @fd77292", 0, 0},
  {"aol", "", LIST(AOL), CYC, 5,
   "thib-s/flash-newton-schulz newton_schulz_triton.py @b73111d; Emerging-Optimizers @fd77292; Paddle @98af0a0",
   0, 0},
  {"deepseekv4", "dsv4", LIST(DSV4), RPT, 10,
   "DeepSeek-V4 report (DeepSeek_V4.pdf), as Emerging-Optimizers dd79ab1 and Paddle @98af0a0 write it", 0, 0},
  {"cubic5", "", LIST(CUBIC5), CYC, 5, "arXiv:2606.00371; Emerging-Optimizers muon_utils.py @fd77292", 0, 0},
};

size_t muonref_preset_count(void) { return sizeof PRESETS / sizeof PRESETS[0]; }

const muonref_preset *muonref_preset_at(size_t i)
{
  return i < muonref_preset_count() ? &PRESETS[i] : NULL;
}

/* Whether `name` is one of the comma-separated words of `list`. */
static int in_list(const char *list, const char *name)
{
  size_t n = strlen(name);
  for (const char *p = list; p && *p;) {
    const char *q = strchr(p, ',');
    size_t len = q ? (size_t)(q - p) : strlen(p);
    if (len == n && strncmp(p, name, n) == 0)
      return 1;
    p = q ? q + 1 : NULL;
  }
  return 0;
}

const muonref_preset *muonref_preset_find(const char *name)
{
  for (size_t i = 0; name && i < muonref_preset_count(); i++)
    if (strcmp(PRESETS[i].name, name) == 0 || in_list(PRESETS[i].aliases, name))
      return &PRESETS[i];
  return NULL;
}

muonref_coeff muonref_preset_coeff(const muonref_preset *p, int k)
{
  if (!p || k < 0 || k >= p->n_coeffs)
    return (muonref_coeff){0.0, 0.0, 0.0};
  muonref_coeff t = p->coeffs[k];
  double f = p->coeff_safety;
  if (f > 0 && k < p->n_coeffs - 1) {
    t.a = t.a / f;
    t.b = t.b / pow(f, 3);
    t.c = t.c / pow(f, 5);
  }
  return t;
}

double muonref_preset_norm_safety(const muonref_preset *p) { return p && p->norm_safety > 0 ? p->norm_safety : 1.0; }

void muonref_preset_apply(const muonref_preset *p, muonref_options *o)
{
  if (!p || !o)
    return;
  o->n_coeffs = p->n_coeffs;
  for (int k = 0; k < p->n_coeffs; k++)
    o->coeffs[k] = muonref_preset_coeff(p, k);
  o->coeff_order = p->order;
}

int muonref_preset_holds(const muonref_preset *p, const muonref_options *o)
{
  if (!p || !o || o->n_coeffs != p->n_coeffs)
    return 0;
  for (int k = 0; k < o->n_coeffs; k++) {
    muonref_coeff c = muonref_preset_coeff(p, k);
    if (c.a != o->coeffs[k].a || c.b != o->coeffs[k].b || c.c != o->coeffs[k].c)
      return 0;
  }
  return 1;
}

const muonref_preset *muonref_preset_held(const muonref_options *o)
{
  for (size_t p = 0; p < muonref_preset_count(); p++)
    if (muonref_preset_holds(muonref_preset_at(p), o))
      return muonref_preset_at(p);
  return NULL;
}
