/* muonref: reading and writing the parts of a vector case (spec/vectors.md):
 * options objects, parameter lists, gradients, states. */
#ifndef MUONREF_VECTORS_CASE_H
#define MUONREF_VECTORS_CASE_H

#include <jansson.h>
#include "muonref/optimizer.h"
#include "muonref/profile.h"
#include "vectors/format/tensor.h"

/* Fills *out from the options object `j` of a case: the profile's defaults,
 * then each member present, named as the profile's port names it (its key
 * table, profile.h; spec/vectors.md section 3).  Errors: MUONREF_EOPTION
 * for an unknown profile; MUONREF_EFORMAT (message names `where` and the
 * member) for a member of the wrong JSON type, a member the profile does
 * not have, or an integer that does not fit an int (never clamped);
 * MUONREF_EOPTION with the catalogue message for a value that is not a
 * valid spelling (scale_mode 'rows', adjust_lr_fn 'cosine', three
 * coefficients expected).  Range checks are not made here:
 * muonref_options_validate does them. */
int muonref_case_options(const json_t *j, const char *profile, muonref_options *out, const char *where,
                         muonref_error *err);

/* Whether profile p (NULL: none) has a key of kind k in its key table. */
int muonref_case_has_key_kind(const muonref_profile *p, muonref_key_kind k);

/* Emerging-Optimizers' coefficient preset i that the key kind
 * coefficient_type knows (muon_utils.py @fd77292 _COEFFICIENT_SETS, in its
 * order), or NULL past the last; and whether name is one of them. */
const char *muonref_case_coefficient_type_name(size_t i);
int muonref_case_coefficient_type_known(const char *name);

/* Sets in *o the four fields Emerging-Optimizers' moment2_method `name` stands for (the key kind
 * moment2_method: "adamuon" moment2 element, eps added, no rescale; "normuon" moment2 longer, eps
 * clamped, the norm restored; neither with a bias correction; spec/muon.md 7.4).  Returns 1, or 0
 * leaving *o as it was where name is no such method (NULL, "namo", another string). */
int muonref_case_moment2_method(const char *name, muonref_options *o);

/* muonref_case_moment2_method for Emerging-Optimizers v0.2.0's methods where v0_2 is 1 (the key kind
 * moment2_method_v0_2: its "normuon" restores no norm, moment2_rescale none). */
int muonref_case_moment2_method_of(const char *name, int v0_2, muonref_options *o);

/* timm's algo (the key kind MUONREF_KEY_ALGO_TIMM, include/muonref/
 * profile.h), applied to *o once a group's keys are read: with moment2
 * element (algo "adamuon") the fields AdaMuon takes from betas, eps and
 * adjust_lr_fn; muonref_case_options and muonref_case_step_options call it
 * for a profile with such a key, the generator for the options it writes.
 * Idempotent.  Errors: MUONREF_EOPTION 'Invalid scaling function
 * "original" for AdaMuon' (scale_mode fan_in with moment2 element) or
 * '"rsqrt_in" for Muon' (rsqrt_cols without), as timm's step asserts. */
int muonref_case_timm_algo(muonref_options *o, muonref_error *err);

/* What *o would hold as a group of a `profile` case once its keys are read:
 * the post-pass of muonref_case_options (timm's algo: AdaMuon's fields from
 * moment2 element), so that muonref_case_options_json can spell options
 * built field by field (the fit's changes, vectors/judge/fit_space.c).  *o is
 * left as it was where the post-pass refuses it or the profile has none. */
void muonref_case_complete(const char *profile, muonref_options *o);

/* Applies one group's entry of a step's "setOptions" (format v2,
 * spec/vectors.md 2.8) to *o, the options that group ran its previous step
 * with: each member, named as the profile's port names it, sets its field
 * through the same key table as muonref_case_options.  Only the options a
 * scheduler changes may appear: those setting lr, momentum, weight_decay
 * or the AdamW betas.  Errors (*o may then be partly written):
 * MUONREF_EFORMAT naming `where` and the member for `set` not an object,
 * a member the profile does not have, one that is not schedulable, or a
 * value of the wrong JSON type.  Range checks are the caller's
 * (muonref_options_validate). */
int muonref_case_step_options(const json_t *set, const char *profile, muonref_options *o, const char *where,
                              muonref_error *err);

/* The options object of o under the port names of `profile` (every key
 * of its table, in the table's order; new reference; an empty object for
 * an unknown profile).  Fields no key names are not written: the reader
 * takes them from the profile's defaults. */
json_t *muonref_case_options_json(const muonref_options *o, const char *profile);

/* The branch a group's options object puts it in, as muonref_case_options
 * reads it: "use_muon" true MUONREF_KEY_MUON_ONLY, false
 * MUONREF_KEY_ADAM_ONLY, absent or another value MUONREF_KEY_ANY. */
muonref_key_branch muonref_case_group_branch(const json_t *options);

/* As muonref_case_options_json, but where branch_defaults is 1 a group of
 * a key's branch gets each key marked branch_default (the constructor's
 * default for that branch's groups: pytorch_optimizer's adamw_lr) in place
 * of the group key it gives the default of (muonref_case_shadowing_key):
 * the options of a case of constructor defaults (spec/vectors.md 2.1).
 * muonref_case_options_json writes no branch_default key. */
json_t *muonref_case_options_json_as(const muonref_options *o, const char *profile, int branch_defaults);

/* The index in keys[0..n) of the group key whose default the branch
 * default k gives: the same field and kind, of scope group (not init, not
 * a branch default), taken by k's branch's groups; n where there is none. */
size_t muonref_case_shadowing_key(const muonref_option_key *keys, size_t n, const muonref_option_key *k);

/* Key k's value in o as its port spells it (new reference), written even
 * where muonref_case_options_json leaves an optional key out; "?" where the
 * key cannot spell o's fields (dion's algorithm writes null for use_muon
 * AUTO: a group without the key, the class's own). */
json_t *muonref_case_key_json(const muonref_options *o, const muonref_option_key *k);

/* Whether key k is an option of a group routed by use_muon (a key of one
 * branch only, muonref_key_branch, is not written for the other; AUTO
 * takes every key). */
int muonref_case_key_applies(const muonref_option_key *k, muonref_use_muon use_muon);

/* Whether parameter i of step or error case `test` is bf16: its "init" has dtype "bf16" (a
 * bf16 parameter, area dtypes, spec/vectors.md 2.1); 0 for a missing parameter. */
int muonref_case_param_bf16(const json_t *test, size_t i);

/* Whether parameter i is bf16 at step k (0-based) of step or error case `test`: its init's dtype,
 * or from step roundTripAfter on the case's "roundTripDtype" (a checkpoint loaded into the model
 * converted to that dtype, spec/vectors.md 2.1); its gradient at step k has that dtype. */
int muonref_case_grad_bf16(const json_t *test, size_t i, size_t k);

/* Whether parameter i is bf16 after the case's last step: the dtype its result must have. */
int muonref_case_final_bf16(const json_t *test, size_t i);

/* The dtype parameter i of a result must have ("bf16", or "f32" where the round trip converted it
 * to float32), or NULL where none is required (a float32 parameter throughout: a result's f64 is
 * judged by its values); *converted (may be NULL) gets whether the round trip changed it. */
const char *muonref_case_result_dtype(const json_t *test, size_t i, int *converted);

/* Whether parameter i is stored in bf16 at any step of the case (created bf16, or loaded bf16 at
 * the round trip): the bf16 storage allowance applies (spec/vectors.md 5.1). */
int muonref_case_stored_bf16(const json_t *test, size_t i);

/* Whether `name` names a muonref error status without its prefix ("EOPTION", "EGRAD", ...,
 * spec/muon.md 12): an error case's expected.error.status, a record's bf16_refusal.status. */
int muonref_case_status_known(const char *name);

/* A real option value: a JSON number, or "nan", "inf", "-inf". */
json_t *muonref_case_real_json(double x);

/* The gradient descriptor of steps[k].grads[i]: NULL JSON -> data NULL;
 * a tensor object (f32, or bf16 for a bf16 parameter: its values, exact in
 * binary32) -> its values, with "layout": "sparse" or
 * "dtype": "c64" describing gradients a dense float32 API cannot take
 * (their values are then zeros of the parameter's shape).  t receives the
 * owned tensor (free with muonref_tensor_free).  Errors: MUONREF_EFORMAT. */
int muonref_case_grad(const json_t *j, size_t numel, muonref_tensor *t, muonref_grad *g, const char *where,
                      muonref_error *err);

/* The f32 tensor object (spec/vectors.md 1) of the floats b[0..numel),
 * of shape `shape`; NULL when out of memory. */
json_t *muonref_case_tensor_f32_json(const float *b, const muonref_shape *shape);

/* The JSON of a parameter state (spec/vectors.md 2.1; null when not
 * initialized), of shape `shape`; a Muon state's second moment (moment2,
 * st->moment2_numel floats) of shape *m2shape (muonref_moment2_shape). */
json_t *muonref_case_state_json(const muonref_param_state *st, const muonref_shape *shape,
                                const muonref_shape *m2shape);

/* The buffers a parameter's state may hold, NULL-terminated (spec/vectors.md
 * 2.1, "expected.state"; the members of a "stateAtol" entry). */
extern const char *const muonref_case_state_buffers[];

/* The buffers of muonref_case_state_buffers that a branch's step writes
 * (Muon's momentum and second moment, AdamW's moments), NULL-terminated:
 * the others (the accumulator, the moving average: spec/muon.md 3.3, 8.2;
 * the master weight: 10) say nothing of whether the branch has stepped. */
extern const char *const muonref_case_branch_buffers[];

/* Whether the test object `test` (one entry of a file's "tests") lists
 * `flag` in its "flags" (spec/vectors.md 2.5); 0 when it has none. */
int muonref_case_has_flag(const json_t *test, const char *flag);

#endif
