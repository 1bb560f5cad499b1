/* muonref: the worker threads of the fused element-wise passes (see pool.h).
 *
 * One job at a time (the `busy` lock, taken with trylock: a second caller
 * runs its pass alone).  A job is a chunk counter under `lock`: the caller
 * and every awake worker claim chunks until none is left; `active` counts
 * the chunks being run, and the caller returns when none is left and none
 * is running.  Workers sleep on `wake` between jobs and recheck the
 * generation, so a worker that wakes late finds no chunk and sleeps again. */
#include <cblas.h>
#include <pthread.h>
#include "pool.h"

enum { MAX_THREADS = 8, MIN_WORK = 1 << 16, MIN_CHUNK = 1 << 14 };

static struct {
  pthread_mutex_t lock, busy;
  pthread_cond_t wake, done;
  unsigned long gen;        /* the current job's number */
  size_t next, chunks;      /* the next chunk to claim, and how many there are */
  size_t active;            /* chunks being run */
  muonref_pool_body *body;
  void *ctx;
  int threads;              /* the caller and the workers started */
} P = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER,
       0, 0, 0, 0, NULL, NULL, 1};

static pthread_once_t started = PTHREAD_ONCE_INIT;

/* Claims and runs chunks of the current job until none is left; called
 * and returns with P.lock held. */
static void run_chunks(void)
{
  while (P.next < P.chunks) {
    size_t c = P.next++;
    muonref_pool_body *body = P.body;
    void *ctx = P.ctx;
    P.active++;
    pthread_mutex_unlock(&P.lock);
    body(ctx, c);
    pthread_mutex_lock(&P.lock);
    if (--P.active == 0 && P.next >= P.chunks)
      pthread_cond_broadcast(&P.done);
  }
}

static void *worker(void *arg)
{
  (void)arg;
  pthread_mutex_lock(&P.lock);
  unsigned long seen = P.gen;
  for (;;) {
    while (P.gen == seen)
      pthread_cond_wait(&P.wake, &P.lock);
    seen = P.gen;
    run_chunks();
  }
  return NULL;
}

/* A forked child has the caller's thread only: it runs its passes alone. */
static void after_fork_child(void)
{
  pthread_mutex_init(&P.lock, NULL);
  pthread_mutex_init(&P.busy, NULL);
  pthread_cond_init(&P.wake, NULL);
  pthread_cond_init(&P.done, NULL);
  P.next = P.chunks = P.active = 0;
  P.threads = 1;
}

static void start(void)
{
  int want = openblas_get_num_threads();
  want = want < 1 ? 1 : want > MAX_THREADS ? MAX_THREADS : want;
  pthread_atfork(NULL, NULL, after_fork_child);
  pthread_attr_t attr;
  if (want < 2 || pthread_attr_init(&attr))
    return;
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  for (int k = 1; k < want; k++) {
    pthread_t t;
    if (pthread_create(&t, &attr, worker, NULL))
      break;
    P.threads++;
  }
  pthread_attr_destroy(&attr);
}

int muonref_pool_threads(void)
{
  pthread_once(&started, start);
  return P.threads;
}

size_t muonref_pool_chunks(size_t len, size_t cost)
{
  size_t work = len * cost, t = (size_t)muonref_pool_threads();
  if (t < 2 || work < MIN_WORK)
    return 1;
  size_t chunks = work / MIN_CHUNK;
  chunks = chunks > 4 * t ? 4 * t : chunks;
  return chunks > len ? len : chunks;
}

void muonref_pool_range(size_t len, size_t chunks, size_t c, size_t *lo, size_t *hi)
{
  size_t blocks = (len + 7) / 8;
  *lo = blocks * c / chunks * 8;
  *hi = c + 1 == chunks ? len : blocks * (c + 1) / chunks * 8;
  *lo = *lo > len ? len : *lo;
  *hi = *hi > len ? len : *hi;
}

void muonref_pool_for(size_t chunks, muonref_pool_body *body, void *ctx)
{
  if (chunks < 2 || muonref_pool_threads() < 2 || pthread_mutex_trylock(&P.busy)) {
    for (size_t c = 0; c < chunks; c++)
      body(ctx, c);
    return;
  }
  pthread_mutex_lock(&P.lock);
  P.body = body, P.ctx = ctx, P.next = 0, P.chunks = chunks;
  P.gen++;
  pthread_cond_broadcast(&P.wake);
  run_chunks();
  while (P.active)
    pthread_cond_wait(&P.done, &P.lock);
  P.chunks = 0;
  pthread_mutex_unlock(&P.lock);
  pthread_mutex_unlock(&P.busy);
}
