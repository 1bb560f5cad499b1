/* muonref: vector releases and the cases that differ between two (release.h). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "core/fail.h"
#include "vectors/format/escape.h"
#include "vectors/format/files.h"
#include "vectors/format/release.h"

int muonref_release_valid(const char *s)
{
  if (!s)
    return 0;
  for (int i = 0; i < 8; i++)
    if (i == 4 || i == 7 ? s[i] != '.' : !isdigit((unsigned char)s[i]))
      return 0;
  size_t n = strspn(s + 8, "0123456789");
  return n > 0 && s[8 + n] == '\0';
}

void muonref_release_merge(char *set, size_t n, const char *file_release)
{
  const char *r = file_release ? file_release : "none";
  if (!set[0])
    snprintf(set, n, "%s", r);
  else if (strcmp(set, r))
    snprintf(set, n, "mixed");
}

/* One folder's files: rel[i] (the path under the folder) and doc[i]. */
typedef struct side {
  char **files;
  size_t count;
  json_t **docs;
  char release[64];
} side;

static void side_free(side *s)
{
  for (size_t i = 0; s->docs && i < s->count; i++)
    json_decref(s->docs[i]);
  free(s->docs);
  muonref_files_free(s->files);
}

static int by_path(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int side_load(side *s, const char *dir, muonref_error *err)
{
  char *paths[1] = {(char *)dir};
  int st = muonref_files_collect(paths, 1, &s->files, &s->count, err);
  if (!st) /* one order for both folders (they differ only in their common prefix): the merge below needs it */
    qsort(s->files, s->count, sizeof *s->files, by_path);
  if (!st && !(s->docs = calloc(s->count + 1, sizeof *s->docs)))
    st = muonref_fail(err, MUONREF_ENOMEM, "out of memory");
  for (size_t i = 0; !st && i < s->count; i++) {
    if (!(s->docs[i] = muonref_vector_file_load(s->files[i], err)))
      st = err->status;
    else
      muonref_release_merge(s->release, sizeof s->release,
                            json_string_value(json_object_get(s->docs[i], "release")));
  }
  return st;
}

/* The path of file under dir (the files of a folder all start with it). */
static const char *under(const char *file, const char *dir)
{
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/')
    n--;
  return !strncmp(file, dir, n) && file[n] == '/' ? file + n + 1 : file;
}

/* "tcId" -> test object for every test of the file doc (NULL: none). */
static json_t *tests_by_id(const json_t *doc)
{
  json_t *m = json_object();
  const json_t *groups = json_object_get(doc, "testGroups");
  for (size_t g = 0; m && g < json_array_size(groups); g++) {
    const json_t *tests = json_object_get(json_array_get(groups, g), "tests");
    for (size_t t = 0; t < json_array_size(tests); t++) {
      json_t *test = json_array_get(tests, t);
      char key[32];
      snprintf(key, sizeof key, "%lld", (long long)json_integer_value(json_object_get(test, "tcId")));
      json_object_set(m, key, test);
    }
  }
  return m;
}

static int by_number(const void *a, const void *b)
{
  long long x = *(const long long *)a, y = *(const long long *)b;
  return (x > y) - (x < y);
}

static void line(FILE *out, const char *what, const char *rel, const char *id, const json_t *test)
{
  const char *comment = json_string_value(json_object_get(test, "comment"));
  char *c = muonref_escape_dup(comment ? comment : "", strlen(comment ? comment : ""), MUONREF_ESCAPE_TEXT);
  fprintf(out, "%-7s %s tcId %s: %s\n", what, rel, id, c ? c : "");
  free(c);
}

/* s with every `from` (not empty) as `to`, malloc'd; NULL when out of memory. */
static char *replaced(const char *s, const char *from, const char *to)
{
  size_t nf = strlen(from), nt = strlen(to), k = 0;
  for (const char *p = strstr(s, from); p; p = strstr(p + nf, from))
    k++;
  char *out = malloc(strlen(s) + k * nt + 1), *w = out;
  for (const char *p; out && (p = strstr(s, from)); s = p + nf)
    memcpy(w, s, (size_t)(p - s)), w += p - s, memcpy(w, to, nt), w += nt;
  if (out)
    strcpy(w, s);
  return out;
}

/* Whether test y (of profile pn's file) is test x (of po's) but for its comment naming pn where x's names
 * po ("[profile emerging@0.3: ...]"); pn NULL: equal as they are. */
static int same_case(const json_t *x, const json_t *y, const char *po, const char *pn)
{
  if (json_equal(x, y))
    return 1;
  const char *cy = json_string_value(json_object_get(y, "comment"));
  if (!pn || !cy)
    return 0;
  char from[96], to[96];
  snprintf(from, sizeof from, "profile %s", pn), snprintf(to, sizeof to, "profile %s", po);
  char *c = replaced(cy, from, to);
  if (!c)
    return 0;
  json_t *y2 = json_deep_copy(y);
  json_object_set_new(y2, "comment", json_string(c));
  int same = json_equal(x, y2);
  json_decref(y2), free(c);
  return same;
}

/* The cases of one file in old (o, NULL: a new file) and new (n, NULL: a removed file); po, pn: the two
 * profiles where two profiles' files are compared (same_case), else NULL. */
static int diff_file(const char *rel, const json_t *o, const json_t *n, const char *po, const char *pn, FILE *out,
                     muonref_release_counts *k, muonref_error *err)
{
  json_t *a = o ? tests_by_id(o) : json_object(), *b = n ? tests_by_id(n) : json_object();
  size_t cap = (a ? json_object_size(a) : 0) + (b ? json_object_size(b) : 0), m = 0;
  long long *ids = malloc((cap + 1) * sizeof *ids);
  if (!a || !b || !ids) {
    json_decref(a), json_decref(b), free(ids);
    return muonref_fail(err, MUONREF_ENOMEM, "out of memory");
  }
  const char *key;
  json_t *v;
  json_object_foreach(a, key, v) ids[m++] = strtoll(key, NULL, 10);
  json_object_foreach(b, key, v) if (!json_object_get(a, key)) ids[m++] = strtoll(key, NULL, 10);
  qsort(ids, m, sizeof *ids, by_number);
  for (size_t i = 0; i < m; i++) {
    char id[32];
    snprintf(id, sizeof id, "%lld", ids[i]);
    const json_t *x = json_object_get(a, id), *y = json_object_get(b, id);
    if (!x)
      line(out, "added", rel, id, y), k->added++;
    else if (!y)
      line(out, "removed", rel, id, x), k->removed++;
    else if (!same_case(x, y, po, pn))
      line(out, "changed", rel, id, y), k->changed++;
  }
  k->files_added += !o;
  k->files_removed += !n;
  json_decref(a), json_decref(b), free(ids);
  return MUONREF_OK;
}

/* The one profile every file of s names, or NULL (several, or none). */
static const char *one_profile(const side *s)
{
  const char *p = NULL;
  for (size_t i = 0; i < s->count; i++) {
    const char *q = json_string_value(json_object_get(s->docs[i], "profile"));
    if (!q || (p && strcmp(p, q)))
      return NULL;
    p = q;
  }
  return p;
}

/* What file i of s is paired by: its path under dir, or with by_area its
 * "area" (two profiles' folders: emerging's and emerging@0.3's). */
static const char *pair_key(const side *s, size_t i, const char *dir, int by_area)
{
  if (i >= s->count)
    return NULL;
  const char *a = by_area ? json_string_value(json_object_get(s->docs[i], "area")) : NULL;
  return a ? a : under(s->files[i], dir);
}

int muonref_release_diff(const char *old_dir, const char *new_dir, FILE *out, muonref_release_counts *counts,
                         muonref_error *err)
{
  side o = {0}, n = {0};
  memset(counts, 0, sizeof *counts);
  int st = side_load(&o, old_dir, err);
  if (!st)
    st = side_load(&n, new_dir, err);
  if (!st)
    fprintf(out, "release %s -> %s\n", o.release[0] ? o.release : "none", n.release[0] ? n.release : "none");
  /* two folders of one profile each, and two profiles (a release and its profile): the files are
   * paired by area, each side's sorted by it as by their names (PROFILE_AREA.json) */
  const char *po = st ? NULL : one_profile(&o), *pn = st ? NULL : one_profile(&n);
  int by_area = po && pn && strcmp(po, pn);
  if (by_area)
    fprintf(out, "profile %s -> %s: the files paired by area\n", po, pn);
  /* both lists are sorted by their path under the folder: a merge of the two */
  size_t i = 0, j = 0;
  while (!st && (i < o.count || j < n.count)) {
    const char *ko = pair_key(&o, i, old_dir, by_area), *kn = pair_key(&n, j, new_dir, by_area);
    const char *ro = i < o.count ? under(o.files[i], old_dir) : NULL;
    const char *rn = j < n.count ? under(n.files[j], new_dir) : NULL;
    int c = !ko ? 1 : !kn ? -1 : strcmp(ko, kn);
    if (c < 0)
      st = diff_file(ro, o.docs[i++], NULL, NULL, NULL, out, counts, err);
    else if (c > 0)
      st = diff_file(rn, NULL, n.docs[j++], NULL, NULL, out, counts, err);
    else
      st = diff_file(rn, o.docs[i++], n.docs[j++], by_area ? po : NULL, by_area ? pn : NULL, out, counts, err);
  }
  side_free(&o);
  side_free(&n);
  return st;
}
