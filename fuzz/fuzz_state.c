/* muonref fuzz target: the state file (fast/state.c).  An input is a
 * state file; a file that reads back is loaded into an optimizer built from
 * its own groups and saved again: for the current format the bytes must be
 * the same (the format has one encoding of each state), for format 1 the
 * file saved must read back to the same options and states.
 *
 * LLVMFuzzerCustomMutator: every input ends in a CRC-32 of the bytes before
 * it, so a plain mutation is refused at the CRC check and never reaches the
 * parser.  The mutator mutates the payload (libFuzzer's LLVMFuzzerMutate on
 * all bytes but the last four), then writes the CRC-32 of the new payload
 * after it, so that most mutants pass the CRC and exercise every later
 * rule (counts, shapes, options, flags, steps, buffers, trailing bytes). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "muonref.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
  (void)seed;
  if (max_size < 8)
    return LLVMFuzzerMutate(data, size, max_size);
  size_t payload = size >= 4 ? size - 4 : size;
  payload = LLVMFuzzerMutate(data, payload, max_size - 4);
  uint32_t c = (uint32_t)crc32(0L, data, (uInt)payload);
  for (int k = 0; k < 4; k++)
    data[payload + (size_t)k] = (uint8_t)(c >> (8 * k));
  return payload + 4;
}

/* Whether the state files a and b (read) hold the same options and states. */
static int same_file(const muonref_state_file *a, const muonref_state_file *b)
{
  if (a->n_groups != b->n_groups || a->n_params != b->n_params || strcmp(a->profile, b->profile))
    return 0;
  for (size_t i = 0; i < a->n_params; i++) {
    const muonref_param_state *x = &a->states[i], *y = &b->states[i];
    if (x->initialized != y->initialized || x->use_muon != y->use_muon || x->step != y->step || x->numel != y->numel)
      return 0;
    size_t n = x->numel * sizeof(float);
    if (x->initialized && (x->use_muon ? memcmp(x->momentum_buffer, y->momentum_buffer, n)
                                       : memcmp(x->exp_avg, y->exp_avg, n) || memcmp(x->exp_avg_sq, y->exp_avg_sq, n)))
      return 0;
  }
  return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char in[64], out[64];
  snprintf(in, sizeof in, "/tmp/muonref-fuzz-state-%ld.in", (long)getpid());
  snprintf(out, sizeof out, "/tmp/muonref-fuzz-state-%ld.out", (long)getpid());
  FILE *f = fopen(in, "wb");
  if (!f)
    return 0;
  fwrite(data, 1, size, f);
  fclose(f);
  muonref_state_file sf;
  muonref_error err;
  if (muonref_state_file_read(in, &sf, &err) == MUONREF_OK) {
    muonref_group *g = calloc(sf.n_groups + 1, sizeof *g);
    muonref_shape *shapes = calloc(sf.n_params + 1, sizeof *shapes);
    size_t k = 0;
    int ordered = 1; /* an optimizer numbers its parameters in group order */
    for (size_t i = 0; i < sf.n_params; i++)
      ordered &= i == 0 || sf.param_group[i] >= sf.param_group[i - 1];
    for (size_t gi = 0; ordered && gi < sf.n_groups; gi++) {
      g[gi].options = sf.options[gi];
      g[gi].shapes = shapes + k;
      for (size_t i = 0; i < sf.n_params; i++)
        if (sf.param_group[i] == gi)
          shapes[k++] = sf.shapes[i], g[gi].n_params++;
    }
    size_t total = 0;
    for (size_t i = 0; i < sf.n_params; i++)
      total += sf.states[i].numel;
    muonref_optimizer *opt = ordered && total < (1u << 20) ? muonref_optimizer_create(g, sf.n_groups, &err) : NULL;
    if (opt && muonref_state_load(opt, in, &err) == MUONREF_OK &&
        muonref_state_save(opt, sf.profile, out, &err) == MUONREF_OK) {
      if (sf.version == MUONREF_STATE_VERSION) {
        FILE *o = fopen(out, "rb");
        unsigned char *b = malloc(size + 1);
        size_t got = o ? fread(b, 1, size + 1, o) : 0;
        if (o)
          fclose(o);
        if (got != size || memcmp(b, data, size))
          abort(); /* load then save must give the same bytes */
        free(b);
      } else {
        muonref_state_file back;
        if (muonref_state_file_read(out, &back, &err) != MUONREF_OK || !same_file(&sf, &back))
          abort(); /* a format-1 file saved again (format 2) must read back the same */
        muonref_state_file_free(&back);
      }
    }
    muonref_optimizer_free(opt);
    free(g), free(shapes);
    muonref_state_file_free(&sf);
  }
  unlink(in);
  unlink(out);
  return 0;
}
