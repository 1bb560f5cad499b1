/* muonref bench: the benchmark cases (see bench.h). */
#include <stdio.h>
#include <string.h>
#include "bench.h"

void bench_case_single(bench_case *c, size_t rows, size_t cols)
{
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%zux%zu", rows, cols);
  c->n = 1;
  c->rows[0] = rows;
  c->cols[0] = cols;
}

void bench_case_layers(bench_case *c, const char *name, size_t layers, size_t d)
{
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%s", name);
  static const size_t VEC[10] = {1, 1, 1, 1, 1, 1, 1, 1, 4, 1}; /* in units of d */
  for (size_t l = 0; l < layers && c->n + 6 <= BENCH_MAX_MATS && c->n_vec + 10 <= BENCH_MAX_VECS; l++) {
    for (int k = 0; k < 6; k++, c->n++) {
      c->rows[c->n] = d;
      c->cols[c->n] = k < 4 ? d : 4 * d;
    }
    for (int k = 0; k < 10; k++)
      c->vec_len[c->n_vec++] = VEC[k] * d;
  }
}

int bench_case_spec(const bench_case *c, char *buf, size_t size)
{
  /* the shapes, grouped by shape in order of first appearance */
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < c->n; i++) {
    int seen = 0;
    size_t count = 0;
    for (size_t j = 0; j < c->n; j++)
      if (c->rows[j] == c->rows[i] && c->cols[j] == c->cols[i]) {
        seen |= j < i;
        count++;
      }
    if (seen)
      continue;
    int w = snprintf(buf + used, size - used, "%s%zux%zu*%zu", used ? "+" : "", c->rows[i], c->cols[i], count);
    if (w < 0 || (size_t)w >= size - used)
      return -1;
    used += (size_t)w;
  }
  return 0;
}
