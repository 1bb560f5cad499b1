/* muonref: the baseline (expected-failures) file (see baseline.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vectors/judge/baseline.h"
#include "core/fail.h"

#define LINE_MAX_BYTES 4096

/* The first line of a file muonref 0.1.0's --write-failures wrote: its
 * entries' text is the case's comment, not a reason. */
static int legacy_header(const char *line)
{
  static const char HEAD[] = "# muonref check expected failures of ";
  static const char TAIL[] = ": one FILE#TCID per line (--baseline reads it)";
  size_t n = strlen(line), t = sizeof TAIL - 1;
  while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
    n--;
  return !strncmp(line, HEAD, sizeof HEAD - 1) && n >= t && !strncmp(line + n - t, TAIL, t);
}

static char *trim(char *s)
{
  while (isspace((unsigned char)*s))
    s++;
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1]))
    s[--n] = '\0';
  return s;
}

/* Splits text (trimmed) into a reason and a trailing URL word. */
static void reason_url(char *text, const char **reason, const char **url)
{
  char *last = strrchr(text, ' '), *tab = strrchr(text, '\t');
  last = tab > last ? tab : last;
  char *word = last ? last + 1 : text;
  *url = "";
  if (!strncmp(word, "https://", 8) || !strncmp(word, "http://", 7)) {
    *url = word;
    if (last)
      *last = '\0';
    else
      text = word + strlen(word); /* the URL alone: no reason */
  }
  *reason = trim(text);
}

static int parse_line(char *line, long n, int legacy, const char *path, json_t *out, muonref_error *err)
{
  char *s = trim(line);
  if (!*s || *s == '#')
    return MUONREF_OK;
  char *rest = s;
  while (*rest && !isspace((unsigned char)*rest))
    rest++;
  if (*rest)
    *rest++ = '\0';
  char *hash = strrchr(s, '#'), *end = NULL;
  long long id = hash ? strtoll(hash + 1, &end, 10) : 0;
  if (!hash || hash == s || hash[1] == '\0' || !isdigit((unsigned char)hash[1]) || !end || *end || id < 1)
    return muonref_fail(err, MUONREF_EFORMAT,
                        "%s:%ld: expected FILE#TCID [REASON] [URL] (e.g. nemo_momentum.json#3 fails on this "
                        "platform https://example.org/issues/1), got \"%.200s\"", path, n, s);
  char key[600];
  snprintf(key, sizeof key, "%.*s#%lld", (int)(hash - s) < 500 ? (int)(hash - s) : 500, s, id);
  const json_t *seen = json_object_get(out, key);
  if (seen)
    return muonref_fail(err, MUONREF_EFORMAT, "%s:%ld: %s is listed twice (first on line %lld)", path, n, key,
                        (long long)json_integer_value(json_object_get(seen, "line")));
  const char *reason = "", *url = "";
  if (!legacy)
    reason_url(trim(rest), &reason, &url);
  json_t *e = json_pack("{s:s,s:s,s:I}", "reason", reason, "url", url, "line", (json_int_t)n);
  if (!e || json_object_set_new(out, key, e))
    return muonref_fail(err, MUONREF_ENOMEM, "%s: out of memory", path);
  return MUONREF_OK;
}

int muonref_baseline_read(const char *path, json_t **out, muonref_error *err)
{
  *out = NULL;
  FILE *f = fopen(path, "r");
  if (!f)
    return muonref_fail(err, MUONREF_EIO, "%s: %s", path, strerror(errno));
  json_t *b = json_object();
  char line[LINE_MAX_BYTES];
  int st = b ? MUONREF_OK : muonref_fail(err, MUONREF_ENOMEM, "%s: out of memory", path);
  int legacy = 0;
  for (long n = 1; !st && fgets(line, sizeof line, f); n++) {
    size_t len = strlen(line);
    if (len == sizeof line - 1 && line[len - 1] != '\n' && !feof(f)) {
      st = muonref_fail(err, MUONREF_EFORMAT, "%s:%ld: a line longer than %d bytes", path, n, LINE_MAX_BYTES - 1);
      break;
    }
    if (n == 1)
      legacy = legacy_header(line);
    st = parse_line(line, n, legacy, path, b, err);
  }
  if (!st && ferror(f))
    st = muonref_fail(err, MUONREF_EIO, "%s: %s", path, strerror(errno));
  fclose(f);
  if (st)
    json_decref(b);
  else
    *out = b;
  return st;
}

const char *muonref_baseline_why(const json_t *entry, char *buf, size_t n)
{
  const char *reason = json_string_value(json_object_get(entry, "reason"));
  const char *url = json_string_value(json_object_get(entry, "url"));
  snprintf(buf, n, "known failure: %s%s%s%s", reason && *reason ? reason : "no reason given",
           url && *url ? " (" : "", url && *url ? url : "", url && *url ? ")" : "");
  return buf;
}
