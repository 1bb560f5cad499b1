/* muonref check: judges an implementation against vector files
 * (spec/vectors.md): our fast path in-process (--impl fast-bf16 |
 * fast-fp32, optionally with a deliberate --fault) or an outside
 * implementation's results file (--results FILE).  The verdicts go to
 * standard output (FAIL lines and the per-area table), and on request to a
 * JUnit XML file (--junit) or as TAP 14 on standard output (--tap; the
 * human-readable lines then go to standard error); vectors/judge/report.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "core/fail.h"
#include "muonref/profile.h"
#include "../fast/faults.h"
#include "vectors/judge/checker.h"
#include "vectors/format/files.h"
#include "vectors/format/environment.h"
#include "vectors/format/escape.h"
#include "vectors/format/record.h"
#include "vectors/judge/report.h"
#include "commands.h"
#include "datapath.h"

static int usage(void)
{
  fprintf(stderr, "usage: muonref %s\n", MUONREF_CHECK_USAGE);
  return EXIT_USAGE;
}

/* What the per-case callback feeds: the JUnit log, the TAP stream, the
 * --verbose lines and the progress line on a terminal. */
typedef struct sinks {
  muonref_case_log junit; /* kept only with --junit */
  int want_junit;
  muonref_tap tap;
  int want_tap;
  FILE *verbose;           /* one line per passing case (--verbose), or NULL */
  int progress;            /* 1: a progress line on standard error (a terminal) */
  long done, failed;
  struct timespec last;
} sinks;

/* "muonref check: MESSAGE" on standard error, the message's control
 * characters escaped: it may quote a results file (a file name, a key). */
static void report_error(const char *message)
{
  fputs("muonref check: ", stderr);
  muonref_escape_fputs(stderr, message, MUONREF_ESCAPE_TEXT);
  fputc('\n', stderr);
}

static double seconds_since(struct timespec *last)
{
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  double s = (double)(now.tv_sec - last->tv_sec) + 1e-9 * (double)(now.tv_nsec - last->tv_nsec);
  *last = now;
  return s;
}

static int on_case(void *ctx, const muonref_case_verdict *v, muonref_error *err)
{
  sinks *s = ctx;
  double t = seconds_since(&s->last);
  s->done++, s->failed += !v->pass;
  if (s->verbose && v->pass) { /* the file's strings escaped (vectors/format/escape.h) */
    fputs("ok   ", s->verbose), muonref_escape_fputs(s->verbose, v->file, MUONREF_ESCAPE_TEXT);
    fprintf(s->verbose, " tcId %lld [", v->tc_id), muonref_escape_fputs(s->verbose, v->flags, MUONREF_ESCAPE_TEXT);
    fputs("] ", s->verbose), muonref_escape_fputs(s->verbose, v->comment, MUONREF_ESCAPE_TEXT);
    fprintf(s->verbose, " (%.3g of the allowance)\n", v->worst);
  }
  if (s->want_tap)
    muonref_tap_case(&s->tap, v);
  if (s->progress) /* ends in \r: the next line written to the terminal overwrites it */
    fprintf(stderr, "\033[Kmuonref check: %ld cases judged, %ld failed so far\r", s->done, s->failed);
  return s->want_junit ? muonref_case_log_add(&s->junit, v, t, err) : MUONREF_OK;
}

static int list_faults(void)
{
  for (int f = 1; f < MUONREF_FAULT_COUNT; f++) {
    const muonref_fault_info *i = muonref_fault_info_at(f);
    printf("%-26s %s [%s]\n", i->name, i->description, i->source);
  }
  return EXIT_OK;
}

/* What `muonref check` was asked for. */
typedef struct check_args {
  const char *impl, *results, *fault, *write, *junit, *torch, *baseline, *write_failures, *profile;
  const char *environment;   /* --results: the submission's environment statement (environment.h), or NULL */
  const char *training_loop; /* --torch: the training-loop lifecycle's results file (an other run), or NULL */
  const char *profile_file;  /* --torch: the user's record the driver reads (--profile-file), or NULL */
  const char *torch_opts[32];
  int n_torch_opts, quiet, verbose, tap, f, no_diagnosis, enforce_raw;
} check_args;

static int run_check(const check_args *a, char **paths, int n);

/* Whether the driver options name the option `name` (e.g. "--adapter", in
 * either spelling: "--adapter X" or "--adapter=X"). */
static int names_option(const check_args *a, const char *name)
{
  size_t n = strlen(name);
  for (int i = 0; i < a->n_torch_opts; i++)
    if (!strncmp(a->torch_opts[i], name, n) && (a->torch_opts[i][n] == '\0' || a->torch_opts[i][n] == '='))
      return 1;
  return 0;
}

/* One run of the driver for --torch: the options after the user's
 * (NULL-terminated, or NULL) and the results file it writes. */
typedef struct driver_run {
  const char *const *extra;
  const char *out;
} driver_run;

/* The words of one run (the driver's one-run command line, its
 * interpreter, script and -q/-v left out) into w (room for n + 44 words):
 * --optimizer, the --torch-option values, the profile's --adapter where
 * they name none (the port is built from the vectors' options under its
 * own names), the user's record (--profile-file: the driver runs its
 * vectors with its base's adapter), r's options, --out and the paths.
 * Returns the count. */
static int run_words(const check_args *a, char **paths, int n, const driver_run *r, const char **w)
{
  int k = 0;
  w[k++] = "--optimizer";
  w[k++] = a->torch;
  for (int i = 0; i < a->n_torch_opts; i++)
    w[k++] = a->torch_opts[i];
  if (a->profile && !names_option(a, "--adapter")) {
    w[k++] = "--adapter";
    w[k++] = a->profile;
  }
  if (a->profile_file) {
    w[k++] = "--profile-file";
    w[k++] = a->profile_file;
  }
  for (int i = 0; r->extra && r->extra[i] && i < 4; i++)
    w[k++] = r->extra[i];
  w[k++] = "--out";
  w[k++] = r->out;
  for (int i = 0; i < n; i++)
    w[k++] = paths[i];
  return k;
}

/* Writes the k words w as one line of shell words (vectors/drivers/plans.py
 * reads them with shlex): each in single quotes, a quote as '\''. */
static void plan_line(FILE *f, const char *const *w, int k)
{
  for (int i = 0; i < k; i++) {
    fputc('\'', f);
    for (const char *s = w[i]; *s; s++)
      if (*s == '\'')
        fputs("'\\''", f);
      else
        fputc(*s, f);
    fputs(i + 1 < k ? "' " : "'\n", f);
  }
}

/* --torch: collects the vector files of paths (each once, as --impl reads
 * them: muonref_files_collect) into *files (*count of them; free with
 * muonref_files_free) and loads and validates every one before the port
 * runs (muonref_vector_file_load), with the rule that spans files (two of
 * one base name), so that a malformed golden file is refused at once, as a
 * usage error, and no port runs on it.  Returns EXIT_OK; EXIT_USAGE with
 * the file and the rule it broke on standard error (a path that is missing
 * or unreadable, or no *.json under the paths, too); EXIT_INTERNAL out of
 * memory. */
static int vector_files_valid(char **paths, int n, char ***files, size_t *count)
{
  muonref_error err = {0};
  int rc = EXIT_OK;
  json_t *seen = json_object(); /* base name -> the first file of that name */
  if (!seen || muonref_files_collect(paths, n, files, count, &err)) {
    json_decref(seen);
    report_error(seen ? err.message : "out of memory");
    return !seen || err.status == MUONREF_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
  }
  if (!*count)
    report_error("no vector files (*.json) under the given paths"), rc = EXIT_USAGE;
  for (size_t i = 0; i < *count && rc == EXIT_OK; i++) {
    json_t *j = muonref_vector_file_load((*files)[i], &err);
    const char *base = muonref_basename((*files)[i]);
    const json_t *first = json_object_get(seen, base);
    if (!j)
      report_error(err.message), rc = err.status == MUONREF_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
    else if (first) {
      char message[3 * 4096];
      snprintf(message, sizeof message, "%s: a second vector file named %s in this run (the first: %s); a results "
               "file names files by base name", (*files)[i], base, json_string_value(first));
      report_error(message), rc = EXIT_USAGE;
    } else if (json_object_set_new(seen, base, json_string((*files)[i])))
      report_error("out of memory"), rc = EXIT_INTERNAL;
    json_decref(j);
  }
  json_decref(seen);
  if (rc != EXIT_OK)
    muonref_files_free(*files), *files = NULL;
  return rc;
}

/* --torch: runs the PyTorch driver ($MUONREF_DRIVER if set, else the source
 * tree's from the build tree's command, else the installed one:
 * cli/datapath.h) over paths: one run on its command line, or several (the
 * two lifecycles) in one Python process through its many-run form
 * (`--plan FILE`, the plan written to `plan`: torch imported once).
 * Returns EXIT_OK, or the exit status for the driver's failure (its own
 * message is on standard error). */
static int run_driver(const check_args *a, char **paths, int n, const driver_run *runs, int n_runs, const char *plan)
{
  const char *driver = cli_data_path("MUONREF_DRIVER", MUONREF_DRIVER_SRC, MUONREF_DRIVER_INST);
  const char **argv = calloc((size_t)n + 32 + 48, sizeof *argv); /* every path, every --torch-option, extra */
  if (!argv) {
    fprintf(stderr, "muonref check: --torch: out of memory\n");
    return EXIT_INTERNAL;
  }
  int k = 0;
  argv[k++] = MUONREF_PYTHON;
  argv[k++] = driver;
  if (a->quiet || a->tap)
    argv[k++] = "--quiet";
  else if (a->verbose)
    argv[k++] = "--verbose";
  if (n_runs == 1)
    k += run_words(a, paths, n, &runs[0], argv + k);
  else {
    FILE *f = fopen(plan, "w");
    const char **w = f ? calloc((size_t)n + 40, sizeof *w) : NULL;
    for (int r = 0; w && r < n_runs; r++)
      plan_line(f, w, run_words(a, paths, n, &runs[r], w));
    int bad = !w || ferror(f);
    free(w);
    if (!f || (fclose(f) != 0) || bad) {
      fprintf(stderr, "muonref check: --torch: cannot write the driver's plan %s: %s\n", plan, strerror(errno));
      free(argv);
      return EXIT_INTERNAL;
    }
    argv[k++] = "--plan";
    argv[k++] = plan;
  }
  argv[k] = NULL;
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "muonref check: --torch: cannot start %s: %s\n", MUONREF_PYTHON, strerror(errno));
    free(argv);
    return EXIT_INTERNAL;
  }
  if (pid == 0) {
    if (a->tap) /* standard output carries TAP only */
      dup2(STDERR_FILENO, STDOUT_FILENO);
    execvp(argv[0], (char *const *)argv);
    fprintf(stderr, "muonref check: --torch: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  free(argv);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return EXIT_INTERNAL;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return EXIT_OK;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  fprintf(stderr, "muonref check: --torch: the driver %s exited %d\n", driver, code);
  return code == 2 ? EXIT_USAGE : EXIT_INTERNAL;
}

static int check_main(int argc, char **argv, char **paths);

int cmd_check(int argc, char **argv)
{
  char **paths = calloc((size_t)argc + 1, sizeof *paths); /* every path given: no limit (argv outlives the run) */
  if (!paths) {
    fprintf(stderr, "muonref check: out of memory\n");
    return EXIT_INTERNAL;
  }
  int rc = check_main(argc, argv, paths);
  free(paths);
  return rc;
}

/* The driver's options that `muonref check --torch` passes on as they are (its messages name them:
 * "give it with --ns-function", "--state-name PORT_KEY=KEY"), as `--torch-option=OPTION=VALUE` would:
 * --adapter NAME, --ns-function FILE:FUNC, --state-name PORT_KEY=KEY.  Returns 1 for the option with
 * its value in the next word, 2 for OPTION=VALUE in one word, 0 for another word. */
static int driver_option(const char *a)
{
  static const char *const NAMES[] = {"--adapter", "--ns-function", "--state-name"};
  for (size_t k = 0; k < sizeof NAMES / sizeof NAMES[0]; k++) {
    size_t n = strlen(NAMES[k]);
    if (!strncmp(a, NAMES[k], n) && (a[n] == '\0' || a[n] == '='))
      return a[n] ? 2 : 1;
  }
  return 0;
}

static int check_main(int argc, char **argv, char **paths)
{
  check_args ca = {0};
  const char *impl = NULL, *results = NULL, *fault = NULL, *write = NULL, *junit = NULL;
  const char *torch_spec = NULL, *topts[32], *profile = NULL;
  const char *profile_files[8];
  int n = 0, tap = 0, n_topts = 0, n_pf = 0;
  ca.quiet = muonref_verbosity < 0, ca.verbose = muonref_verbosity > 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int takes = !strcmp(a, "--impl") || !strcmp(a, "--results") || !strcmp(a, "--fault") ||
                !strcmp(a, "--write-results") || !strcmp(a, "--junit") || !strcmp(a, "--torch") ||
                !strcmp(a, "--torch-option") || !strcmp(a, "--baseline") || !strcmp(a, "--write-failures") ||
                !strcmp(a, "--profile") || !strcmp(a, "--profile-file") || !strcmp(a, "--environment") ||
                driver_option(a) == 1;
    if (takes && i + 1 >= argc) {
      fprintf(stderr, "muonref check: %s needs a value\n", a);
      return usage();
    }
    if (!strcmp(a, "--torch"))
      torch_spec = argv[++i];
    else if (driver_option(a)) { /* the driver's own, as identify takes --adapter */
      if (n_topts > 30) {
        fprintf(stderr, "muonref check: more than 32 --torch-option\n");
        return EXIT_USAGE;
      }
      topts[n_topts++] = a; /* "--adapter=NAME" as one word: the driver's argparse reads both spellings */
      if (driver_option(a) == 1)
        topts[n_topts++] = argv[++i];
    } else if (!strcmp(a, "--torch-option") || !strncmp(a, "--torch-option=", 15)) {
      if (n_topts == 32) {
        fprintf(stderr, "muonref check: more than 32 --torch-option\n");
        return EXIT_USAGE;
      }
      topts[n_topts++] = a[14] == '=' ? a + 15 : argv[++i];
    } else if (!strcmp(a, "--impl"))
      impl = argv[++i];
    else if (!strcmp(a, "--results"))
      results = argv[++i];
    else if (!strcmp(a, "--fault"))
      fault = argv[++i];
    else if (!strcmp(a, "--write-results"))
      write = argv[++i];
    else if (!strcmp(a, "--junit"))
      junit = argv[++i];
    else if (!strcmp(a, "--tap") || !strcmp(a, "--tap=14"))
      tap = 14;
    else if (!strcmp(a, "--tap=13"))
      tap = 13;
    else if (!strncmp(a, "--tap=", 6)) {
      fprintf(stderr, "muonref check: %s: the TAP version is 14 (--tap) or 13 (--tap=13)\n", a);
      return usage();
    }
    else if (!strcmp(a, "--baseline"))
      ca.baseline = argv[++i];
    else if (!strcmp(a, "--write-failures"))
      ca.write_failures = argv[++i];
    else if (!strcmp(a, "--environment"))
      ca.environment = argv[++i];
    else if (!strcmp(a, "--no-diagnosis"))
      ca.no_diagnosis = 1;
    else if (!strcmp(a, "--enforce-raw"))
      ca.enforce_raw = 1;
    else if (!strcmp(a, "--profile"))
      profile = argv[++i];
    else if (!strcmp(a, "--profile-file")) {
      if (n_pf == 8) {
        fprintf(stderr, "muonref check: more than 8 --profile-file\n");
        return EXIT_USAGE;
      }
      profile_files[n_pf++] = argv[++i];
    }
    else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "muonref check: unknown option %s\n", a);
      return usage();
    } else
      paths[n++] = argv[i];
  }
  if (fault && !strcmp(fault, "list"))
    return list_faults();
  if (!!impl + !!results + !!torch_spec != 1) {
    fprintf(stderr, "muonref check: give exactly one of --impl, --results and --torch\n");
    return usage();
  }
  if (n_topts && !torch_spec) {
    fprintf(stderr, "muonref check: --torch-option applies to --torch only\n");
    return EXIT_USAGE;
  }
  if (impl && strcmp(impl, "fast-bf16") && strcmp(impl, "fast-fp32")) {
    fprintf(stderr, "muonref check: --impl '%s': expected fast-bf16 or fast-fp32\n", impl);
    return EXIT_USAGE;
  }
  int f = 0;
  if (fault && (!impl || (f = muonref_fault_parse(fault)) < 0)) {
    fprintf(stderr, "muonref check: --fault '%s': %s\n", fault,
            impl ? "unknown fault (muonref check --fault list names them)" : "faults apply to --impl only");
    return EXIT_USAGE;
  }
  if (ca.environment && !results) {
    fprintf(stderr, "muonref check: --environment applies to --results only (a submission's results file)\n");
    return EXIT_USAGE;
  }
  if (write && !impl) {
    fprintf(stderr, "muonref check: --write-results applies to --impl only\n");
    return EXIT_USAGE;
  }
  ca.impl = impl, ca.results = results, ca.fault = fault, ca.write = write, ca.junit = junit, ca.tap = tap, ca.f = f;
  ca.torch = torch_spec, ca.n_torch_opts = n_topts, ca.profile = profile;
  memcpy(ca.torch_opts, topts, (size_t)n_topts * sizeof topts[0]);
  muonref_error err = {0};
  if (n_pf > 1 && torch_spec) {
    fprintf(stderr, "muonref check: --torch takes one --profile-file (the driver runs one port: one record)\n");
    return EXIT_USAGE;
  }
  ca.profile_file = n_pf && torch_spec ? profile_files[0] : NULL;
  for (int k = 0; k < n_pf; k++) { /* a user's records: their vectors name them (vectors/format/record.h) */
    const muonref_record *rec = NULL;
    if (muonref_record_use(profile_files[k], muonref_cli_records_dir(NULL), &rec, &err)) {
      fprintf(stderr, "muonref check: --profile-file: %s\n", err.message);
      return err.status == MUONREF_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
    }
    /* the driver runs the port as the record's profile: another profile's vectors would be
     * refused case by case (NotExpressible) and counted as the port's failures */
    if (torch_spec && profile && rec && strcmp(rec->name, profile)) {
      fprintf(stderr, "muonref check: --profile-file %s is profile '%s', --profile names '%s': with --torch the "
                      "driver runs the port as the record's profile; give the record's vector folder "
                      "(muonref gen --profile-file) or --profile %s\n", profile_files[k], rec->name, profile,
              rec->name);
      return EXIT_USAGE;
    }
  }
  static char profile_dir[4200];
  if (profile && n) {
    fprintf(stderr, "muonref check: --profile selects a profile of the default vectors; give it or vector paths, "
                    "not both\n");
    return EXIT_USAGE;
  }
  muonref_options known; /* only the check: the lookup's error names the profiles */
  if (profile && muonref_profile_options(profile, &known, &err)) {
    fprintf(stderr, "muonref check: --profile: %s\n", err.message);
    return EXIT_USAGE;
  }
  if (n == 0) {
    const char *dflt = muonref_default_vectors(&err);
    if (!dflt) {
      fprintf(stderr, "muonref check: %s\n", err.message);
      return EXIT_USAGE;
    }
    paths[n++] = (char *)dflt;
    if (profile) { /* one profile's folder of the default set */
      snprintf(profile_dir, sizeof profile_dir, "%s/%s", dflt, profile);
      paths[0] = profile_dir;
    }
  }
  if (!torch_spec)
    return run_check(&ca, paths, n);
  char **files; /* each vector file once: the driver and the judge read these */
  size_t n_files;
  int valid = vector_files_valid(paths, n, &files, &n_files);
  if (valid != EXIT_OK)
    return valid;
  paths = files, n = (int)n_files;
  /* --torch: the driver writes a results file in a private folder, which is judged and removed */
  const char *tmp = getenv("TMPDIR");
  char dir[4096], out[4200];
  snprintf(dir, sizeof dir, "%s/muonref-check.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    fprintf(stderr, "muonref check: --torch: cannot make a folder for the results (%s): %s\n", dir, strerror(errno));
    muonref_files_free(files);
    return EXIT_USAGE;
  }
  snprintf(out, sizeof out, "%s/results.json", dir);
  /* both lifecycles (spec/vectors.md 4.2), the training loop's as a second,
   * enforced run, in neutral mode unless the driver options name a mode;
   * one run when they name a lifecycle or a world size (whose ranks assign
   * gradients) */
  char out_tl[4200];
  snprintf(out_tl, sizeof out_tl, "%s/training-loop.json", dir);
  const char *tl_mode[] = {"--lifecycle", "training-loop", "--mode", "neutral", NULL};
  if (names_option(&ca, "--mode"))
    tl_mode[2] = NULL;
  int both = !names_option(&ca, "--lifecycle") && !names_option(&ca, "--world-size");
  char plan[4200];
  snprintf(plan, sizeof plan, "%s/plan", dir);
  driver_run runs[] = {{NULL, out}, {tl_mode, out_tl}};
  int rc = run_driver(&ca, paths, n, runs, both ? 2 : 1, plan);
  if (rc == EXIT_OK) {
    ca.results = out;
    ca.training_loop = both ? out_tl : NULL;
    rc = run_check(&ca, paths, n);
  }
  unlink(out);
  unlink(out_tl);
  unlink(plan);
  rmdir(dir);
  muonref_files_free(files);
  return rc;
}

/* Judges (our fast path, or the results file a->results) and reports. */
static int run_check(const check_args *a, char **paths, int n)
{
  const char *impl = a->impl, *results = a->results, *fault = a->fault, *write = a->write, *junit = a->junit;
  int quiet = a->quiet, verbose = a->verbose, tap = a->tap, f = a->f;
  muonref_checker c;
  muonref_error err = {0};
  if (impl) {
    muonref_checker_fast(&c, strcmp(impl, "fast-bf16") ? MUONREF_NS_FP32 : MUONREF_NS_BF16, f);
    if (fault)
      snprintf(c.impl_name, sizeof c.impl_name, "%s with fault %s", impl, fault);
  } else if (muonref_checker_results(&c, results, &err)) {
    report_error(err.message);
    muonref_checker_free(&c);
    return EXIT_USAGE;
  }
  if (a->training_loop && muonref_checker_add_run(&c, "training-loop", a->training_loop, &err)) {
    fprintf(stderr, "muonref check: %s\n", err.message);
    muonref_checker_free(&c);
    return EXIT_USAGE;
  }
  muonref_other_run *raw = muonref_checker_other(&c, "raw");
  if (a->enforce_raw && !raw && strcmp(c.mode, "raw")) {
    fprintf(stderr, "muonref check: --enforce-raw: %s holds no raw run (mode %s; the driver's default --mode "
                    "neutral+raw writes one, --mode raw makes the raw run the judged one)\n",
            impl ? impl : results, c.mode[0] ? c.mode : "not given");
    muonref_checker_free(&c);
    return EXIT_USAGE;
  }
  if (raw)
    raw->enforced = a->enforce_raw;
  FILE *human = tap ? stderr : stdout; /* with --tap, standard output is TAP only */
  c.log = quiet ? NULL : human;
  c.notes = verbose ? human : NULL;
  c.diagnose = !impl && !a->no_diagnosis;
  if (a->baseline && muonref_checker_baseline(&c, a->baseline, &err)) {
    fprintf(stderr, "muonref check: --baseline %s\n", err.message);
    muonref_checker_free(&c);
    return EXIT_USAGE;
  }
  if (a->environment && muonref_environment_check(a->environment, &c, paths, n, &err)) {
    report_error(err.message);
    muonref_checker_free(&c);
    return err.status == MUONREF_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
  }
  if (a->write_failures)
    c.failures = json_object();
  sinks sk = {0};
  sk.want_junit = junit != NULL;
  sk.want_tap = tap;
  sk.verbose = verbose ? human : NULL;
  sk.progress = !quiet && !verbose && !tap && isatty(STDERR_FILENO);
  clock_gettime(CLOCK_MONOTONIC, &sk.last);
  c.on_case = on_case;
  c.on_case_ctx = &sk;
  if (write) {
    c.written = json_object();
    json_object_set_new(c.written, "implementation", json_string(c.impl_name));
    json_object_set_new(c.written, "nsFormat", json_string(muonref_ns_format_name(c.format)));
    json_object_set_new(c.written, "results", json_array());
  }
  if (tap)
    muonref_tap_begin(&sk.tap, stdout, c.impl_name, tap);
  int st = muonref_checker_run(&c, paths, n, &err);
  if (sk.progress)
    fputs("\033[K", stderr);
  if (!st && write)
    st = muonref_json_write_atomic(c.written, write, 0, &err);
  if (!st && a->write_failures)
    st = muonref_checker_write_failures(&c, a->write_failures, &err);
  if (!st && junit)
    st = muonref_junit_write(&sk.junit, c.impl_name, muonref_ns_format_name(c.format), junit, &err);
  muonref_case_log_free(&sk.junit);
  if (st) {
    if (tap)
      muonref_tap_bail(&sk.tap, err.message);
    report_error(err.message);
    muonref_checker_free(&c);
    return st == MUONREF_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
  }
  if (tap)
    muonref_tap_end(&sk.tap);
  muonref_checker_report(&c, human);
  if (fault && c.passed && !c.failed) /* the fault may be the profile's own behaviour, or act on no case here */
    fprintf(stderr, "muonref check: note: --fault %s fails none of these %ld cases: either it acts on none of them, "
                    "or under their profiles it computes what the profile does (as ema_momentum under an EMA "
                    "profile); `muonref check --fault list` says what each fault changes\n", fault, c.passed);
  muonref_checker_free(&c);
  return c.failed ? EXIT_FAILED : EXIT_OK;
}
