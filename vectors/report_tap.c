/* muonref: TAP version 14 report of a check run (see report.h).  The
 * format: https://testanything.org/tap-version-14-specification.html */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"

/* A test point's description: '#' and '\' escaped ("\#", "\\": TAP 14,
 * "Escaping"), line breaks as spaces (a description is one line), other
 * control characters as U+FFFD (as in the JUnit report). */
static void description(FILE *f, const char *s)
{
  for (; *s; s++) {
    if (*s == '#' || *s == '\\')
      fputc('\\', f), fputc(*s, f);
    else if (*s == '\n' || *s == '\r')
      fputc(' ', f);
    else if ((unsigned char)*s < 0x20 || *s == 0x7f)
      fputs("\xef\xbf\xbd", f);
    else
      fputc(*s, f);
  }
}

/* One "key: value" line of a YAML diagnostic block, the value as a JSON
 * string (a valid YAML double-quoted scalar). */
static void yaml_string(FILE *f, const char *key, const char *value)
{
  json_t *s = json_string(value);
  char *text = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
  fprintf(f, "  %s: %s\n", key, text ? text : "\"(not representable)\"");
  free(text);
  json_decref(s);
}

void muonref_tap_begin(muonref_tap *t, FILE *out, const char *impl)
{
  t->out = out;
  t->n = 0;
  fputs("TAP version 14\n# muonref check: ", out);
  description(out, impl);
  fputc('\n', out);
  fflush(out);
}

void muonref_tap_case(muonref_tap *t, const muonref_case_verdict *v)
{
  FILE *f = t->out;
  fprintf(f, "%s %ld - ", v->pass ? "ok" : "not ok", ++t->n);
  description(f, v->profile);
  fputc('.', f);
  description(f, v->area);
  fputc(' ', f);
  description(f, v->file);
  fprintf(f, "\\#%lld", v->tc_id);
  if (v->comment[0]) {
    fputc(' ', f);
    description(f, v->comment);
  }
  fputc('\n', f);
  if (!v->pass) {
    fputs("  ---\n", f);
    yaml_string(f, "message", v->message);
    yaml_string(f, "diagnosis", v->diagnosis);
    yaml_string(f, "file", v->file);
    fprintf(f, "  tcId: %lld\n", v->tc_id);
    yaml_string(f, "kind", v->kind);
    yaml_string(f, "flags", v->flags);
    fputs("  ...\n", f);
  }
  fflush(f);
}

void muonref_tap_end(muonref_tap *t)
{
  fprintf(t->out, "1..%ld\n", t->n);
  fflush(t->out);
}

void muonref_tap_bail(muonref_tap *t, const char *why)
{
  fputs("Bail out! ", t->out);
  for (const char *s = why; *s && *s != '\n'; s++)
    fputc(*s, t->out);
  fputc('\n', t->out);
  fflush(t->out);
}
