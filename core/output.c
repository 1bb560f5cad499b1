/* muonref: writing a whole file without destroying what it replaces (see
 * output.h). */
#define _GNU_SOURCE /* renameat2, RENAME_NOREPLACE (glibc 2.28) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/output.h"
#include "core/fail.h"

#define REFUSED_KINDS "muonref writes to a regular file, a new name, a FIFO or a character device"

static int failed(muonref_error *err, const char *path, const char *label, const char *what, const char *reason)
{
  return muonref_fail(err, MUONREF_EIO, "%s: cannot write%s%s: %s", label ? label : path, what ? " " : "",
                      what ? what : "", reason);
}

/* Writes all n bytes to fd (EINTR and short writes retried); 0 or errno. */
static int write_all(int fd, const unsigned char *p, size_t n)
{
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return w < 0 ? errno : EIO;
    p += w, n -= (size_t)w;
  }
  return 0;
}

/* The descriptor a path names by itself (/dev/stdout, /dev/stderr,
 * /dev/fd/N, /proc/self/fd/N), or -1. */
static int named_fd(const char *path)
{
  if (!strcmp(path, "/dev/stdout"))
    return 1;
  if (!strcmp(path, "/dev/stderr"))
    return 2;
  const char *num = !strncmp(path, "/dev/fd/", 8) ? path + 8 : !strncmp(path, "/proc/self/fd/", 14) ? path + 14 : NULL;
  if (!num || *num < '0' || *num > '9')
    return -1;
  char *end;
  long v = strtol(num, &end, 10);
  return *end || v > 1 << 20 ? -1 : (int)v;
}

/* Opens path (a FIFO, character device, or a symbolic link to one or to a
 * regular file) and writes through it. */
static int write_through(const char *path, const void *data, size_t n, int trunc, const char *label, const char *what,
                         muonref_error *err)
{
  int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (trunc ? O_TRUNC : 0));
  if (fd < 0)
    return failed(err, path, label, what, strerror(errno));
  int e = write_all(fd, data, n);
  if (close(fd) != 0 && !e && errno != EINTR)
    e = errno;
  return e ? failed(err, path, label, what, strerror(e)) : MUONREF_OK;
}

/* Renames tmp to path when path does not exist (never over a file that
 * appeared meanwhile).  0 or errno (EEXIST: something appeared). */
static int rename_new(const char *tmp, const char *path)
{
#ifdef RENAME_NOREPLACE
  if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) == 0)
    return 0;
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
    return errno;
#endif
  /* no RENAME_NOREPLACE here: link(2) refuses an existing name too */
  if (link(tmp, path) == 0)
    return unlink(tmp), 0;
  if (errno != EPERM && errno != ENOSYS && errno != ENOTSUP)
    return errno;
  return rename(tmp, path) == 0 ? 0 : errno; /* a file system without hard links */
}

/* A temporary file beside path, written and renamed into place; old: the
 * regular file replaced (its mode and owner kept), or NULL for a new name. */
static int write_renamed(const char *path, const void *data, size_t n, const struct stat *old, int flags,
                         const char *label, const char *what, muonref_error *err)
{
  size_t len = strlen(path);
  char *tmp = malloc(len + 16);
  if (!tmp)
    return muonref_fail(err, MUONREF_ENOMEM, "out of memory");
  snprintf(tmp, len + 16, "%s.muonref-XXXXXX", path);
  int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    free(tmp);
    return failed(err, path, label, what, strerror(e));
  }
  if (old) {
    if (fchown(fd, old->st_uid, old->st_gid) != 0) { /* allowed to root or the owner: kept where possible */
    }
    fchmod(fd, old->st_mode & 07777);
  } else {
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask); /* mkostemp made it 0600: a new file's usual mode */
  }
  int e = write_all(fd, data, n);
  if (!e && (flags & MUONREF_OUTPUT_FSYNC) && fsync(fd) != 0)
    e = errno;
  if (close(fd) != 0 && !e && errno != EINTR)
    e = errno;
  if (!e)
    e = old ? (rename(tmp, path) == 0 ? 0 : errno) : rename_new(tmp, path);
  if (e) {
    unlink(tmp);
    free(tmp);
    return failed(err, path, label, what,
                  e == EEXIST && !old ? "a file of that name appeared while it was written (not replaced)"
                                      : strerror(e));
  }
  free(tmp);
  return MUONREF_OK;
}

static const char *refused_kind(mode_t m)
{
  return S_ISDIR(m) ? "a folder" : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a file";
}

int muonref_output_write(const char *path, const void *data, size_t n, const char *label, const char *what, int flags,
                         muonref_error *err)
{
  char reason[200];
  if (!path || !path[0])
    return muonref_fail(err, MUONREF_EOPTION, "%s: an output path must not be %s", label ? label : "output",
                        path ? "empty" : "NULL");
  int fd = named_fd(path);
  if (fd >= 0) {
    if (fd == 1)
      fflush(stdout);
    if (fd == 2)
      fflush(stderr);
    int e = fcntl(fd, F_GETFD) < 0 ? EBADF : write_all(fd, data, n);
    return e ? failed(err, path, label, what, strerror(e)) : MUONREF_OK;
  }
  struct stat ls, ts;
  if (lstat(path, &ls) != 0) {
    if (errno != ENOENT)
      return failed(err, path, label, what, strerror(errno));
    return write_renamed(path, data, n, NULL, flags, label, what, err);
  }
  if (S_ISREG(ls.st_mode) && faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0 && errno == EACCES)
    /* as `>` would: a file its mode does not let us write is not replaced either (rename(2) would) */
    return failed(err, path, label, what, "Permission denied (the file is not writable: muonref does not replace it)");
  if (S_ISREG(ls.st_mode))
    return write_renamed(path, data, n, &ls, flags, label, what, err);
  if (S_ISFIFO(ls.st_mode) || S_ISCHR(ls.st_mode))
    return write_through(path, data, n, 0, label, what, err);
  if (S_ISLNK(ls.st_mode)) {
    if (stat(path, &ts) != 0) {
      snprintf(reason, sizeof reason, "a symbolic link to %s; muonref creates no file through a link",
               errno == ENOENT ? "a missing file" : strerror(errno));
      return failed(err, path, label, what, reason);
    }
    if (S_ISREG(ts.st_mode) || S_ISFIFO(ts.st_mode) || S_ISCHR(ts.st_mode))
      return write_through(path, data, n, S_ISREG(ts.st_mode), label, what, err);
    snprintf(reason, sizeof reason, "a symbolic link to %s; " REFUSED_KINDS, refused_kind(ts.st_mode));
    return failed(err, path, label, what, reason);
  }
  snprintf(reason, sizeof reason, "%s; " REFUSED_KINDS, refused_kind(ls.st_mode));
  return failed(err, path, label, what, reason);
}

FILE *muonref_output_open(muonref_output *o)
{
  o->buf = NULL, o->n = 0;
  o->f = open_memstream(&o->buf, &o->n);
  return o->f;
}

int muonref_output_commit(muonref_output *o, const char *path, const char *label, const char *what, int flags,
                          muonref_error *err)
{
  int bad = !o->f || ferror(o->f);
  if (o->f && fclose(o->f) != 0)
    bad = 1;
  o->f = NULL;
  int st = bad ? muonref_fail(err, MUONREF_ENOMEM, "%s: out of memory composing %s", label ? label : path,
                              what ? what : "the file")
               : muonref_output_write(path, o->buf, o->n, label, what, flags, err);
  free(o->buf);
  o->buf = NULL, o->n = 0;
  return st;
}

void muonref_output_discard(muonref_output *o)
{
  if (o->f)
    fclose(o->f);
  free(o->buf);
  o->f = NULL, o->buf = NULL, o->n = 0;
}
