/* examples/ref_polar.c: the high-precision reference through its public
 * API alone: the exact polar factor and the exact Newton-Schulz iteration
 * of a small matrix, at 256 bits, printed correctly rounded to binary32.
 *
 * G = [[3, 0], [4, 5]] has G^T G = [[25, 20], [20, 25]], so its singular
 * values are sqrt(45) and sqrt(5) and its polar factor Q = G (G^T G)^(-1/2)
 * is [[2, -1], [1, 2]] / sqrt(5); the exact Newton-Schulz result is close
 * to Q, not equal (five quintic steps do not converge).
 *
 * From an installed muonref:
 *   cc ref_polar.c $(pkg-config --cflags --libs muonref-ref) -o ref_polar && ./ref_polar */
#include <stdio.h>
#include <muonref.h>
#include <muonref/ref.h>

int main(void)
{
  muonref_error err = {0};
  const double g[4] = {3, 0, 4, 5};
  muonref_mpmat G, Q, S;
  if (muonref_mpmat_init(&G, 2, 2, 256) || muonref_mpmat_init(&Q, 2, 2, 256) ||
      muonref_mpmat_init(&S, 2, 1, 256)) {
    fprintf(stderr, "out of memory\n");
    return 1;
  }
  muonref_mpmat_set_double(&G, g);
  if (muonref_ref_polar(&Q, &S, &G, &err) != MUONREF_OK) {
    fprintf(stderr, "polar: %s\n", err.message);
    return 1;
  }
  float q[4], sv[2];
  muonref_mpmat_get_float(q, &Q);
  muonref_mpmat_get_float(sv, &S);
  printf("polar factor: [[%.9g, %.9g], [%.9g, %.9g]]\n", q[0], q[1], q[2], q[3]);
  printf("singular values: %.9g %.9g\n", sv[0], sv[1]);

  /* five steps of the NeMo profile's Newton-Schulz, exactly */
  muonref_options o;
  if (muonref_options_init(&o, MUONREF_PROFILE_NEMO, &err) != MUONREF_OK) {
    fprintf(stderr, "options: %s\n", err.message);
    return 1;
  }
  if (muonref_ref_ns(&Q, &G, &o, &err) != MUONREF_OK) {
    fprintf(stderr, "ns: %s\n", err.message);
    return 1;
  }
  muonref_mpmat_get_float(q, &Q);
  printf("exact NS (%d steps): [[%.9g, %.9g], [%.9g, %.9g]]\n", o.ns_steps, q[0], q[1], q[2], q[3]);
  muonref_mpmat_clear(&G), muonref_mpmat_clear(&Q), muonref_mpmat_clear(&S);
  return 0;
}
