/* muonref: the one way every writer of a whole file writes it (the JUnit
 * report, --write-results, --write-failures, the state file, `muonref gen`'s
 * staged files).  Internal (not installed).
 *
 * The whole content is ready before the target is touched, and what the
 * target is decides how it is written:
 *   - a new name, or a regular file: a temporary file in the same folder
 *     (PATH.muonref-XXXXXX), written, optionally fsync(2)ed, then renamed
 *     into place, so the file appears whole or not at all and an older file
 *     stays intact on any error.  A replaced file keeps its permission bits
 *     (and, where allowed, its owner); a new one gets 0666 less the umask.
 *     A new name that appears while the file is written is not replaced
 *     (renameat2 RENAME_NOREPLACE, or link(2) where that is unsupported).
 *     A regular file the effective user may not write (faccessat W_OK,
 *     AT_EACCESS: its mode, for a user other than root) is refused, as a
 *     shell's `>` would refuse it; one with other hard links is replaced at
 *     this name only (the other names keep the old content);
 *   - /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N: written to
 *     the open descriptor N itself (its offset and append mode kept; the
 *     path is never opened, so a shell's `>> log` is never truncated);
 *   - a FIFO or a character device (/dev/null, a terminal): opened for
 *     writing (no O_CREAT, no O_TRUNC) and written through;
 *   - a symbolic link: never replaced.  To a regular file: the target is
 *     truncated and written through the link (the kernel's
 *     protected_symlinks rules apply; the target's inode, owner, mode and
 *     other links are kept; not atomic: a write error leaves the target
 *     partial); to a FIFO or character device: written through; to a
 *     missing file: refused;
 *   - a folder, a block device or a socket: refused.
 * Nothing that was not ours is ever renamed over: only a regular file at
 * PATH or no file at all. */
#ifndef MUONREF_CORE_OUTPUT_H
#define MUONREF_CORE_OUTPUT_H

#include <stddef.h>
#include <stdio.h>
#include "muonref/status.h"

enum {
  MUONREF_OUTPUT_FSYNC = 1 /* fsync(2) the temporary file before the rename (checkpoints) */
};

/* Writes the n bytes of data to path as described above.  label names the
 * path in messages (e.g. "--junit out.xml"; NULL: path itself), what the
 * content (e.g. "the state file"; NULL: nothing).  Returns MUONREF_OK, or
 * MUONREF_EIO with "LABEL: cannot write[ WHAT]: REASON" (REASON: the
 * system's, or the rule: "a block device; muonref writes to a regular
 * file, a new name, a FIFO or a character device"), nothing left behind
 * (no temporary file), or MUONREF_EOPTION for a NULL or empty path. */
int muonref_output_write(const char *path, const void *data, size_t n, const char *label, const char *what, int flags,
                         muonref_error *err);

/* A content written with stdio before it goes to muonref_output_write:
 * muonref_output_open gives a memory stream (open_memstream(3)); close
 * with muonref_output_commit (writes it to path, same arguments and errors
 * as muonref_output_write; a stream error is MUONREF_ENOMEM) or
 * muonref_output_discard. */
typedef struct muonref_output {
  FILE *f;
  char *buf;
  size_t n;
} muonref_output;

/* NULL when out of memory. */
FILE *muonref_output_open(muonref_output *o);
int muonref_output_commit(muonref_output *o, const char *path, const char *label, const char *what, int flags,
                          muonref_error *err);
void muonref_output_discard(muonref_output *o);

#endif
