/* muonref: the optimizer's state as a file (a checkpoint), spec/muon.md
 * section 11.1 "State file" defines the format.
 *
 * muonref_state_save writes everything needed to resume: the profile name,
 * every group's options (format 2: every field of muonref_options), every
 * parameter's group and shape, and each parameter's state (initialized,
 * branch, step, buffers), closed by a CRC-32 (zlib) of all the bytes before
 * it.  muonref_state_load reads a file back into an optimizer built with
 * the same groups: a round trip is bitwise.  A truncated or corrupted file
 * (CRC mismatch), another magic or version, or a file whose options or
 * shapes differ from the optimizer's is refused and changes nothing.
 * Files of format 1 (muonref before issue 27) still load: they store 18
 * option fields, and only those are checked (spec/muon.md 11.1 lists them;
 * the others cannot be, the file does not record them). */
#ifndef MUONREF_STATE_H
#define MUONREF_STATE_H

#include "muonref/api.h"
#include <stddef.h>
#include <stdint.h>
#include "muonref/optimizer.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MUONREF_STATE_MAGIC "MUONSTAT" /* 8 bytes, no NUL */
#define MUONREF_STATE_VERSION 13u /* written; versions 1 to 13 are read (4: the fields of timm's and optax's variants; 5: decay_method; 6: adam_eps_root; 7: maximize; 8: cautious_update, adam_l2_grad; 9: moment2_prescale; 10: clip_grad_form, clip_grad_norm_each, clip_grad_value; 11: ns_heads, n_ns_split, ns_split, ns_split_mode, ns_split_scale; 12: grad_accumulation, use_ema, ema_momentum, ema_overwrite, and each parameter's accum_calls, accumulator and moving average; 13: master_weights) */
/* Most bytes a state file may have (4 GiB): larger files are refused
 * before anything is allocated. */
#define MUONREF_STATE_MAX_BYTES ((uint64_t)1 << 32)

/* A state file read into memory (owned; free with muonref_state_file_free). */
typedef struct muonref_state_file {
  uint32_t version;
  char profile[32];            /* NUL-terminated */
  size_t n_groups;
  muonref_options *options;    /* n_groups */
  size_t n_params;
  size_t *param_group;         /* n_params */
  muonref_shape *shapes;       /* n_params */
  muonref_param_state *states; /* n_params; buffers owned */
  uint32_t crc;                /* the CRC-32 stored (and verified) */
  uint64_t bytes;              /* the file's size */
} muonref_state_file;

/* Writes opt's groups and state to path.  A regular file or a new name is
 * written atomically (a temporary file in the same folder, fsync(2), then
 * rename(2): a failed save leaves no partial file and an older file at path
 * intact); a symbolic link is kept and written through (its regular target
 * truncated and rewritten), a FIFO, a character device or /dev/stdout
 * written through; a folder, a block device or a dangling link is refused
 * (MUONREF_EIO) and never replaced.  profile names the profile the options came
 * from (printable ASCII, at most 31 bytes; NULL or "" is recorded as
 * "custom", the one encoding of no name).  Errors: MUONREF_EOPTION (NULL
 * opt or path, a profile name too long or with a byte outside printable
 * ASCII: nothing the reader would refuse is written), MUONREF_EIO (naming
 * the path and the reason), MUONREF_ENOMEM. */
MUONREF_API MUONREF_NODISCARD int muonref_state_save(const muonref_optimizer *opt, const char *profile, const char *path, muonref_error *err);

/* Reads and checks a state file completely: size (at least the fixed
 * header and the CRC, at most MUONREF_STATE_MAX_BYTES), magic, CRC-32,
 * version, every count and shape (numel as muonref_route_param allows; each
 * shape routed under its group's options, muonref_route_param: a file whose
 * row blocks do not fit a parameter, which no optimizer saves, is refused),
 * options valid (muonref_options_validate), a non-empty printable profile
 * name, flags 0 or 1, step in 0..MUONREF_MAX_STEP, finite buffers, no
 * trailing bytes.  For a format-1 file the option fields it does not store
 * are filled with nemo's values (0, and 1.0 for ns_safety and
 * scale_extra).  Fills *out
 * (zeroed on failure).  Errors: MUONREF_EIO (unreadable), MUONREF_EFORMAT
 * ("FILE: ..." naming the rule: "not a muonref state file (bad magic)",
 * "truncated", "CRC-32 mismatch: stored 0x..., computed 0x... (corrupted)",
 * "version 14, this muonref reads versions 1 to 13", ...), MUONREF_ENOMEM;
 * MUONREF_EOPTION for path or out NULL (out NULL: nothing is written). */
MUONREF_API MUONREF_NODISCARD int muonref_state_file_read(const char *path, muonref_state_file *out, muonref_error *err);
MUONREF_API void muonref_state_file_free(muonref_state_file *f);

/* Loads the state file at path into opt.  The file must have been saved
 * from an optimizer with the same groups: the same number of groups and
 * parameters, bitwise the same options (every field; a format-1 file: the
 * 18 it stores), each parameter in the same group with the same shape;
 * otherwise MUONREF_ESTATE naming the first difference ("group 1: option
 * clip_grad_norm differs from the optimizer's").  All checks run before the first state is replaced: on any
 * error opt is unchanged.  Errors: those of muonref_state_file_read,
 * MUONREF_ESTATE, MUONREF_EOPTION (NULL arguments). */
MUONREF_API MUONREF_NODISCARD int muonref_state_load(muonref_optimizer *opt, const char *path, muonref_error *err);

#ifdef __cplusplus
}
#endif
#endif
