/* muonref fuzz target: a user's profile record (vectors/format/record.c,
 * `muonref gen|check --profile-file FILE`).  An input is read as a record
 * on the built-in keller (a record naming another base is refused); one
 * that reads is written back as a resolved record (muonref_record_json)
 * and read again: the second reading must give the same defaults, AdamW
 * defaults, key table, one_group and areas (a record has one meaning).
 * The generator's area list is not linked here: any lower-case name is an
 * area (the reader's other rules are the real ones). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "vectors/format/record.h"

int muonref_gen_area_known(const char *name);
const char *muonref_gen_area_list(void);
int muonref_gen_area_known(const char *name)
{
  if (!name || !*name)
    return 0;
  for (const char *p = name; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || *p == '_'))
      return 0;
  return 1;
}
const char *muonref_gen_area_list(void) { return "lower-case names (fuzz stub)"; }

static int same(const muonref_record *a, const muonref_record *b)
{
  if (memcmp(&a->defaults, &b->defaults, sizeof a->defaults) || a->has_adam != b->has_adam ||
      (a->has_adam && memcmp(&a->adam_defaults, &b->adam_defaults, sizeof a->adam_defaults)) ||
      a->n_keys != b->n_keys || a->one_group != b->one_group || a->n_areas != b->n_areas)
    return 0;
  for (size_t i = 0; i < a->n_keys; i++)
    if (strcmp(a->key_names[i], b->key_names[i]) || a->keys[i].kind != b->keys[i].kind ||
        a->keys[i].offset != b->keys[i].offset || a->keys[i].branch != b->keys[i].branch ||
        a->keys[i].schedulable != b->keys[i].schedulable || a->keys[i].optional != b->keys[i].optional ||
        a->keys[i].required != b->keys[i].required || a->scopes[i] != b->scopes[i])
      return 0;
  for (size_t i = 0; i < a->n_areas; i++)
    if (strcmp(a->area_names[i], b->area_names[i]))
      return 0;
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char in[64], again[64];
  snprintf(in, sizeof in, "/tmp/muonref-fuzz-record-%ld.json", (long)getpid());
  snprintf(again, sizeof again, "/tmp/muonref-fuzz-record-%ld.again.json", (long)getpid());
  FILE *f = fopen(in, "wb");
  if (!f)
    return 0;
  fwrite(data, 1, size, f);
  fclose(f);
  static muonref_record base, r, r2; /* large: not on the stack */
  muonref_error err;
  muonref_record_of_profile(muonref_profile_get("keller"), MUONREF_PROFILE_KELLER, &base);
  if (muonref_record_read(in, &base, &r, &err) == MUONREF_OK) {
    json_t *j = muonref_record_json(&r);
    if (!j || json_dump_file(j, again, 0))
      abort();
    json_decref(j);
    if (muonref_record_read(again, &base, &r2, &err) != MUONREF_OK) {
      fprintf(stderr, "the resolved record does not read back: %s\n", err.message);
      abort();
    }
    if (!same(&r, &r2))
      abort(); /* written and read again, a record must mean the same */
    unlink(again);
  } else if (err.message[0] == 0) {
    abort(); /* every refusal says why */
  }
  unlink(in);
  return 0;
}
