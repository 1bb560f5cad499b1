/* muonref bench: the machine a report is measured on (see bench.h): the
 * CPU's name and the flags that decide the bf16 path (/proc/cpuinfo, Linux;
 * "unknown" elsewhere), the processors online and the load average
 * (getloadavg), since the figures of a shared machine mean little without
 * its load. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

/* Whether the space-separated list `flags` holds the word w. */
static int has_flag(const char *flags, const char *w)
{
  size_t n = strlen(w);
  for (const char *p = strstr(flags, w); p; p = strstr(p + 1, w))
    if ((p == flags || p[-1] == ' ' || p[-1] == '\t') && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
      return 1;
  return 0;
}

static void read_cpuinfo(bench_machine *mc)
{
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[8192];
  int have_name = 0, have_flags = 0;
  while (f && fgets(line, sizeof line, f) && !(have_name && have_flags)) {
    char *colon = strchr(line, ':');
    if (!colon)
      continue;
    if (!have_name && !strncmp(line, "model name", 10)) {
      snprintf(mc->cpu, sizeof mc->cpu, "%s", colon + 1 + (colon[1] == ' '));
      mc->cpu[strcspn(mc->cpu, "\n")] = '\0';
      for (char *q = mc->cpu; *q; q++) /* the name goes into JSON and Markdown as is */
        if (*q == '"' || *q == '\\' || *q == '|' || (unsigned char)*q < ' ')
          *q = ' ';
      have_name = 1;
    } else if (!have_flags && !strncmp(line, "flags", 5)) {
      mc->avx2 = has_flag(colon + 1, "avx2");
      mc->avx512_bf16 = has_flag(colon + 1, "avx512_bf16");
      have_flags = 1;
    }
  }
  if (f)
    fclose(f);
}

void bench_machine_read(bench_machine *mc)
{
  memset(mc, 0, sizeof *mc);
  snprintf(mc->cpu, sizeof mc->cpu, "unknown");
  read_cpuinfo(mc);
  mc->cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
  for (int k = 0; k < 3; k++)
    mc->load_start[k] = mc->load_end[k] = -1;
  if (getloadavg(mc->load_start, 3) != 3)
    mc->load_start[0] = mc->load_start[1] = mc->load_start[2] = -1;
  time_t now = time(NULL);
  struct tm tm;
  if (!gmtime_r(&now, &tm) || !strftime(mc->date, sizeof mc->date, "%Y-%m-%d %H:%M UTC", &tm))
    snprintf(mc->date, sizeof mc->date, "unknown");
}
