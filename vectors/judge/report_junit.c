/* muonref: JUnit XML report of a check run (see report.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vectors/format/escape.h"
#include "vectors/judge/report.h"
#include "core/fail.h"
#include "core/output.h"

static char *dup_or_empty(const char *s)
{
  return strdup(s ? s : "");
}

int muonref_case_log_add(muonref_case_log *log, const muonref_case_verdict *v, double seconds, muonref_error *err)
{
  if (log->n == log->cap) {
    size_t cap = log->cap ? 2 * log->cap : 64;
    muonref_case_record *p = realloc(log->v, cap * sizeof *p);
    if (!p)
      return muonref_fail(err, MUONREF_ENOMEM, "out of memory keeping the verdicts for the JUnit report");
    log->v = p, log->cap = cap;
  }
  muonref_case_record r = {dup_or_empty(v->file), dup_or_empty(v->profile), dup_or_empty(v->area),
                           dup_or_empty(v->kind), dup_or_empty(v->comment), dup_or_empty(v->flags),
                           dup_or_empty(v->message), dup_or_empty(v->diagnosis), dup_or_empty(v->why),
                           dup_or_empty(v->note), v->tc_id, v->pass, v->known, v->fixed, seconds};
  if (!r.file || !r.profile || !r.area || !r.kind || !r.comment || !r.flags || !r.message || !r.diagnosis ||
      !r.why || !r.note) {
    log->v[log->n++] = r; /* freed with the log */
    return muonref_fail(err, MUONREF_ENOMEM, "out of memory keeping the verdicts for the JUnit report");
  }
  log->v[log->n++] = r;
  return MUONREF_OK;
}

void muonref_case_log_free(muonref_case_log *log)
{
  for (size_t i = 0; i < log->n; i++) {
    muonref_case_record *r = &log->v[i];
    free(r->file), free(r->profile), free(r->area), free(r->kind);
    free(r->comment), free(r->flags), free(r->message), free(r->diagnosis), free(r->why), free(r->note);
  }
  free(log->v);
  memset(log, 0, sizeof *log);
}

/* Writes s as XML character data or attribute text: first escaped for XML
 * (escape.h: invalid UTF-8, controls other than tab, line feed and carriage
 * return, noncharacters such as U+FFFE and U+FFFF as U+FFFD), then the
 * five markup characters as entities and tab/newline/CR kept (as
 * references inside an attribute, so that they survive attribute
 * normalisation). */
static void xml_text(FILE *f, const char *s, int attribute)
{
  char *t = muonref_escape_dup(s, strlen(s), MUONREF_ESCAPE_XML);
  for (const unsigned char *p = (const unsigned char *)(t ? t : "(out of memory)"); *p; p++) {
    switch (*p) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs(attribute ? "&quot;" : "\"", f); break;
    case '\'': fputs(attribute ? "&apos;" : "'", f); break;
    case '\n': fputs(attribute ? "&#10;" : "\n", f); break;
    case '\r': fputs("&#13;", f); break;
    case '\t': fputs(attribute ? "&#9;" : "\t", f); break;
    default: fputc(*p, f);
    }
  }
  free(t);
}

/* "PROFILE.AREA", the profile's own dots written as '_' (a release-keyed profile, "emerging@0.3", would
 * otherwise read as package "emerging@0" and class "3.errors" in a CI's test tree). */
static void classname(const muonref_case_record *r, char *buf, size_t n)
{
  snprintf(buf, n, "%s.%s", r->profile, r->area);
  for (size_t i = 0; i < strlen(r->profile) && buf[i]; i++)
    buf[i] = buf[i] == '.' ? '_' : buf[i];
}

static void write_case(FILE *f, const muonref_case_record *r)
{
  char cls[300];
  classname(r, cls, sizeof cls);
  fputs("    <testcase classname=\"", f);
  xml_text(f, cls, 1);
  fprintf(f, "\" name=\"");
  xml_text(f, r->file, 1);
  fprintf(f, "#%lld", r->tc_id);
  if (r->comment[0]) {
    fputc(' ', f);
    xml_text(f, r->comment, 1);
  }
  fputs("\" file=\"", f);
  xml_text(f, r->file, 1);
  fprintf(f, "\" time=\"%.6f\"", r->seconds);
  if (r->pass && !r->fixed && !r->note[0]) {
    fputs("/>\n", f);
    return;
  }
  if (r->pass) { /* fixed, or a note of an other run not enforced */
    fputs(">\n      <system-out>", f);
    if (r->fixed) {
      fputs("FIXED: ", f);
      xml_text(f, r->why, 0);
      fputs(", passes now: take it out of the baseline", f);
    }
    xml_text(f, r->fixed && r->note[0] ? "\n" : "", 0);
    xml_text(f, r->note, 0);
    fputs("</system-out>\n    </testcase>\n", f);
    return;
  }
  if (r->known) {
    fputs(">\n      <skipped message=\"", f);
    xml_text(f, r->why, 1);
  } else {
    fputs(">\n      <failure type=\"muonref.judge\" message=\"", f);
    xml_text(f, r->message, 1);
  }
  fputs("\">", f);
  xml_text(f, r->message, 0);
  if (r->diagnosis[0]) {
    fputs("\ndiagnosis: ", f);
    xml_text(f, r->diagnosis, 0);
  }
  fputs("\nkind: ", f);
  xml_text(f, r->kind, 0);
  fputs("; flags: ", f);
  xml_text(f, r->flags, 0);
  fputs(r->known ? "</skipped>\n    </testcase>\n" : "</failure>\n    </testcase>\n", f);
}

static void write_property(FILE *f, const char *name, const char *value)
{
  fprintf(f, "      <property name=\"%s\" value=\"", name);
  xml_text(f, value, 1);
  fputs("\"/>\n", f);
}

/* done: log->n zeroed bytes, marks of the cases written */
static void write_xml(FILE *f, const muonref_case_log *log, const char *impl, const char *ns_format, char *done)
{
  long failed = 0, skipped = 0;
  double total = 0;
  for (size_t i = 0; i < log->n; i++)
    failed += !log->v[i].pass && !log->v[i].known, skipped += log->v[i].known, total += log->v[i].seconds;
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"muonref check: ", f);
  xml_text(f, impl, 1);
  fprintf(f, "\" tests=\"%zu\" failures=\"%ld\" errors=\"0\" skipped=\"%ld\" time=\"%.6f\">\n", log->n, failed,
          skipped, total);
  /* one suite per area, in order of first appearance */
  for (size_t i = 0; i < log->n; i++) {
    if (done[i])
      continue;
    char cls[300], other[300];
    classname(&log->v[i], cls, sizeof cls);
    long n = 0, nf = 0, ns = 0;
    double t = 0;
    for (size_t j = i; j < log->n; j++) {
      classname(&log->v[j], other, sizeof other);
      if (!strcmp(cls, other))
        n++, nf += !log->v[j].pass && !log->v[j].known, ns += log->v[j].known, t += log->v[j].seconds;
    }
    fputs("  <testsuite name=\"", f);
    xml_text(f, cls, 1);
    fprintf(f, "\" tests=\"%ld\" failures=\"%ld\" errors=\"0\" skipped=\"%ld\" time=\"%.6f\">\n", n, nf, ns, t);
    fputs("    <properties>\n", f);
    write_property(f, "implementation", impl);
    write_property(f, "nsFormat", ns_format);
    write_property(f, "file", log->v[i].file);
    fputs("    </properties>\n", f);
    for (size_t j = i; j < log->n; j++) {
      classname(&log->v[j], other, sizeof other);
      if (strcmp(cls, other))
        continue;
      write_case(f, &log->v[j]);
      done[j] = 1;
    }
    fputs("  </testsuite>\n", f);
  }
  fputs("</testsuites>\n", f);
}

int muonref_junit_write(const muonref_case_log *log, const char *impl, const char *ns_format, const char *path,
                        muonref_error *err)
{
  char *done = calloc(log->n + 1, 1);
  char label[4200];
  muonref_output out;
  if (!done || !muonref_output_open(&out)) {
    free(done);
    return muonref_fail(err, MUONREF_ENOMEM, "out of memory");
  }
  write_xml(out.f, log, impl, ns_format, done);
  free(done);
  snprintf(label, sizeof label, "--junit %s", path);
  return muonref_output_commit(&out, path, label, NULL, 0, err);
}
