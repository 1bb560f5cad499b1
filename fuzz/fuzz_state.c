/* muonref fuzz target: the state file (fast/state.c).  An input is a
 * state file; a file that reads back is loaded into an optimizer built from
 * its own groups and saved again: the bytes must be the same (the format
 * has one encoding of each state). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "muonref.h"

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
      FILE *o = fopen(out, "rb");
      unsigned char *b = malloc(size + 1);
      size_t got = o ? fread(b, 1, size + 1, o) : 0;
      if (o)
        fclose(o);
      if (got != size || memcmp(b, data, size))
        abort(); /* load then save must give the same bytes */
      free(b);
    }
    muonref_optimizer_free(opt);
    free(g), free(shapes);
    muonref_state_file_free(&sf);
  }
  unlink(in);
  unlink(out);
  return 0;
}
