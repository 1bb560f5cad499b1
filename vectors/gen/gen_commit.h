/* muonref: writing a set of vector files as one (`muonref gen`).
 *
 * A run first locks its output folder (flock(2) on the folder itself: no
 * lock file), so a second `muonref gen` into the same folder refuses at
 * once instead of sharing names with the first; with the lock held it
 * removes what an interrupted run left (folders DIR/.muonref-gen-XXXXXX,
 * provably a gen run's own: that name, in a folder no other run holds).
 * The files are staged in such a private folder, created only once every
 * file is computed, then renamed into place with SIGINT, SIGTERM, SIGHUP
 * and SIGQUIT held back; the old file at each name is kept as a hard link
 * in the staging folder until the end, so that when one rename fails every
 * name already replaced gets its old file back (or is removed, when it had
 * none): no new file is left beside the old set.  Only a new name or a
 * regular file is replaced; anything else at a file's name is refused
 * before the first rename. */
#ifndef MUONREF_VECTORS_GEN_COMMIT_H
#define MUONREF_VECTORS_GEN_COMMIT_H

#include <jansson.h>
#include <stddef.h>
#include "muonref/status.h"

typedef struct gen_commit {
  char dir[4096];    /* the output folder */
  int lock_fd;       /* the folder, open and locked; -1 when not */
  char stage[4200];  /* the staging folder, or "" before the first file */
  size_t n, cap;
  char (*final)[4200]; /* where staged file k goes (stage/k.json) */
} gen_commit;

/* Creates out_dir if needed, locks it and removes an interrupted run's
 * staging folders.  Errors: MUONREF_EIO ("DIR: another muonref gen is
 * writing into this folder ..." when locked; the folder cannot be made or
 * opened). */
int muonref_gen_commit_begin(gen_commit *c, const char *out_dir, muonref_error *err);

/* Stages j (written indented as every vector file) for the path final
 * (under out_dir).  Errors: MUONREF_EIO, MUONREF_ENOMEM. */
int muonref_gen_commit_stage(gen_commit *c, const json_t *j, const char *final, muonref_error *err);

/* Renames every staged file into place (see above).  Errors: MUONREF_EIO
 * naming the file and saying what was restored; the old set is then
 * unchanged. */
int muonref_gen_commit_finish(gen_commit *c, muonref_error *err);

/* Removes the staging folder and unlocks (after finish, or instead of it). */
void muonref_gen_commit_end(gen_commit *c);

#endif
