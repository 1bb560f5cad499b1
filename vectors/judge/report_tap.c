/* muonref: TAP version 14 (or 13) report of a check run (see report.h).
 * The format: https://testanything.org/tap-version-14-specification.html */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vectors/format/escape.h"
#include "vectors/judge/report.h"

/* A test point's description (escape.h, TAP mode): '#' and '\' escaped
 * ("\#", "\\": TAP 14, "Escaping"), tab and line breaks as spaces (a
 * description is one line), other control characters, noncharacters and
 * invalid UTF-8 as U+FFFD (as in the JUnit report). */
static void description(FILE *f, const char *s)
{
  muonref_escape_fputs(f, s, MUONREF_ESCAPE_TAP);
}

/* One "key: value" line of a YAML diagnostic block, the value as a JSON
 * string (a valid YAML double-quoted scalar): escaped for YAML first
 * (escape.h: no invalid UTF-8, no character YAML forbids; the C0 controls
 * as JSON's \uXXXX). */
static void yaml_string(FILE *f, const char *key, const char *value)
{
  char *clean = muonref_escape_dup(value ? value : "", value ? strlen(value) : 0, MUONREF_ESCAPE_YAML);
  json_t *s = clean ? json_string(clean) : NULL;
  char *text = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
  fprintf(f, "  %s: %s\n", key, text ? text : "\"(out of memory)\"");
  free(text);
  free(clean);
  json_decref(s);
}

void muonref_tap_begin(muonref_tap *t, FILE *out, const char *impl, int version)
{
  t->out = out;
  t->n = 0;
  t->version = version == 13 ? 13 : 14;
  fprintf(out, "TAP version %d\n# muonref check: ", t->version);
  description(out, impl);
  fputc('\n', out);
  fflush(out);
}

void muonref_tap_case(muonref_tap *t, const muonref_case_verdict *v)
{
  FILE *f = t->out;
  int listed = v->known || v->fixed; /* in the baseline: a TODO */
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
  if (listed) {
    fputs(" # TODO ", f);
    description(f, v->why);
  }
  fputc('\n', f);
  if (!v->pass || (v->note && v->note[0])) {
    fputs("  ---\n", f);
    if (v->pass)
      yaml_string(f, "note", v->note);
    else {
      yaml_string(f, "message", v->message);
      yaml_string(f, "diagnosis", v->diagnosis);
    }
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
  description(t->out, why); /* one line: line breaks as spaces */
  fputc('\n', t->out);
  fflush(t->out);
}
