/* muonref command: where the scripts it runs live (see datapath.h). */
#define _XOPEN_SOURCE 700
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "datapath.h"

#ifndef MUONREF_BUILD_EXE
#define MUONREF_BUILD_EXE ""
#endif

int cli_in_build_tree(void)
{
  char self[PATH_MAX], built[PATH_MAX];
  if (!MUONREF_BUILD_EXE[0] || !realpath("/proc/self/exe", self) || !realpath(MUONREF_BUILD_EXE, built))
    return 0;
  return strcmp(self, built) == 0;
}

const char *cli_data_path(const char *env, const char *in_source_tree, const char *installed)
{
  const char *v = env ? getenv(env) : NULL;
  if (v && *v)
    return v;
  return cli_in_build_tree() ? in_source_tree : installed;
}
