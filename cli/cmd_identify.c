/* muonref identify: which profile a PyTorch Muon port is, and how it
 * differs (issue 22 item 2; spec/vectors.md section 7.1).
 *
 * A compact probe set is derived from every profile's golden vectors: each
 * profile's `defaults` cases (the port's own constructor defaults) and a
 * few cases of every other area (evenly spread over each file's step, ns
 * and transpose cases, and one more for each flag none of those carries).
 * The driver (vectors/drivers/torch_driver.py, as
 * `muonref check --torch` runs it) runs the port once over the whole set,
 * with the adapter whose profile's option names its constructor takes
 * (its signature's keyword names against each profile's key table).  The
 * results are judged against each profile (in the results' Newton-Schulz
 * format and, for bf16, in fp32 too: the better counts); the nearest
 * profile is the one whose probe cases pass most, and the judge's fit
 * (vectors/judge/fit.h) gives the differences from it. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "core/fail.h"
#include "muonref/profile.h"
#include "vectors/judge/checker.h"
#include "vectors/format/files.h"
#include "vectors/judge/fit.h"
#include "vectors/format/record.h"
#include "commands.h"
#include "datapath.h"

extern char **environ;

enum { PER_AREA = 3, MAX_OPTS = 32 };

/* What identify was asked for. */
typedef struct id_args {
  const char *torch, *results, *adapter, *mode, *ns_format, *keep;
  const char *opts[MAX_OPTS];
  int n_opts;
  char chosen[64]; /* the adapter run_driver chose from the constructor's signature ("" where --adapter gave it) */
  char *paths[64];
  int n_paths;
} id_args;

/* One profile's verdict on the probe set (skipped: of the failed, the cases the port could not be given). */
typedef struct verdict {
  const char *profile;
  long passed, failed, skipped;
  muonref_ns_format format;
} verdict;

static const char *driver_path(void)
{
  return cli_data_path("MUONREF_DRIVER", MUONREF_DRIVER_SRC, MUONREF_DRIVER_INST);
}

/* Runs argv (argv[0] found on the PATH) with standard output to `out`
 * (NULL: inherited); returns its exit status, 127 when it cannot start,
 * 128 + signal when killed. */
static int run(const char *const *argv, const char *out)
{
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (out)
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  fflush(stdout), fflush(stderr);
  pid_t pid;
  int st = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (st) {
    fprintf(stderr, "muonref identify: cannot run %s: %s\n", argv[0], strerror(st));
    return 127;
  }
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The keyword names of the port's constructor, one per line into file
 * `names` (the driver's own loader, inspect.signature).  A constructor with
 * **kwargs passes them on to its base class's (tests/ports/torch_megatron_port.py
 * MegatronMuon017(params, muon_use_nesterov=False, **kwargs)): the names of
 * each __init__ up the method resolution order follow, to the first that
 * takes no **kwargs, each class's after a line "--".  The first __init__ is
 * read wherever it lives (torch.optim.Muon's own module is torch's); past
 * it torch's own classes are not (torch.optim.Optimizer's params and
 * defaults are no options).  A class's __init__ is read as the class
 * gives it (c.__init__: a functools.partialmethod too). */
static int signature(const id_args *a, const char *names)
{
  static const char SCRIPT[] =
    "import inspect, os, sys\n"
    "sys.path.insert(0, os.path.dirname(sys.argv[1]))\n"
    "import torch_driver\n"
    "cls, _ = torch_driver.load_object(sys.argv[2], '--torch')\n"
    "seen, first = set(), True\n"
    "for c in cls.__mro__:\n"
    "    if '__init__' not in vars(c):\n"
    "        continue\n"
    "    if not first and c.__module__.split('.')[0] in ('torch', 'builtins'):\n"
    "        break\n"
    "    first = False\n"
    "    ps = inspect.signature(c.__init__).parameters.values()\n"
    "    for p in ps:\n"
    "        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != 'self' and p.name not in seen:\n"
    "            seen.add(p.name)\n"
    "            print(p.name)\n"
    "    if not any(p.kind == p.VAR_KEYWORD for p in ps):\n"
    "        break\n"
    "    print('--')\n";
  const char *argv[] = {MUONREF_PYTHON, "-c", SCRIPT, driver_path(), a->torch, NULL};
  return run(argv, names);
}

/* Option name k of profile p: its keys, then (from its record, where the
 * records read) the upstream options the record lists as not expressed,
 * which are the port's names too (kozistr/pytorch_optimizer's
 * weight_decouple, adamw_lr, ...: without them it tied with moonlight on six
 * names); NULL past the last. */
static const char *option_name(const muonref_profile *p, const muonref_record *r, size_t k)
{
  if (k < p->n_keys)
    return p->keys[k].name;
  return r && k - p->n_keys < r->n_unexpressed ? r->unexpressed[k - p->n_keys] : NULL;
}

/* Whether name is one of the nw words. */
static int among(const char *name, char words[][64], int nw)
{
  for (int w = 0; w < nw; w++)
    if (!strcmp(name, words[w]))
      return 1;
  return 0;
}

/* How many of the constructor's keywords `words` are option names of the
 * profile p (option_name). */
static int keyword_hits(const muonref_profile *p, const muonref_record *r, char words[][64], int nw)
{
  int hits = 0;
  for (int w = 0; w < nw; w++) {
    int named = 0;
    for (size_t k = 0; !named && option_name(p, r, k); k++)
      named = !strcmp(option_name(p, r, k), words[w]);
    hits += named;
  }
  return hits;
}

/* How many of profile p's keys the constructor's keywords leave out.  Its
 * record's not-expressed options count as the port's names (keyword_hits)
 * but not here: a port's own copy need not implement them (the dion test
 * port takes none of dion's six, normuon's five: counted, it was given
 * normuon's adapter and named normuon). */
static int names_missed(const muonref_profile *p, char words[][64], int nw)
{
  int missed = 0;
  for (size_t k = 0; k < p->n_keys; k++)
    missed += !among(p->keys[k].name, words, nw);
  return missed;
}

/* The adapter for the port: the profile whose option names (keyword_hits)
 * name most of the constructor's keywords (its own and those its **kwargs
 * pass on: signature); of those that tie, the one that names most of the
 * class's own keywords (MegatronMuon017's muon_use_nesterov, where its base
 * takes megatron's muon_nesterov), then the one with
 * the fewest keys the constructor lacks (names_missed: kozistr/
 * pytorch_optimizer's AdaMuon takes 11 names of both its Muon class's record
 * and its own, and lacks 5 of the former's, momentum, nesterov, cautious,
 * adamw_eps and the group key use_muon, but only use_muon of the latter);
 * then the first in the table; nemo where none does; keller, whose
 * optimizer takes group dicts only, when the constructor takes nothing but
 * its parameters. */
static const char *choose_adapter(const char *names, char *why, size_t n)
{
  char words[64][64];
  int nw = 0, own = -1; /* own: the class's own keywords are words[0 .. own) */
  FILE *f = fopen(names, "r");
  if (!f)
    return NULL;
  while (nw < 64 && fscanf(f, "%63s", words[nw]) == 1)
    if (strcmp(words[nw], "--"))
      nw++;
    else if (own < 0)
      own = nw;
  fclose(f);
  if (own < 0)
    own = nw;
  muonref_record *recs = NULL;
  size_t n_recs = 0;
  if (muonref_record_read_dir(muonref_cli_records_dir(NULL), &recs, &n_recs, NULL) != MUONREF_OK)
    recs = NULL, n_recs = 0; /* the keys alone */
  const char *best = "nemo";
  int best_hits = 0, best_own = 0, best_missed = 0;
  for (size_t i = 0; i < muonref_profile_count(); i++) {
    const muonref_profile *p = muonref_profile_at(i);
    const muonref_record *r = NULL;
    for (size_t k = 0; p && k < n_recs && !r; k++)
      r = strcmp(recs[k].name, p->name) ? NULL : &recs[k];
    int hits = p ? keyword_hits(p, r, words, nw) : 0, missed = p ? names_missed(p, words, nw) : 0;
    int mine = p ? keyword_hits(p, r, words, own) : 0;
    if (p && (hits > best_hits ||
              (hits == best_hits && hits > 0 && (mine > best_own || (mine == best_own && missed < best_missed)))))
      best = p->name, best_hits = hits, best_own = mine, best_missed = missed;
  }
  free(recs);
  if (!best_hits && nw <= 1)
    best = "keller";
  if (best_hits)
    snprintf(why, n, "its constructor takes %d of profile %s's option names%s", best_hits, best,
             own < nw ? ", with those its **kwargs pass on to its base class" : "");
  else
    snprintf(why, n, "its constructor takes %s", nw <= 1 ? "only its parameters (group dicts)" : "no profile's option names");
  return best;
}

/* Whether case t carries a flag that no name in seen (a json object used as
 * a set) holds; puts its flags into seen. */
static int new_flag(const json_t *t, json_t *seen)
{
  int fresh = 0;
  const json_t *flags = json_object_get(t, "flags");
  for (size_t f = 0; f < json_array_size(flags); f++) {
    const char *name = json_string_value(json_array_get(flags, f));
    if (name && !json_object_get(seen, name)) {
      fresh = 1;
      json_object_set_new(seen, name, json_true());
    }
  }
  return fresh;
}

/* A copy of vector file j holding its defaults cases, or, of another area,
 * PER_AREA evenly spread step, ns and transpose cases and then, in file
 * order, each such case that carries a flag none picked so far carries
 * (TinyNorm, GradientScale, ...: every behaviour the area tests gets a
 * probe; a Keller copy whose ns_eps differs fails only its TinyNorm cases).
 * NULL: the file has no such case, or memory ran out (*oom set to 1). */
static json_t *probe_file(const json_t *j, int *oom)
{
  const char *area = json_string_value(json_object_get(j, "area"));
  int all = area && !strcmp(area, "defaults");
  size_t eligible = 0;
  const json_t *groups = json_object_get(j, "testGroups");
  for (size_t g = 0; g < json_array_size(groups); g++) {
    const char *kind = json_string_value(json_object_get(json_array_get(groups, g), "kind"));
    if (kind && strcmp(kind, "error"))
      eligible += json_array_size(json_object_get(json_array_get(groups, g), "tests"));
  }
  if (!eligible)
    return NULL;
  /* picked[i]: eligible case i (file order) is in the probe */
  char *picked = calloc(eligible, 1);
  json_t *seen = json_object();
  if (!picked || !seen) {
    free(picked), json_decref(seen);
    *oom = 1;
    return NULL;
  }
  for (int pass = 0; pass < 2; pass++) {
    size_t idx = 0;
    for (size_t g = 0; g < json_array_size(groups); g++) {
      const json_t *grp = json_array_get(groups, g);
      const char *kind = json_string_value(json_object_get(grp, "kind"));
      if (!kind || !strcmp(kind, "error"))
        continue;
      const json_t *ts = json_object_get(grp, "tests");
      for (size_t t = 0; t < json_array_size(ts); t++, idx++) {
        const json_t *c = json_array_get(ts, t);
        if (pass == 0) { /* index k (eligible - 1) / (PER_AREA - 1), k < PER_AREA */
          int pick = all || eligible <= PER_AREA;
          for (size_t k = 0; !pick && k < PER_AREA; k++)
            pick = idx == k * (eligible - 1) / (PER_AREA - 1);
          if (pick)
            picked[idx] = 1, new_flag(c, seen);
        } else if (!picked[idx] && new_flag(c, seen)) {
          picked[idx] = 1;
        }
      }
    }
  }
  json_decref(seen);
  json_t *out = json_deep_copy(j), *gs = json_array();
  size_t idx = 0, taken = 0;
  for (size_t g = 0; g < json_array_size(groups); g++) {
    const json_t *grp = json_array_get(groups, g);
    const char *kind = json_string_value(json_object_get(grp, "kind"));
    if (!kind || !strcmp(kind, "error"))
      continue;
    json_t *copy = json_deep_copy(grp), *tests = json_array();
    const json_t *ts = json_object_get(grp, "tests");
    for (size_t t = 0; t < json_array_size(ts); t++, idx++)
      if (picked[idx])
        json_array_append(tests, json_array_get(ts, t)), taken++;
    if (json_array_size(tests)) {
      json_object_set_new(copy, "tests", tests);
      json_array_append_new(gs, copy);
    } else {
      json_decref(tests), json_decref(copy);
    }
  }
  free(picked);
  json_object_set_new(out, "testGroups", gs);
  json_object_set_new(out, "numberOfTests", json_integer((json_int_t)taken));
  return out;
}

/* Writes the probe set of the vectors under paths into dir/PROFILE/FILE
 * (the vector files' own base names, so the results name the same cases). */
static int write_probes(char *const *paths, int n, const char *dir, long *cases, muonref_error *err)
{
  char **files = NULL;
  size_t count = 0;
  int st = muonref_files_collect(paths, n, &files, &count, err);
  *cases = 0;
  for (size_t i = 0; !st && i < count; i++) {
    json_t *j = muonref_vector_file_load(files[i], err);
    if (!j) {
      st = err->status;
      break;
    }
    int oom = 0;
    json_t *probe = probe_file(j, &oom);
    const char *profile = json_string_value(json_object_get(j, "profile"));
    if (oom) {
      json_decref(j);
      st = muonref_fail(err, MUONREF_ENOMEM, "%s: out of memory choosing its probe cases", files[i]);
      break;
    }
    if (probe && profile) {
      char sub[4200], path[4400];
      snprintf(sub, sizeof sub, "%s/%s", dir, profile);
      if (mkdir(sub, 0700) && errno != EEXIST)
        st = muonref_fail(err, MUONREF_EIO, "%s: %s", sub, strerror(errno));
      snprintf(path, sizeof path, "%s/%s", sub, muonref_basename(files[i]));
      if (!st)
        st = muonref_json_write_atomic(probe, path, 0, err);
      *cases += (long)json_integer_value(json_object_get(probe, "numberOfTests"));
    }
    json_decref(probe);
    json_decref(j);
  }
  muonref_files_free(files);
  if (!st && !*cases)
    st = muonref_fail(err, MUONREF_EFORMAT, "no step, ns or transpose case in the given vectors");
  return st;
}

/* Judges the results against one profile's probe folder in format fmt;
 * with fit != NULL the failures are fitted there (the checker's fit). */
static int judge(const char *results, const char *folder, int set_format, muonref_ns_format fmt, verdict *v,
                 int fit, FILE *report, muonref_error *err)
{
  muonref_checker c;
  int st = muonref_checker_results(&c, results, err);
  if (!st) {
    if (set_format)
      c.format = fmt;
    c.diagnose = fit;
    char *paths[1] = {(char *)folder};
    st = muonref_checker_run(&c, paths, 1, err);
    v->passed = c.passed, v->failed = c.failed, v->skipped = c.skipped, v->format = c.format;
    if (!st && report) {
      /* the fit's lines; where it has none (every failure a case the port skipped: no Newton-Schulz function
       * found, an option it cannot take), say so rather than end on "fitted to it:" */
      char *buf = NULL;
      size_t len = 0;
      FILE *m = open_memstream(&buf, &len);
      if (m) {
        muonref_fit_report(c.fit, m);
        fclose(m);
      }
      if (len)
        fputs(buf, report);
      else
        fprintf(report, "  none fitted: the %ld failing probe cases are cases the port skipped or could not be given "
                        "(`muonref check` on the profile's folder prints each one's reason; a port whose "
                        "Newton-Schulz function is not beside its class takes --torch-option=--ns-function=...)\n",
                v->failed);
      free(buf);
    }
  }
  muonref_checker_free(&c);
  return st;
}

static int usage(void)
{
  fprintf(stderr, "usage: muonref %s\n", MUONREF_IDENTIFY_USAGE);
  return EXIT_USAGE;
}

static int parse(int argc, char **argv, id_args *a)
{
  memset(a, 0, sizeof *a);
  a->mode = "neutral";
  for (int i = 1; i < argc; i++) {
    const char *s = argv[i];
    int takes = !strcmp(s, "--torch") || !strcmp(s, "--results") || !strcmp(s, "--adapter") || !strcmp(s, "--mode") ||
                !strcmp(s, "--ns-format") || !strcmp(s, "--torch-option") || !strcmp(s, "--keep");
    if (takes && i + 1 >= argc) {
      fprintf(stderr, "muonref identify: %s needs a value\n", s);
      return usage();
    }
    if (!strcmp(s, "--torch"))
      a->torch = argv[++i];
    else if (!strcmp(s, "--results"))
      a->results = argv[++i];
    else if (!strcmp(s, "--adapter"))
      a->adapter = argv[++i];
    else if (!strcmp(s, "--mode"))
      a->mode = argv[++i];
    else if (!strcmp(s, "--ns-format"))
      a->ns_format = argv[++i];
    else if (!strcmp(s, "--keep"))
      a->keep = argv[++i];
    else if (!strcmp(s, "--torch-option") || !strncmp(s, "--torch-option=", 15)) {
      if (a->n_opts == MAX_OPTS) {
        fprintf(stderr, "muonref identify: more than %d --torch-option\n", MAX_OPTS);
        return EXIT_USAGE;
      }
      a->opts[a->n_opts++] = s[14] == '=' ? s + 15 : argv[++i];
    } else if (s[0] == '-' && s[1]) {
      fprintf(stderr, "muonref identify: unknown option %s\n", s);
      return usage();
    } else if (a->n_paths < 64)
      a->paths[a->n_paths++] = argv[i];
  }
  if (!!a->torch + !!a->results != 1) {
    fprintf(stderr, "muonref identify: give exactly one of --torch and --results\n");
    return usage();
  }
  if (strcmp(a->mode, "neutral") && strcmp(a->mode, "raw")) {
    fprintf(stderr, "muonref identify: --mode '%s': expected raw or neutral\n", a->mode);
    return EXIT_USAGE;
  }
  if (a->ns_format && strcmp(a->ns_format, "bf16") && strcmp(a->ns_format, "fp32")) {
    fprintf(stderr, "muonref identify: --ns-format '%s': expected bf16 or fp32\n", a->ns_format);
    return EXIT_USAGE;
  }
  return EXIT_OK;
}

/* Runs the driver over the probe folder dir into results; EXIT_* */
static int run_driver(id_args *a, const char *dir, const char *results)
{
  char names[4300], why[160];
  snprintf(names, sizeof names, "%s/signature.txt", dir);
  const char *adapter = a->adapter;
  if (!adapter) {
    int rc = signature(a, names);
    if (rc) {
      fprintf(stderr, "muonref identify: --torch %s: the port cannot be loaded (exit %d)\n", a->torch, rc);
      return rc == 2 || rc == 1 ? EXIT_USAGE : EXIT_INTERNAL;
    }
    adapter = choose_adapter(names, why, sizeof why);
    if (!adapter)
      return EXIT_INTERNAL;
    snprintf(a->chosen, sizeof a->chosen, "%s", adapter);
    if (muonref_verbosity >= 0)
      printf("adapter: %s (%s; --adapter overrides)\n", adapter, why);
  }
  const char *argv[MAX_OPTS + 16];
  int k = 0;
  argv[k++] = MUONREF_PYTHON, argv[k++] = driver_path(), argv[k++] = "--quiet";
  argv[k++] = "--optimizer", argv[k++] = a->torch, argv[k++] = "--adapter", argv[k++] = adapter;
  argv[k++] = "--mode", argv[k++] = a->mode;
  if (a->ns_format)
    argv[k++] = "--ns-format", argv[k++] = a->ns_format;
  for (int i = 0; i < a->n_opts; i++)
    argv[k++] = a->opts[i];
  argv[k++] = "--out", argv[k++] = results, argv[k++] = dir, argv[k] = NULL;
  int rc = run(argv, NULL);
  if (rc) {
    fprintf(stderr, "muonref identify: the driver %s exited %d\n", driver_path(), rc);
    return rc == 2 ? EXIT_USAGE : EXIT_INTERNAL;
  }
  return EXIT_OK;
}

/* The share of the probe cases that pass.  A skipped case (an option the adapter cannot express) counts
 * as failed: leaving it out would crown a profile whose cases the port can hardly run (14 of 61 keller
 * cases run for an mlx port, and all pass); the table shows how many were skipped. */
static double pass_share(const verdict *v)
{
  long all = v->passed + v->failed;
  return (double)v->passed / (double)(all + !all);
}

static int by_passed(const void *x, const void *y)
{
  const verdict *a = x, *b = y;
  double fa = pass_share(a), fb = pass_share(b);
  return fa != fb ? (fa < fb ? 1 : -1) : strcmp(a->profile, b->profile);
}

/* Removes the probe folder (dir/PROFILE/FILE.json, dir/results.json,
 * dir/signature.txt). */
static void remove_tree(const char *dir)
{
  char **files = NULL;
  size_t count = 0;
  char *paths[1] = {(char *)dir};
  if (muonref_files_collect(paths, 1, &files, &count, NULL) == MUONREF_OK)
    for (size_t i = 0; i < count; i++)
      unlink(files[i]);
  muonref_files_free(files);
  char p[4400];
  snprintf(p, sizeof p, "%s/signature.txt", dir);
  unlink(p);
  for (size_t i = 0; i < muonref_profile_count(); i++) {
    snprintf(p, sizeof p, "%s/%s", dir, muonref_profile_name(i));
    rmdir(p);
  }
  rmdir(dir);
}

int cmd_identify(int argc, char **argv)
{
  id_args a;
  int rc = parse(argc, argv, &a);
  if (rc)
    return rc;
  muonref_error err = {0};
  if (!a.n_paths) {
    const char *dflt = muonref_default_vectors(&err);
    if (!dflt) {
      fprintf(stderr, "muonref identify: %s\n", err.message);
      return EXIT_USAGE;
    }
    a.paths[a.n_paths++] = (char *)dflt;
  }
  char dir[4096], results[4200];
  const char *tmp = getenv("TMPDIR");
  if (a.keep)
    snprintf(dir, sizeof dir, "%s", a.keep);
  else
    snprintf(dir, sizeof dir, "%s/muonref-identify.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (a.keep ? (mkdir(dir, 0700) && errno != EEXIST) : !mkdtemp(dir)) {
    fprintf(stderr, "muonref identify: cannot make the folder %s: %s\n", dir, strerror(errno));
    return EXIT_USAGE;
  }
  long cases = 0;
  if (a.torch && write_probes(a.paths, a.n_paths, dir, &cases, &err)) {
    fprintf(stderr, "muonref identify: %s\n", err.message);
    if (!a.keep)
      remove_tree(dir);
    return err.status == MUONREF_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
  }
  snprintf(results, sizeof results, "%s/results.json", dir);
  if (muonref_verbosity >= 0 && a.torch)
    printf("probe set: %ld cases (each profile's defaults cases; per area %d step, ns or transpose cases and one for "
           "each further flag)%s%s\n",
           cases, PER_AREA, a.keep ? " in " : "", a.keep ? dir : "");
  rc = a.torch ? run_driver(&a, dir, results) : EXIT_OK;
  const char *res = a.torch ? results : a.results;
  verdict v[64];
  size_t nv = 0;
  /* the probe set, or with --results the vectors' own profile folders */
  const char *root = a.torch ? dir : a.paths[0];
  for (size_t i = 0; rc == EXIT_OK && i < muonref_profile_count() && nv < 64; i++) {
    char folder[4300];
    struct stat sb;
    snprintf(folder, sizeof folder, "%s/%s", root, muonref_profile_name(i));
    if (stat(folder, &sb) || !S_ISDIR(sb.st_mode))
      continue;
    verdict own = {muonref_profile_name(i), 0, 0, 0, MUONREF_NS_BF16}, alt = own;
    if (judge(res, folder, 0, MUONREF_NS_BF16, &own, 0, NULL, &err) ||
        (own.format == MUONREF_NS_BF16 && !a.ns_format &&
         judge(res, folder, 1, MUONREF_NS_FP32, &alt, 0, NULL, &err))) {
      fprintf(stderr, "muonref identify: %s\n", err.message);
      rc = err.status == MUONREF_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
      break;
    }
    v[nv++] = alt.passed > own.passed ? alt : own;
  }
  if (rc == EXIT_OK && !nv) {
    fprintf(stderr, "muonref identify: no profile's vectors in the given paths\n");
    rc = EXIT_USAGE;
  }
  if (rc == EXIT_OK) {
    qsort(v, nv, sizeof v[0], by_passed);
    int w = 10; /* the longest profile name (pytorch_optimizer) */
    for (size_t i = 0; i < nv; i++)
      w = (int)strlen(v[i].profile) > w ? (int)strlen(v[i].profile) : w;
    printf("%-*s %7s %7s %8s  %s\n", w, "profile", "passed", "failed", "(skipped)", "Newton-Schulz judged in");
    for (size_t i = 0; i < nv; i++)
      printf("%-*s %7ld %7ld %8ld   %s\n", w, v[i].profile, v[i].passed, v[i].failed, v[i].skipped,
             muonref_ns_format_name(v[i].format));
    const verdict *best = &v[0];
    if (!best->failed) {
      printf("nearest profile: %s (every one of its %ld probe cases passes): the port is %s\n", best->profile,
             best->passed, best->profile);
    } else {
      printf("nearest profile: %s (%ld of %ld probe cases pass); the differences fitted to it:\n", best->profile,
             best->passed, best->passed + best->failed);
      char folder[4300];
      verdict again;
      snprintf(folder, sizeof folder, "%s/%s", root, best->profile);
      if (judge(res, folder, 1, best->format, &again, 1, stdout, &err)) {
        fprintf(stderr, "muonref identify: %s\n", err.message);
        rc = EXIT_INTERNAL;
      }
      /* the profile whose option names the constructor takes, where another is nearer: its fit too (a port
       * of it with a bug may pass more of a profile that cannot see the bug: an mlx port with the decoupled
       * decay passes 47 of torch's 51 probe cases, whose 2-D-only routing has no 1-D case) */
      const verdict *own = NULL;
      for (size_t i = 1; i < nv && a.chosen[0]; i++)
        own = strcmp(v[i].profile, a.chosen) ? own : &v[i];
      if (rc == EXIT_OK && own && own->failed) {
        printf("its constructor takes profile %s's option names (%ld of %ld probe cases pass); the differences "
               "fitted to it:\n", own->profile, own->passed, own->passed + own->failed);
        snprintf(folder, sizeof folder, "%s/%s", root, own->profile);
        if (judge(res, folder, 1, own->format, &again, 1, stdout, &err)) {
          fprintf(stderr, "muonref identify: %s\n", err.message);
          rc = EXIT_INTERNAL;
        }
      }
      if (rc == EXIT_OK)
        rc = EXIT_FAILED;
    }
  }
  if (!a.keep)
    remove_tree(dir);
  return rc;
}
