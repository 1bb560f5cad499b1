/* muonref vectors: lists golden vector sets (release, profile, area, case
 * count per file, and the folder), by default the set `muonref check` would
 * judge against (./vectors, else the installed $(pkgdatadir)/vectors);
 * --diff OLD NEW lists the cases two releases' folders differ in. */
#include <stdio.h>
#include <string.h>
#include "config.h"
#include "vectors/format/files.h"
#include "vectors/format/record.h"
#include "vectors/format/release.h"
#include "commands.h"

static int usage(void)
{
  fprintf(stderr, "usage: muonref %s\n", MUONREF_VECTORS_USAGE);
  return EXIT_USAGE;
}

/* --diff OLD NEW: the added, changed and removed cases, then their counts. */
static int diff(const char *old_dir, const char *new_dir)
{
  muonref_error err = {0};
  muonref_release_counts k;
  if (muonref_release_diff(old_dir, new_dir, stdout, &k, &err)) {
    fflush(stdout);
    fprintf(stderr, "muonref vectors: --diff: %s\n", err.message);
    return err.status == MUONREF_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
  }
  printf("%ld added, %ld changed, %ld removed cases; %ld files added, %ld removed\n", k.added, k.changed, k.removed,
         k.files_added, k.files_removed);
  return EXIT_OK;
}

int cmd_vectors(int argc, char **argv)
{
  char *paths[256];
  int n = 0, quiet = muonref_verbosity < 0, verbose = muonref_verbosity > 0;
  const char *diff_old = NULL, *diff_new = NULL;
  muonref_error err = {0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--diff")) {
      if (i + 2 >= argc) {
        fprintf(stderr, "muonref vectors: --diff needs two folders, OLD and NEW\n");
        return usage();
      }
      diff_old = argv[++i], diff_new = argv[++i];
    } else if (i + 1 < argc && !strcmp(a, "--profile-file")) { /* a user's record: its vectors name it */
      if (muonref_record_use(argv[++i], muonref_cli_records_dir(NULL), NULL, &err)) {
        fprintf(stderr, "muonref vectors: --profile-file: %s\n", err.message);
        return EXIT_USAGE;
      }
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "muonref vectors: unknown option %s\n", a);
      return usage();
    } else if (n < 256)
      paths[n++] = argv[i];
    else {
      fprintf(stderr, "muonref vectors: more than 256 paths\n");
      return EXIT_USAGE;
    }
  }
  if (diff_old && n) {
    fprintf(stderr, "muonref vectors: --diff takes its two folders and no other path\n");
    return usage();
  }
  if (diff_old)
    return diff(diff_old, diff_new);
  int given = n > 0;
  if (!given) {
    const char *d = muonref_default_vectors(&err);
    if (!d) {
      fprintf(stderr, "muonref vectors: %s\n", err.message);
      return EXIT_USAGE;
    }
    paths[n++] = (char *)d;
  }
  char **files = NULL;
  size_t count = 0;
  if (muonref_files_collect(paths, n, &files, &count, &err)) {
    fprintf(stderr, "muonref vectors: %s\n", err.message);
    return err.status == MUONREF_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
  }
  if (count == 0) {
    fprintf(stderr, "muonref vectors: no vector files (*.json) under the given paths\n");
    muonref_files_free(files);
    return EXIT_USAGE;
  }
  /* everything is read before anything is printed: a bad file prints nothing but its error */
  json_t *docs = json_array();
  for (size_t i = 0; i < count; i++) {
    json_t *j = muonref_vector_file_load(files[i], &err);
    if (!j) {
      fprintf(stderr, "muonref vectors: %s\n", err.message);
      json_decref(docs);
      muonref_files_free(files);
      return err.status == MUONREF_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
    }
    json_array_append_new(docs, j);
  }
  if (given)
    for (int i = 0; i < n; i++)
      printf("%s%s", i ? " " : "vectors: ", paths[i]);
  else
    printf("vectors: %s", paths[0]);
  printf("\n");
  if (quiet) {
    json_decref(docs);
    muonref_files_free(files);
    return EXIT_OK;
  }
  char release[64] = "";
  for (size_t i = 0; i < count; i++)
    muonref_release_merge(release, sizeof release,
                          json_string_value(json_object_get(json_array_get(docs, i), "release")));
  if (strcmp(release, MUONREF_VECTORS_RELEASE))
    printf("release: %s (this muonref generates release %s)\n", release, MUONREF_VECTORS_RELEASE);
  else
    printf("release: %s\n", release);
  int w = 10; /* the profile column: as wide as the longest name ("pytorch_optimizer") */
  for (size_t i = 0; i < count; i++) {
    const char *pn = json_string_value(json_object_get(json_array_get(docs, i), "profile"));
    w = pn && strlen(pn) > (size_t)w && strlen(pn) < 64 ? (int)strlen(pn) : w;
  }
  printf("%-*s %-16s %6s  %s\n", w, "profile", "area", "cases", "file");
  long total = 0;
  for (size_t i = 0; i < count; i++) {
    const json_t *j = json_array_get(docs, i);
    long cases = (long)json_integer_value(json_object_get(j, "numberOfTests"));
    total += cases;
    printf("%-*s %-16s %6ld  %s\n", w, json_string_value(json_object_get(j, "profile")),
           json_string_value(json_object_get(j, "area")), cases, files[i]);
    const json_t *groups = json_object_get(j, "testGroups");
    for (size_t g = 0; verbose && g < json_array_size(groups); g++) {
      const json_t *grp = json_array_get(groups, g);
      const char *kind = json_string_value(json_object_get(grp, "kind"));
      printf("%-*s %-16s %6zu    group %zu: kind %s\n", w, "", "", json_array_size(json_object_get(grp, "tests")), g,
             kind ? kind : "?");
    }
  }
  printf("%zu files, %ld cases\n", count, total);
  json_decref(docs);
  muonref_files_free(files);
  return EXIT_OK;
}
