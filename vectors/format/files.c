/* muonref: vector files on disk (see files.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "vectors/format/files.h"
#include "vectors/format/validate.h"
#include "core/fail.h"
#include "core/output.h"

typedef struct list { char **v; size_t n, cap; } list;

static int push(list *l, const char *s)
{
  if (l->n + 2 > l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    char **v = realloc(l->v, cap * sizeof *v);
    if (!v)
      return 0;
    l->v = v, l->cap = cap;
  }
  l->v[l->n++] = strdup(s);
  l->v[l->n] = NULL;
  return 1;
}

static int ends_with_json(const char *s)
{
  size_t n = strlen(s);
  return n > 5 && !strcmp(s + n - 5, ".json");
}

/* Whether the real path of p was seen already (records it if not): a file
 * named twice, or reached again through a symbolic link, is judged once,
 * and a link loop ends. */
static int seen_before(list *seen, const char *p)
{
  char *real = realpath(p, NULL);
  if (!real)
    return 0;
  for (size_t i = 0; i < seen->n; i++)
    if (!strcmp(seen->v[i], real)) {
      free(real);
      return 1;
    }
  push(seen, real);
  free(real);
  return 0;
}

static int walk(const char *path, list *l, list *seen, muonref_error *err)
{
  struct stat sb;
  if (stat(path, &sb) != 0)
    return muonref_fail(err, MUONREF_EIO, "%s: %s", path, strerror(errno));
  if (seen_before(seen, path))
    return MUONREF_OK;
  if (!S_ISDIR(sb.st_mode))
    return push(l, path) ? MUONREF_OK : muonref_fail(err, MUONREF_ENOMEM, "out of memory");
  struct dirent **names;
  int n = scandir(path, &names, NULL, alphasort);
  if (n < 0)
    return muonref_fail(err, MUONREF_EIO, "%s: %s", path, strerror(errno));
  int st = MUONREF_OK;
  for (int i = 0; i < n; i++) {
    const char *d = names[i]->d_name;
    if (!st && d[0] != '.') {
      char sub[4096];
      struct stat s2;
      if (snprintf(sub, sizeof sub, "%s/%s", path, d) >= (int)sizeof sub)
        st = muonref_fail(err, MUONREF_EIO, "%.200s.../%s: path longer than PATH_MAX (4096 bytes)", path, d);
      else if (stat(sub, &s2) == 0 && S_ISDIR(s2.st_mode))
        st = walk(sub, l, seen, err);
      else if (ends_with_json(d) && !seen_before(seen, sub))
        st = push(l, sub) ? MUONREF_OK : muonref_fail(err, MUONREF_ENOMEM, "out of memory");
    }
    free(names[i]);
  }
  free(names);
  return st;
}

int muonref_files_collect(char *const *paths, int n, char ***out, size_t *count, muonref_error *err)
{
  list l = {0}, seen = {0};
  if (!(l.v = calloc(1, sizeof *l.v)) || !(seen.v = calloc(1, sizeof *seen.v))) {
    free(l.v);
    return muonref_fail(err, MUONREF_ENOMEM, "out of memory");
  }
  l.cap = seen.cap = 1;
  for (int i = 0; i < n; i++) {
    int st = walk(paths[i], &l, &seen, err);
    if (st) {
      muonref_files_free(l.v);
      muonref_files_free(seen.v);
      return st;
    }
  }
  muonref_files_free(seen.v);
  *out = l.v;
  *count = l.n;
  return MUONREF_OK;
}

void muonref_files_free(char **files)
{
  for (size_t i = 0; files && files[i]; i++)
    free(files[i]);
  free(files);
}

#ifndef MUONREF_VECTORS_DIR
#define MUONREF_VECTORS_DIR "/usr/local/share/muonref/vectors"
#endif

/* The installed set: $MUONREF_VECTORS_DIR when set and not empty (a staged
   `make install DESTDIR=...` or a relocated tree, whose files are not where
   configure put them), else the configured $(pkgdatadir)/vectors. */
const char *muonref_default_vectors(muonref_error *err)
{
  struct stat sb;
  if (stat("vectors", &sb) == 0 && S_ISDIR(sb.st_mode))
    return "vectors";
  const char *env = getenv("MUONREF_VECTORS_DIR");
  const char *installed = env && *env ? env : MUONREF_VECTORS_DIR;
  if (stat(installed, &sb) == 0 && S_ISDIR(sb.st_mode))
    return installed;
  muonref_fail(err, MUONREF_EIO,
               "no vectors given, and neither ./vectors nor the installed set %s%s is a folder "
               "(name vector files or folders, or run `make install`)", installed,
               installed == env ? " ($MUONREF_VECTORS_DIR)" : "");
  return NULL;
}

const char *muonref_basename(const char *path)
{
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

json_t *muonref_vector_file_load(const char *path, muonref_error *err)
{
  json_t *j = muonref_json_load_strict(path, err);
  if (j && muonref_vector_file_validate(j, path, err)) {
    json_decref(j);
    return NULL;
  }
  return j;
}

int muonref_json_write_atomic(const json_t *j, const char *path, int indent, muonref_error *err)
{
  size_t flags = JSON_REAL_PRECISION(17) | (indent ? JSON_INDENT(indent) : JSON_COMPACT);
  char *text = json_dumps(j, flags | JSON_ENCODE_ANY);
  if (!text)
    return muonref_fail(err, MUONREF_ENOMEM, "%s: out of memory composing the JSON text", path);
  size_t n = strlen(text);
  char *line = realloc(text, n + 2);
  if (!line) {
    free(text);
    return muonref_fail(err, MUONREF_ENOMEM, "%s: out of memory composing the JSON text", path);
  }
  line[n] = '\n', line[n + 1] = '\0';
  int st = muonref_output_write(path, line, n + 1, NULL, NULL, 0, err);
  free(line);
  return st;
}
