/* muonref fuzz target: the TAP writer (vectors/judge/report_tap.c) and the text
 * report's escaper (vectors/format/escape.h) with the strings of a results or
 * vector file as the input gives them (fuzz_fields.h).  The TAP stream,
 * version 13 or 14 by the flag byte, must be UTF-8 with no unsafe
 * character, and every line of it one of TAP's: the version, a comment, a
 * test point "ok N - D" / "not ok N - D" whose description holds no
 * unescaped '#' (no directive a port could forge) but the " # TODO ..."
 * of a case the baseline lists (flag bit 7: a failing one is known, a
 * passing one fixed; the explanation itself holds none), a YAML block line
 * between "  ---" and "  ..." whose value parses as a JSON string (a
 * YAML double-quoted scalar), "Bail out! ...", and the plan "1..N" last,
 * N the number of test points.  The text escaper's output holds no control
 * byte at all (no forged line, no terminal escape). */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vectors/format/escape.h"
#include "vectors/judge/report.h"
#include "fuzz_fields.h"

/* Whether the description d (up to its end) holds a '#' not escaped by '\'. */
static int bare_hash(const char *d, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    if (d[i] == '\\' && i + 1 < n)
      i++;
    else if (d[i] == '#')
      return 1;
  }
  return 0;
}

/* The first '#' of d not escaped by '\' (NULL when none). */
static const char *first_bare_hash(const char *d, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    if (d[i] == '\\' && i + 1 < n)
      i++;
    else if (d[i] == '#')
      return d + i;
  }
  return NULL;
}

/* listed: whether the test points carry the baseline's TODO directive. */
static void check_stream(const char *s, size_t n, long points, int version, int listed)
{
  fuzz_assert_clean(s, n, "\n");
  long seen = 0;
  int yaml = 0, plan = 0, first = 1, bail = 0;
  for (size_t at = 0; at < n;) {
    const char *line = s + at, *nl = memchr(line, '\n', n - at);
    if (!nl)
      abort(); /* every line ends */
    size_t len = (size_t)(nl - line);
    at += len + 1;
    char head[32];
    snprintf(head, sizeof head, "TAP version %d", version);
    if (first) {
      if (len != strlen(head) || memcmp(line, head, len))
        abort();
      first = 0;
    } else if (yaml) {
      if (len == 5 && !memcmp(line, "  ...", 5))
        yaml = 0;
      else {
        const char *colon = memchr(line, ':', len);
        if (len < 3 || memcmp(line, "  ", 2) || !colon || colon + 2 > line + len)
          abort();
        json_error_t je;
        json_t *v = json_loadb(colon + 2, len - (size_t)(colon + 2 - line), JSON_DECODE_ANY, &je);
        if (!v)
          abort(); /* not a YAML double-quoted scalar (nor an integer) */
        json_decref(v);
      }
    } else if (len == 5 && !memcmp(line, "  ---", 5)) {
      yaml = 1;
    } else if (len >= 1 && line[0] == '#') {
    } else if (len >= 10 && !memcmp(line, "Bail out! ", 10)) {
      bail = 1;
    } else if (len > 3 && !memcmp(line, "1..", 3)) {
      if (strtol(line + 3, NULL, 10) != seen || plan++)
        abort();
    } else {
      int ok = len >= 3 && !memcmp(line, "ok ", 3), nok = len >= 7 && !memcmp(line, "not ok ", 7);
      if (!ok && !nok)
        abort(); /* a line TAP does not know */
      char *end;
      long num = strtol(line + (ok ? 3 : 7), &end, 10);
      if (num != ++seen || (size_t)(end - line) + 3 > len || memcmp(end, " - ", 3))
        abort();
      const char *d = end + 3, *hash = first_bare_hash(d, len - (size_t)(d - line));
      if (listed) { /* exactly our " # TODO ", its explanation holding no second directive */
        if (!hash || hash == d || hash[-1] != ' ' || (size_t)(line + len - hash) < 7 || memcmp(hash, "# TODO ", 7) ||
            bare_hash(hash + 7, (size_t)(line + len - hash) - 7) || bare_hash(d, (size_t)(hash - d)))
          abort();
      } else if (hash)
        abort(); /* a directive a port's string would forge */
    }
  }
  if (yaml || seen != points || (!bail && !plan))
    abort(); /* a stream ends in its plan, or in "Bail out!" */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_fields x;
  fuzz_fields_split(&x, data, size);
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  if (!f)
    return 0;
  muonref_tap t;
  int version = x.flags & 1 ? 13 : 14;
  muonref_tap_begin(&t, f, x.f[F_IMPL], version);
  long points = 1 + (long)((x.flags >> 1) % 3);
  for (long k = 0; k < points; k++) {
    int pass = (int)((x.flags >> (3 + k)) & 1), listed = (int)((x.flags >> 7) & 1);
    muonref_case_verdict v = {x.f[F_FILE], k + 1, x.f[F_PROFILE], x.f[F_AREA], x.f[F_KIND], x.f[F_COMMENT],
                              x.f[F_FLAGS], pass, x.f[F_MESSAGE], x.f[F_DIAGNOSIS], 0.5, listed && !pass,
                              listed && pass, listed ? x.f[F_WHY] : "", pass ? x.f[F_NOTE] : ""};
    muonref_tap_case(&t, &v);
  }
  if (x.flags & 0x40)
    muonref_tap_bail(&t, x.f[F_MESSAGE]);
  else
    muonref_tap_end(&t);
  fclose(f);
  check_stream(buf, n, points, version, (int)((x.flags >> 7) & 1));
  free(buf);
  /* the text report's escaper: no control byte at all, whatever the input (NUL bytes included) */
  buf = NULL, n = 0;
  f = open_memstream(&buf, &n);
  if (f) {
    muonref_escape_write(f, (const char *)data, size, MUONREF_ESCAPE_TEXT);
    fclose(f);
    fuzz_assert_clean(buf, n, "");
    free(buf);
  }
  fuzz_fields_free(&x);
  return 0;
}
