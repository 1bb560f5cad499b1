/* muonref: a set of vector files written as one (see gen_commit.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "vectors/format/files.h"
#include "vectors/gen/gen_commit.h"
#include "core/fail.h"

#define STAGE_PREFIX ".muonref-gen-"

/* Removes the files of the flat folder dir, then dir. */
static void remove_stage(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      char p[4400];
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
  if (d)
    closedir(d);
  rmdir(dir);
}

int muonref_gen_commit_begin(gen_commit *c, const char *out_dir, muonref_error *err)
{
  memset(c, 0, sizeof *c);
  c->lock_fd = -1;
  snprintf(c->dir, sizeof c->dir, "%s", out_dir);
  if (mkdir(out_dir, 0777) != 0 && errno != EEXIST)
    return muonref_fail(err, MUONREF_EIO, "%s: cannot create the output folder: %s", out_dir, strerror(errno));
  c->lock_fd = open(out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (c->lock_fd < 0)
    return muonref_fail(err, MUONREF_EIO, "%s: cannot open the output folder: %s", out_dir, strerror(errno));
  if (flock(c->lock_fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    close(c->lock_fd), c->lock_fd = -1;
    return muonref_fail(err, MUONREF_EIO, "%s: %s", out_dir, e == EWOULDBLOCK ? "another muonref gen is writing into "
                        "this folder (it holds a lock on it): run one at a time" : strerror(e));
  }
  /* with the lock held, a staging folder is an interrupted run's: removed */
  DIR *d = opendir(out_dir);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (!strncmp(e->d_name, STAGE_PREFIX, strlen(STAGE_PREFIX))) {
      char p[4400];
      struct stat sb;
      snprintf(p, sizeof p, "%.4000s/%s", out_dir, e->d_name);
      if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
        remove_stage(p);
    }
  if (d)
    closedir(d);
  return MUONREF_OK;
}

int muonref_gen_commit_stage(gen_commit *c, const json_t *j, const char *final, muonref_error *err)
{
  if (!c->stage[0]) {
    snprintf(c->stage, sizeof c->stage, "%.4000s/" STAGE_PREFIX "XXXXXX", c->dir);
    if (!mkdtemp(c->stage)) {
      int e = errno;
      c->stage[0] = '\0';
      return muonref_fail(err, MUONREF_EIO, "%s: cannot make a staging folder: %s", c->dir, strerror(e));
    }
  }
  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 64;
    char(*f)[4200] = realloc(c->final, cap * sizeof *f);
    if (!f)
      return muonref_fail(err, MUONREF_ENOMEM, "out of memory");
    c->final = f, c->cap = cap;
  }
  char path[4400];
  snprintf(path, sizeof path, "%s/%zu.json", c->stage, c->n);
  int st = muonref_json_write_atomic(j, path, 1, err);
  if (!st)
    snprintf(c->final[c->n++], sizeof c->final[0], "%s", final);
  return st;
}

/* rename(2) from, to; under MUONREF_TEST_HOOKS the k-th call fails with
 * EIO when MUONREF_TEST_GEN_FAIL_RENAME=k (tests/scripts/gen-atomic.sh). */
static int rename_hooked(const char *from, const char *to)
{
#ifdef MUONREF_TEST_HOOKS
  static long calls;
  const char *k = getenv("MUONREF_TEST_GEN_FAIL_RENAME");
  if (k && ++calls == atol(k))
    return errno = EIO, -1;
#endif
  return rename(from, to);
}

int muonref_gen_commit_finish(gen_commit *c, muonref_error *err)
{
  /* 1. only new names and regular files are replaced: checked before the first rename */
  for (size_t k = 0; k < c->n; k++) {
    struct stat sb;
    if (lstat(c->final[k], &sb) == 0 && !S_ISREG(sb.st_mode))
      return muonref_fail(err, MUONREF_EIO, "%s: not a regular file (a %s); muonref gen replaces only its own files "
                          "(no file was replaced)", c->final[k], S_ISDIR(sb.st_mode) ? "folder" : S_ISLNK(sb.st_mode) ?
                          "symbolic link" : "device or FIFO");
  }
  /* 2. the renames, with the usual interrupting signals held back until the set is whole or restored */
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT), sigaddset(&block, SIGTERM), sigaddset(&block, SIGHUP), sigaddset(&block, SIGQUIT);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  char *had = calloc(c->n + 1, 1);
  int st = had ? MUONREF_OK : muonref_fail(err, MUONREF_ENOMEM, "out of memory");
  size_t k = 0;
  for (; !st && k < c->n; k++) {
    char from[4400], keep[4400];
    snprintf(from, sizeof from, "%s/%zu.json", c->stage, k);
    snprintf(keep, sizeof keep, "%s/%zu.old", c->stage, k);
    struct stat sb;
    had[k] = lstat(c->final[k], &sb) == 0;
    if ((had[k] && link(c->final[k], keep) != 0) || rename_hooked(from, c->final[k]) != 0) {
      int e = errno;
      /* restore every name replaced so far: its old file, or none */
      size_t restored = 0;
      for (size_t j = 0; j < k; j++) {
        snprintf(keep, sizeof keep, "%s/%zu.old", c->stage, j);
        restored += had[j] ? rename(keep, c->final[j]) == 0 : unlink(c->final[j]) == 0;
      }
      st = muonref_fail(err, MUONREF_EIO, "%s: cannot rename into place: %s (the %zu files replaced before it were "
                        "restored%s: the old set is as it was)", c->final[k], strerror(e), k,
                        restored == k ? "" : " only in part");
    }
  }
  free(had);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return st;
}

void muonref_gen_commit_end(gen_commit *c)
{
  if (c->stage[0])
    remove_stage(c->stage);
  c->stage[0] = '\0';
  if (c->lock_fd >= 0)
    close(c->lock_fd); /* releases the lock */
  c->lock_fd = -1;
  free(c->final);
  c->final = NULL, c->n = c->cap = 0;
}
