/* muonref tests: mutation testing of the golden vectors.  Our fast path
 * passes every case in bf16 and in fp32, and each of the deliberate faults
 * (fast/faults.h: real differences between ports and public bugs) fails at
 * least one case in each format.  Runs over the committed vectors
 * ($MUONREF_SRCDIR/vectors). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include "../fast/faults.h"
#include "../vectors/checker.h"
#include "testutil.h"

static char vectors_dir[4096];

static long failures(muonref_ns_format format, int fault)
{
  muonref_checker c;
  muonref_error err = {0};
  char *paths[1] = {vectors_dir};
  muonref_checker_fast(&c, format, fault);
  int st = muonref_checker_run(&c, paths, 1, &err);
  ck_assert_msg(st == MUONREF_OK, "%s", err.message);
  ck_assert_int_ge(c.passed + c.failed, 150);
  muonref_checker_free(&c);
  return c.failed;
}

START_TEST(correct_path_passes_everything)
{
  ck_assert_int_eq(failures(MUONREF_NS_BF16, 0), 0);
  ck_assert_int_eq(failures(MUONREF_NS_FP32, 0), 0);
}
END_TEST

START_TEST(every_fault_is_caught_in_bf16)
{
  int f = _i + 1;
  ck_assert_msg(failures(MUONREF_NS_BF16, f) > 0, "fault %s passes every bf16 case", muonref_fault_info_at(f)->name);
}
END_TEST

START_TEST(every_fault_is_caught_in_fp32)
{
  int f = _i + 1;
  ck_assert_msg(failures(MUONREF_NS_FP32, f) > 0, "fault %s passes every fp32 case", muonref_fault_info_at(f)->name);
}
END_TEST

START_TEST(at_least_twenty_faults)
{
  ck_assert_int_ge(MUONREF_FAULT_COUNT - 1, 20);
  for (int f = 1; f < MUONREF_FAULT_COUNT; f++) {
    ck_assert_ptr_nonnull(muonref_fault_info_at(f));
    ck_assert_int_eq(muonref_fault_parse(muonref_fault_info_at(f)->name), f);
  }
  ck_assert_int_eq(muonref_fault_parse("no-such-fault"), -1);
}
END_TEST

int main(void)
{
  const char *src = getenv("MUONREF_SRCDIR");
  snprintf(vectors_dir, sizeof vectors_dir, "%s/vectors", src ? src : ".");
  Suite *s = suite_create("faults");
  TCase *t = tcase_create("faults");
  tcase_set_timeout(t, 300);
  tcase_add_test(t, at_least_twenty_faults);
  tcase_add_test(t, correct_path_passes_everything);
  tcase_add_loop_test(t, every_fault_is_caught_in_bf16, 0, MUONREF_FAULT_COUNT - 1);
  tcase_add_loop_test(t, every_fault_is_caught_in_fp32, 0, MUONREF_FAULT_COUNT - 1);
  suite_add_tcase(s, t);
  return tu_run_suite(s);
}
