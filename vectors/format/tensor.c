/* muonref: tensors in the vector format (see tensor.h). */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "muonref/bf16.h"
#include "core/pyfmt.h"
#include "vectors/format/tensor.h"
#include "core/fail.h"

static const char *const DTYPE_NAMES[] = {"f32", "f64", "bf16"};
static const int DIGITS[] = {8, 16, 4};

int muonref_tensor_alloc(muonref_tensor *t, muonref_tensor_dtype dtype, const muonref_shape *shape,
                         muonref_error *err)
{
  memset(t, 0, sizeof *t);
  if (shape->ndim < 0 || shape->ndim > MUONREF_MAX_NDIM)
    return muonref_fail(err, MUONREF_ESHAPE, "tensor with %d dimensions, at most %d are supported", shape->ndim,
                        MUONREF_MAX_NDIM);
  t->dtype = dtype;
  t->shape = *shape;
  t->numel = muonref_shape_numel(shape);
  size_t n = t->numel ? t->numel : 1;
  if (dtype == MUONREF_TENSOR_F64)
    t->d = calloc(n, sizeof *t->d);
  else
    t->f = calloc(n, sizeof *t->f);
  if (!t->d && !t->f)
    return muonref_fail(err, MUONREF_ENOMEM, "out of memory for a tensor of %zu elements", t->numel);
  return MUONREF_OK;
}

void muonref_tensor_free(muonref_tensor *t)
{
  if (!t)
    return;
  free(t->f);
  free(t->d);
  memset(t, 0, sizeof *t);
}

/* The bit pattern of element i, in the dtype's width. */
static uint64_t element_bits(const muonref_tensor *t, size_t i)
{
  if (t->dtype == MUONREF_TENSOR_F64) {
    uint64_t u;
    memcpy(&u, &t->d[i], 8);
    return u;
  }
  uint32_t u;
  memcpy(&u, &t->f[i], 4);
  /* a decoded bf16 value is exact in binary32 (low 16 bits zero): its top
   * half is its bf16 pattern, signalling NaNs included (rounding would
   * quiet them: found by fuzz/fuzz_tensor.c); other floats are rounded */
  if (t->dtype == MUONREF_TENSOR_BF16)
    return (u & 0xFFFFu) == 0 ? u >> 16 : muonref_bf16_from_float(t->f[i]);
  return u;
}

static void set_element_bits(muonref_tensor *t, size_t i, uint64_t u)
{
  if (t->dtype == MUONREF_TENSOR_F64) {
    memcpy(&t->d[i], &u, 8);
  } else if (t->dtype == MUONREF_TENSOR_BF16) {
    t->f[i] = muonref_bf16_to_float((uint16_t)u);
  } else {
    uint32_t v = (uint32_t)u;
    memcpy(&t->f[i], &v, 4);
  }
}

static double element_value(const muonref_tensor *t, size_t i)
{
  return t->dtype == MUONREF_TENSOR_F64 ? t->d[i] : (double)t->f[i];
}

json_t *muonref_tensor_to_json(const muonref_tensor *t, int approx)
{
  int w = DIGITS[t->dtype];
  char *hex = malloc(t->numel * (size_t)w + 1);
  json_t *shape = json_array(), *o = json_object();
  if (!hex || !shape || !o) {
    free(hex);
    json_decref(shape);
    json_decref(o);
    return NULL;
  }
  static const char DIGIT[] = "0123456789abcdef";
  for (size_t i = 0; i < t->numel; i++) { /* w lower-case digits, most significant first ("%0*" PRIx64) */
    uint64_t u = element_bits(t, i);
    for (int k = w - 1; k >= 0; k--, u >>= 4)
      hex[i * (size_t)w + (size_t)k] = DIGIT[u & 15];
  }
  hex[t->numel * (size_t)w] = '\0';
  for (int k = 0; k < t->shape.ndim; k++)
    json_array_append_new(shape, json_integer((json_int_t)t->shape.dims[k]));
  json_object_set_new(o, "dtype", json_string(DTYPE_NAMES[t->dtype]));
  json_object_set_new(o, "shape", shape);
  json_object_set_new(o, "hex", json_string(hex));
  free(hex);
  if (approx) {
    json_t *a = json_array();
    for (size_t i = 0; i < t->numel; i++) {
      double v = element_value(t, i);
      json_array_append_new(a, isfinite(v) ? json_real(v) : json_null());
    }
    json_object_set_new(o, "approx", a);
  }
  return o;
}

/* VALUE1[c]: 1 + the value of the lower-case hex digit c, 0 for any other byte */
static const unsigned char VALUE1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
};

static int hex_digit(char c) { return VALUE1[(unsigned char)c] - 1; }

static int read_dtype(const json_t *j, const char *where, muonref_tensor_dtype *out, muonref_error *err)
{
  const char *s = json_string_value(json_object_get(j, "dtype"));
  for (int k = 0; s && k < 3; k++)
    if (!strcmp(s, DTYPE_NAMES[k])) {
      *out = (muonref_tensor_dtype)k;
      return MUONREF_OK;
    }
  return muonref_fail(err, MUONREF_EFORMAT, "%s: \"dtype\" must be one of \"f32\", \"f64\", \"bf16\"", where);
}

static int read_shape(const json_t *j, const char *where, muonref_shape *out, muonref_error *err)
{
  const json_t *a = json_object_get(j, "shape");
  if (!json_is_array(a) || json_array_size(a) > MUONREF_MAX_NDIM)
    return muonref_fail(err, MUONREF_EFORMAT, "%s: \"shape\" must be an array of at most %d positive integers",
                        where, MUONREF_MAX_NDIM);
  out->ndim = (int)json_array_size(a);
  for (int k = 0; k < out->ndim; k++) {
    const json_t *d = json_array_get(a, (size_t)k);
    if (!json_is_integer(d) || json_integer_value(d) < 1)
      return muonref_fail(err, MUONREF_EFORMAT, "%s: \"shape\"[%d] must be a positive integer", where, k);
    out->dims[k] = (size_t)json_integer_value(d);
  }
  size_t n = 1;
  for (int k = 0; k < out->ndim; k++) {
    if (out->dims[k] > MUONREF_MAX_NUMEL / n)
      return muonref_fail(err, MUONREF_EFORMAT, "%s: \"shape\" has more than %zu elements", where,
                          (size_t)MUONREF_MAX_NUMEL);
    n *= out->dims[k];
  }
  return MUONREF_OK;
}

/* A memo of recent decodings.  The fit judges tens of thousands of runs of
 * the same few golden cases, and each run decodes the case's inputs and
 * expectations again (emerging_adaptive's adaptive_v020 in fit-variants:
 * 49,000 runs, the decoding a quarter of the judge).  An entry is found by
 * the address of the hex string and used only when its dtype, shape and
 * every hex character equal the stored copy's, so a hit gives exactly what
 * decoding gives (a freed string whose address is reused is a miss).  At
 * most MEMO_BYTES hex characters per entry; a mutex guards the table (the
 * generator runs threads). */
#define MEMO_SLOTS 256
#define MEMO_BYTES 16384

typedef struct memo_entry {
  const char *key; /* the decoded string's address, NULL: empty */
  char *hex;       /* a copy of its characters */
  size_t len;
  muonref_tensor_dtype dtype;
  muonref_shape shape;
  void *data; /* numel values (float, or double for f64) */
} memo_entry;

static memo_entry memo[MEMO_SLOTS];
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t memo_slot(const char *key) { return (size_t)(((uint64_t)(uintptr_t)key >> 4) * 0x9E3779B97F4A7C15u >> 56); }

static size_t value_bytes(const muonref_tensor *t)
{
  return t->numel * (t->dtype == MUONREF_TENSOR_F64 ? sizeof(double) : sizeof(float));
}

/* t (allocated, of dtype and shape) <- the memo's values for hex; 1 on a hit. */
static int memo_get(muonref_tensor *t, const char *hex, size_t len)
{
  pthread_mutex_lock(&memo_lock);
  memo_entry *m = &memo[memo_slot(hex)];
  int hit = m->key == hex && m->len == len && m->dtype == t->dtype && m->shape.ndim == t->shape.ndim &&
            !memcmp(m->shape.dims, t->shape.dims, (size_t)t->shape.ndim * sizeof t->shape.dims[0]) &&
            !memcmp(m->hex, hex, len);
  if (hit)
    memcpy(t->dtype == MUONREF_TENSOR_F64 ? (void *)t->d : (void *)t->f, m->data, value_bytes(t));
  pthread_mutex_unlock(&memo_lock);
  return hit;
}

static void memo_put(const muonref_tensor *t, const char *hex, size_t len)
{
  if (len > MEMO_BYTES)
    return;
  size_t nb = value_bytes(t);
  char *copy = malloc(len ? len : 1);
  void *data = malloc(nb ? nb : 1);
  if (!copy || !data) {
    free(copy), free(data);
    return;
  }
  memcpy(copy, hex, len);
  memcpy(data, t->dtype == MUONREF_TENSOR_F64 ? (void *)t->d : (void *)t->f, nb);
  pthread_mutex_lock(&memo_lock);
  memo_entry *m = &memo[memo_slot(hex)];
  free(m->hex), free(m->data);
  *m = (memo_entry){hex, copy, len, t->dtype, t->shape, data};
  pthread_mutex_unlock(&memo_lock);
}

int muonref_tensor_from_json(muonref_tensor *t, const json_t *j, const char *where, muonref_error *err)
{
  memset(t, 0, sizeof *t);
  muonref_tensor_dtype dt = MUONREF_TENSOR_F32;
  muonref_shape shape = {0};
  char b[128];
  if (!json_is_object(j))
    return muonref_fail(err, MUONREF_EFORMAT, "%s: expected a tensor object {\"dtype\", \"shape\", \"hex\"}", where);
  int st = read_dtype(j, where, &dt, err);
  if (!st)
    st = read_shape(j, where, &shape, err);
  if (st)
    return st;
  const char *hex = json_string_value(json_object_get(j, "hex"));
  size_t w = (size_t)DIGITS[dt], numel = muonref_shape_numel(&shape);
  if (!hex)
    return muonref_fail(err, MUONREF_EFORMAT, "%s: \"hex\" must be a string", where);
  if (strlen(hex) != numel * w)
    return muonref_fail(err, MUONREF_EFORMAT, "%s: \"hex\" has %zu digits, expected %zu for shape %s %s", where,
                        strlen(hex), numel * w, muonref_py_shape(b, sizeof b, shape.dims, shape.ndim),
                        DTYPE_NAMES[dt]);
  if ((st = muonref_tensor_alloc(t, dt, &shape, err)))
    return st;
  size_t len = numel * w;
  if (memo_get(t, hex, len))
    return MUONREF_OK;
  unsigned bad = 0; /* some digit's VALUE1 was 0: not a lower-case hex digit */
  for (size_t i = 0; i < numel && !bad; i++) {
    const unsigned char *d = (const unsigned char *)hex + i * w;
    uint64_t u = 0;
    for (size_t k = 0; k < w; k++) {
      unsigned v = VALUE1[d[k]];
      bad |= v == 0;
      u = u << 4 | (uint64_t)(v - 1);
    }
    if (dt == MUONREF_TENSOR_F32) {
      uint32_t v = (uint32_t)u;
      memcpy(&t->f[i], &v, 4);
    } else {
      set_element_bits(t, i, u);
    }
  }
  if (bad) {
    size_t k = 0;
    while (hex_digit(hex[k]) >= 0)
      k++;
    muonref_tensor_free(t);
    return muonref_fail(err, MUONREF_EFORMAT, "%s: \"hex\" character %zu is '%c', expected 0-9 or a-f", where, k,
                        hex[k]);
  }
  memo_put(t, hex, len);
  return MUONREF_OK;
}
