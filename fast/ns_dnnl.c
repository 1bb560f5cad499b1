/* muonref: native bf16 matrix products through oneDNN (see ns_dnnl.h).
 * Without oneDNN at configure time (no HAVE_DNNL) every entry says "not
 * available" and fast/ns.c keeps to OpenBLAS. */
#include "config.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "ns_dnnl.h"

static muonref_gemm_kind env_kind;
static int env_st;
static const char *env_value;

static void read_env(void)
{
  env_value = getenv("MUONREF_NS_GEMM");
  if (!env_value || !*env_value || !strcmp(env_value, "auto")) env_kind = MUONREF_GEMM_AUTO;
  else if (!strcmp(env_value, "blas")) env_kind = MUONREF_GEMM_BLAS;
  else if (!strcmp(env_value, "dnnl")) env_kind = MUONREF_GEMM_DNNL;
  else env_st = -1;
}

int muonref_nsd_env(muonref_gemm_kind *kind, const char **bad)
{
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, read_env);
  *kind = env_kind;
  if (bad)
    *bad = env_value;
  return env_st;
}

#ifndef HAVE_DNNL

int muonref_nsd_usable(const char **why)
{
  if (why)
    *why = "muonref was built without oneDNN (configure did not find libdnnl-dev)";
  return 0;
}

int muonref_nsd_matmul(float *C, size_t ldc, const uint16_t *A, size_t lda, const uint16_t *W, size_t wsk,
                       size_t wsn, size_t m, size_t cn, size_t k)
{
  (void)C, (void)ldc, (void)A, (void)lda, (void)W, (void)wsk, (void)wsn, (void)m, (void)cn, (void)k;
  return -1;
}

#else

#include <dnnl.h>

static dnnl_engine_t engine;
static int usable;
static const char *reason = "oneDNN's CPU engine could not be created";

static void init(void)
{
  if (dnnl_get_effective_cpu_isa() < dnnl_cpu_isa_avx512_core_bf16) {
    reason = getenv("ONEDNN_MAX_CPU_ISA") || getenv("DNNL_MAX_CPU_ISA")
                 ? "oneDNN's instruction set is capped below AVX-512 BF16 (ONEDNN_MAX_CPU_ISA), so it has no bf16 "
                   "dot-product instructions"
                 : "this CPU has no bf16 dot-product instructions (AVX-512 BF16) for oneDNN";
    return;
  }
  if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success)
    return;
  usable = 1;
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

int muonref_nsd_usable(const char **why)
{
  pthread_once(&init_once, init);
  if (!usable && why)
    *why = reason;
  return usable;
}

/* The primitives made so far, by layout: creating a primitive descriptor
 * walks oneDNN's implementation list (tens of microseconds), so each
 * layout is made once per process.  A full table makes and drops. */
typedef struct entry {
  size_t key[7];
  dnnl_primitive_t prim;
  dnnl_memory_desc_t a, w, c;
} entry;
enum { CACHE = 256 };
static entry cache[CACHE];
static size_t cached;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* Fills *e with a primitive for the layout e->key; 0 or -1. */
static int make(entry *e)
{
  const size_t *q = e->key;
  dnnl_dims_t ad = {(dnnl_dim_t)q[0], (dnnl_dim_t)q[2]}, as = {(dnnl_dim_t)q[3], 1};
  dnnl_dims_t wd = {(dnnl_dim_t)q[2], (dnnl_dim_t)q[1]}, ws = {(dnnl_dim_t)q[4], (dnnl_dim_t)q[5]};
  dnnl_dims_t cd = {(dnnl_dim_t)q[0], (dnnl_dim_t)q[1]}, cs = {(dnnl_dim_t)q[6], 1};
  dnnl_matmul_desc_t md;
  dnnl_primitive_desc_t pd;
  if (dnnl_memory_desc_init_by_strides(&e->a, 2, ad, dnnl_bf16, as) != dnnl_success
      || dnnl_memory_desc_init_by_strides(&e->w, 2, wd, dnnl_bf16, ws) != dnnl_success
      || dnnl_memory_desc_init_by_strides(&e->c, 2, cd, dnnl_f32, cs) != dnnl_success
      || dnnl_matmul_desc_init(&md, &e->a, &e->w, NULL, &e->c) != dnnl_success
      || dnnl_primitive_desc_create(&pd, &md, NULL, engine, NULL) != dnnl_success)
    return -1;
  dnnl_status_t st = dnnl_primitive_create(&e->prim, pd);
  dnnl_primitive_desc_destroy(pd);
  return st == dnnl_success ? 0 : -1;
}

/* The cached entry of the layout key (made on first use), or a fresh one
 * in *tmp when the table is full (*tmp->prim then belongs to the caller). */
static const entry *lookup(const size_t key[7], entry *tmp)
{
  pthread_mutex_lock(&cache_lock);
  for (size_t i = 0; i < cached; i++)
    if (!memcmp(cache[i].key, key, sizeof cache[i].key)) {
      pthread_mutex_unlock(&cache_lock);
      return &cache[i];
    }
  entry *e = cached < CACHE ? &cache[cached] : tmp;
  memset(e, 0, sizeof *e);
  memcpy(e->key, key, sizeof e->key);
  int st = make(e);
  if (!st && e != tmp)
    cached++;
  pthread_mutex_unlock(&cache_lock);
  return st ? NULL : e;
}

int muonref_nsd_matmul(float *C, size_t ldc, const uint16_t *A, size_t lda, const uint16_t *W, size_t wsk,
                       size_t wsn, size_t m, size_t cn, size_t k)
{
  if (!muonref_nsd_usable(NULL))
    return -1;
  size_t key[7] = {m, cn, k, lda, wsk, wsn, ldc};
  entry tmp;
  const entry *e = lookup(key, &tmp);
  if (!e)
    return -1;
  dnnl_memory_t am = NULL, wm = NULL, cm = NULL;
  dnnl_stream_t s = NULL;
  int ok = dnnl_memory_create(&am, &e->a, engine, (void *)A) == dnnl_success
           && dnnl_memory_create(&wm, &e->w, engine, (void *)W) == dnnl_success
           && dnnl_memory_create(&cm, &e->c, engine, C) == dnnl_success
           && dnnl_stream_create(&s, engine, dnnl_stream_default_flags) == dnnl_success;
  if (ok) {
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, cm}};
    ok = dnnl_primitive_execute(e->prim, s, 3, args) == dnnl_success && dnnl_stream_wait(s) == dnnl_success;
  }
  if (s)
    dnnl_stream_destroy(s);
  dnnl_memory_destroy(am), dnnl_memory_destroy(wm), dnnl_memory_destroy(cm);
  if (e == &tmp)
    dnnl_primitive_destroy(tmp.prim);
  return ok ? 0 : -1;
}

#endif
