/* muonref fuzz target: the JUnit XML writer (vectors/judge/report_junit.c) with
 * the strings of a results or vector file as the input gives them
 * (fuzz_fields.h: the implementation name, the format, file, profile,
 * area, kind, comment, flags, the judge's message and the diagnosis, a
 * baseline's reason and an other run's note; the flag byte says which
 * cases pass and whether the baseline lists them: <skipped>, <system-out>).  The file written must be UTF-8 with no
 * character XML 1.0 forbids or escape.h calls unsafe (tab, line feed and
 * carriage return aside), and, where libxml2 is linked (fuzz/run.sh adds it
 * when pkg-config finds libxml-2.0), well-formed XML that validates against
 * vectors/junit.xsd, as `xmllint --schema` would check it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "vectors/judge/report.h"
#include "fuzz_fields.h"
#ifdef FUZZ_LIBXML2
#include <libxml/parser.h>
#include <libxml/xmlschemas.h>

static void quiet(void *ctx, const char *msg, ...)
{
  (void)ctx, (void)msg;
}

/* Whether the n bytes at xml parse and validate against JUNIT_XSD. */
static int valid_junit(const char *xml, size_t n)
{
  static xmlSchemaPtr schema;
  if (!schema) {
    xmlSetGenericErrorFunc(NULL, quiet);
    xmlSchemaParserCtxtPtr pc = xmlSchemaNewParserCtxt(JUNIT_XSD);
    schema = pc ? xmlSchemaParse(pc) : NULL;
    xmlSchemaFreeParserCtxt(pc);
    if (!schema)
      abort(); /* the schema itself must load */
  }
  xmlDocPtr doc = xmlReadMemory(xml, (int)n, "junit.xml", NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (!doc)
    return 0;
  xmlSchemaValidCtxtPtr vc = xmlSchemaNewValidCtxt(schema);
  xmlSchemaSetValidErrors(vc, quiet, quiet, NULL);
  int ok = vc && xmlSchemaValidateDoc(vc, doc) == 0;
  xmlSchemaFreeValidCtxt(vc);
  xmlFreeDoc(doc);
  return ok;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_fields x;
  fuzz_fields_split(&x, data, size);
  muonref_case_log log = {0};
  muonref_error err;
  int n_cases = 1 + (int)(x.flags % 3);
  for (int k = 0; k < n_cases; k++) {
    int pass = (x.flags >> (2 + k)) & 1, listed = (x.flags >> 7) & 1; /* listed in a baseline: known or fixed */
    muonref_case_verdict v = {x.f[F_FILE], (long long)k + 1, x.f[F_PROFILE], x.f[F_AREA], x.f[F_KIND], x.f[F_COMMENT],
                              x.f[F_FLAGS], pass, x.f[F_MESSAGE], x.f[F_DIAGNOSIS], 0.5, listed && !pass,
                              listed && pass, listed ? x.f[F_WHY] : "", pass ? x.f[F_NOTE] : ""};
    if (muonref_case_log_add(&log, &v, 0.001 * k, &err))
      abort();
  }
  char path[64];
  snprintf(path, sizeof path, "/tmp/muonref-fuzz-junit-%ld.xml", (long)getpid());
  if (muonref_junit_write(&log, x.f[F_IMPL], x.f[F_FORMAT], path, &err) == MUONREF_OK) {
    FILE *f = fopen(path, "rb");
    static char buf[1 << 20];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
      fclose(f);
    fuzz_assert_clean(buf, n, "\t\n\r");
#ifdef FUZZ_LIBXML2
    if (!valid_junit(buf, n))
      abort(); /* what a CI server would drop */
#endif
  }
  unlink(path);
  muonref_case_log_free(&log);
  fuzz_fields_free(&x);
  return 0;
}
