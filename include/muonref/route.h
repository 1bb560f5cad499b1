/* muonref: routing, the choice between the Muon update and the AdamW
 * fallback for one parameter, and the matrix view a Muon parameter takes.
 * spec/muon.md, section "Routing". */
#ifndef MUONREF_ROUTE_H
#define MUONREF_ROUTE_H

#include "muonref/api.h"
#include <stddef.h>
#include "muonref/options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most dimensions a parameter may have. */
#define MUONREF_MAX_NDIM 8
/* Most elements a parameter or matrix may have (2^40: far beyond memory,
 * small enough that sizes and byte counts never overflow size_t). */
#define MUONREF_MAX_NUMEL ((size_t)1 << 40)

/* A parameter shape: ndim dimensions (0 for a scalar), row-major. */
typedef struct muonref_shape {
  int ndim;
  size_t dims[MUONREF_MAX_NDIM];
} muonref_shape;

/* The routing decision for one parameter.  For a Muon parameter the
 * gradient is read as `batch` row-major (rows, cols) matrices one after
 * the other (batch * rows * cols = numel): under conv_mode FLATTEN one
 * matrix with rows = dims[0] and cols = the product of the other
 * dimensions; under BATCHED (and KELLER for ndim != 4) the matrices
 * (dims[n-2], dims[n-1]) of the leading dimensions' product; under SPATIAL
 * the matrices (dims[0], dims[1]), one per position of the trailing
 * dimensions, interleaved (see `interleaved`).  The scale
 * factor of the update is computed from (scale_rows, scale_cols): the
 * matrix's (rows, cols), or under scale_shape LAST_TWO (dims[n-2],
 * dims[n-1]) of the original shape, under FIRST_TWO its (dims[0], dims[1]). */
typedef struct muonref_route {
  int use_muon;      /* 1: Muon update; 0: AdamW fallback */
  size_t rows;       /* Muon: rows of each matrix; AdamW: number of elements */
  size_t cols;       /* Muon: columns of each matrix; AdamW: 1 */
  size_t numel;      /* number of elements of the parameter */
  size_t batch;      /* Muon: number of matrices (>= 1); AdamW: 1 */
  size_t scale_rows; /* Muon: the shape the scale factor is computed from */
  size_t scale_cols;
  int interleaved;   /* Muon: 0: matrix b is elements [b rows cols, (b + 1) rows cols) of the
                        parameter; 1 (conv_mode SPATIAL, ndim >= 3): element (i, j) of matrix b
                        is element (i cols + j) batch + b (muonref_route_matrix_index) */
  int momentum_only; /* Muon: 1 (route_rule MOMENTUM_1D, a parameter of fewer than two
                        dimensions): the update is the momentum (or Nesterov input) itself, no
                        Newton-Schulz, scale 1; (rows, cols) = (numel, 1); 0: orthogonalized */
  size_t split;      /* Muon: 0, or the number of row blocks (options ns_split, spec/muon.md 7.6) of
                        this two-dimensional matrix, each stepped as a parameter of its own
                        (muonref_route_block) */
  double scale_ratio; /* a row block's route under ns_split_scale RATIO: s(block) / s(matrix), the
                        first product of its update (dion's split_scales); else 0 (none) */
} muonref_route;

/* Row block b (< r->split) of a Muon parameter routed r under o, as a
 * parameter of its own: *sub gets (rows_b, cols_b), batch 1, its scale
 * shape (its own under ns_split_scale OWN; the matrix's, with scale_ratio
 * s(block) / s(matrix) as dion's compute_split_lr_scales computes it in
 * binary64, under RATIO; the matrix's alone under MATRIX), split 0.  rows_b is ns_split[b] under
 * ns_split_mode ROWS, that times the periods rows / sum(ns_split) under
 * GROUPS and STACKED, the matrix's rows under COLUMNS; cols_b the matrix's
 * cols, or ns_split[b] under COLUMNS.  Nothing is checked: r comes from muonref_route_param under o. */
MUONREF_API void muonref_route_block(const muonref_options *o, const muonref_route *r, size_t b, muonref_route *sub);

/* The element of the parameter (row-major) where row i (< rows_b) of
 * block b starts; the block's row is its cols_b next elements.  The row:
 * ROWS off_b + i (off_b the sizes before b); GROUPS g S + off_b + j with
 * i = g ns_split[b] + j, S the sizes' sum (Megatron's query group g);
 * STACKED P off_b + i, P = rows / S; COLUMNS row i, from column off_b. */
MUONREF_API size_t muonref_route_block_at(const muonref_options *o, const muonref_route *r, size_t b, size_t i);

/* Number of elements of a shape (1 for ndim 0; 0 for s NULL or ndim
 * outside 0..MUONREF_MAX_NDIM); for a shape that muonref_route_param
 * accepts it does not overflow. */
MUONREF_API size_t muonref_shape_numel(const muonref_shape *s);

/* Routes a parameter of shape *s under group options *o.  Under
 * route_rule TWO_D_ONLY every parameter is a Muon parameter and must have
 * two dimensions, else MUONREF_ESHAPE with torch.optim.Muon's message
 * "Muon only supports 2D parameters whereas we found a parameter with size:
 * torch.Size([48])".  Under conv_mode TWO_D, use_muon TRUE needs exactly
 * two dimensions (MUONREF_ESHAPE "use_muon=True needs exactly two
 * dimensions, got shape (4, 2, 3, 3)", Moonlight's assert).  MANUAL
 * routes as THRESHOLD (its groups name use_muon).  Under THRESHOLD:
 *   use_muon TRUE  -> Muon, provided ndim >= 2;
 *   use_muon FALSE -> AdamW;
 *   use_muon AUTO  -> Muon iff ndim == 2 and max(dims) < adam_dim_threshold.
 * Errors (out untouched): MUONREF_ESHAPE for ndim outside 0..MUONREF_MAX_NDIM
 * ("Invalid parameter shape: 9 dimensions, at most 8 are supported"), for a
 * zero dimension ("Invalid parameter shape (0, 4): every dimension must be at
 * least 1"), for more than MUONREF_MAX_NUMEL elements ("Invalid parameter
 * shape (...): more than 1099511627776 elements"), and for use_muon TRUE on ndim < 2
 * ("use_muon=True needs at least two dimensions, got shape (48,)"; under
 * TIMM timm's assertion "Input must be 2D or 3D, got 1D. Flatten batch dims
 * first.").  Under TIMM, use_muon AUTO applies timm's heuristic
 * (options.h, MUONREF_ROUTE_TIMM) instead of the threshold; rows and cols
 * are the same flattened view.  Under NOT_1D (Megatron-LM's dev snapshot)
 * use_muon FALSE is AdamW, AUTO and TRUE Muon unless ndim == 1, and a Muon
 * parameter that is not 2-D is MUONREF_ESHAPE "Only 2D parameters are
 * supported.".  Under TAGGED_2D (Megatron Core) use_muon FALSE is AdamW,
 * AUTO and TRUE Muon iff ndim == 2: TRUE on another ndim takes AdamW, not
 * an error.  Under MOMENTUM_1D (MLX) use_muon FALSE is AdamW, AUTO and
 * TRUE the Muon branch for every shape: orthogonalized where ndim >= 2,
 * with momentum_only set (no Newton-Schulz, scale 1) where ndim < 2.
 * MUONREF_EOPTION for o, s or out NULL. */
MUONREF_API MUONREF_NODISCARD int muonref_route_param(const muonref_options *o, const muonref_shape *s,
                                                      muonref_route *out, muonref_error *err);

/* muonref_route_param for a parameter called `name` (a NUL-terminated
 * string, borrowed; NULL = no name: no name rule matches it);
 * muonref_route_param(o, s, out, err) is this with name NULL.  Under
 * route_rule NDIM_2_3 (Paddle):
 *   use_muon TRUE  -> Muon, provided ndim is 2 or 3; any other ndim is
 *                     MUONREF_ESHAPE with Paddle's message "Input tensor X
 *                     must be 2D or 3D (batched), got 4D" (P-98af
 *                     _zeropower_via_newtonschulz5, at the step);
 *   use_muon FALSE -> AdamW;
 *   use_muon AUTO  -> Muon iff ndim is 2 or 3 and the name matches none of
 *                     o's exclude_patterns (muonref_name_excluded).
 * Under route_rule NDIM_2 with use_muon AUTO (optax, keras) a 2-D parameter
 * takes AdamW when exclude_embeddings is set and its name contains
 * "embedding" (ASCII case-insensitive), or when its name matches one of o's
 * exclude patterns.  The other rules ignore the name.  Errors: those of
 * muonref_route_param, and MUONREF_EOPTION for a REGEX pattern that does
 * not compile. */
MUONREF_API MUONREF_NODISCARD int muonref_route_param_named(const muonref_options *o, const muonref_shape *s,
                                                            const char *name, muonref_route *out, muonref_error *err);

/* Whether name matches one of o's n_exclude_patterns patterns under
 * pattern_match: SUBSTRING_CI, the pattern a substring of the name ignoring
 * ASCII case (Paddle's `pattern.lower() in name.lower()`; "bias" matches
 * "unbiased_proj.weight", the empty pattern matches every name); REGEX, a
 * POSIX extended regular expression found anywhere in the name,
 * case-sensitive (regcomp REG_EXTENDED|REG_NOSUB, regexec: keras
 * `re.search(p, path)`).  Returns 1 or 0; -1 with err set (MUONREF_EOPTION;
 * err may be NULL) for a pattern that does not compile or o NULL.  name
 * NULL: 0. */
MUONREF_API int muonref_name_excluded(const muonref_options *o, const char *name, muonref_error *err);

/* Checks that `pattern` compiles as a POSIX extended regular expression:
 * MUONREF_OK, or MUONREF_EOPTION "Invalid exclude pattern '(a': <regerror
 * text>"; MUONREF_EOPTION for pattern NULL. */
MUONREF_API MUONREF_NODISCARD int muonref_pattern_check(const char *pattern, muonref_error *err);

/* Fills the matrix layout of r (rows, cols, batch, scale_rows,
 * scale_cols, interleaved, momentum_only; see muonref_route) from
 * r->use_muon and r->numel for a parameter of shape *s under o's
 * route_rule, conv_mode and scale_shape.  For a caller
 * that changed r->use_muon after muonref_route_param (a test hook); no
 * errors (the shape was accepted by muonref_route_param; a NULL argument
 * or an ndim out of range leaves r as it is). */
MUONREF_API void muonref_route_matrices(const muonref_options *o, const muonref_shape *s, muonref_route *r);

/* Where element i (row-major, 0 <= i < r->numel) of a Muon parameter
 * routed as *r lies in its batch of matrices stored one after the other
 * (matrix b at b rows cols): i itself, or under r->interleaved
 * (i mod batch) rows cols + i / batch.  A bijection of 0..numel-1; r NULL: i. */
MUONREF_API size_t muonref_route_matrix_index(const muonref_route *r, size_t i);

/* Checks that s is a matrix Newton-Schulz accepts: exactly two dimensions,
 * each at least 1.  Returns MUONREF_OK or MUONREF_ESHAPE with the NeMo
 * wording "Expected a matrix, got a tensor of shape (3, 4, 5)";
 * MUONREF_EOPTION for s NULL. */
MUONREF_API MUONREF_NODISCARD int muonref_ns_check_shape(const muonref_shape *s, muonref_error *err);

/* Whether Newton-Schulz iterates on the transpose of a (rows, cols) matrix:
 * true iff rows > cols, so the iteration always runs on the wide side and
 * NS(G^T) = NS(G)^T (NeMo, Keller, torch, timm, Paddle). */
MUONREF_API int muonref_ns_transposes(size_t rows, size_t cols);

/* How many floats the second moment of the Newton-Schulz output of a
 * parameter routed as *r under *o holds (spec/muon.md 7.4): 0 for an AdamW
 * route or moment2 NONE; per matrix of the batch rows (ROWS), max(rows,
 * cols) (LONGER: rows when rows >= cols, else cols) or rows * cols
 * (ELEMENT).  0 for a NULL argument. */
MUONREF_API size_t muonref_moment2_numel(const muonref_options *o, const muonref_route *r);

/* The shape of that buffer for a parameter of shape *s routed as *r (the
 * PyTorch ports' layout): ELEMENT the parameter's shape; ROWS and LONGER
 * the parameter's shape with the reduced dimension 1 (the last one, cols,
 * for ROWS and for LONGER with rows >= cols, else the one before it) when
 * the route's matrices are the parameter's own last two dimensions (2-D,
 * or a batch under conv_mode BATCHED or KELLER), else (rows, 1) or (1,
 * cols) of the flattened matrix.  ndim 0 when the buffer is empty
 * (muonref_moment2_numel 0); the product of the dimensions is always
 * muonref_moment2_numel. */
MUONREF_API muonref_shape muonref_moment2_shape(const muonref_options *o, const muonref_route *r,
                                                const muonref_shape *s);

#ifdef __cplusplus
}
#endif
#endif
