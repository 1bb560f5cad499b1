/* muonref: the command-line entry point; dispatches to cli/cmd_*.c. */
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "config.h"

int muonref_verbosity = 0;

static int cmd_version(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  printf("muonref %s\n", PACKAGE_VERSION);
  return EXIT_OK;
}

static const command COMMANDS[] = {
  {"bench", cmd_bench, "time the fast Newton-Schulz and optimizer step (muonref bench --help)", NULL},
  {"check", cmd_check, "judge an implementation against golden vectors (muonref check --impl fast-bf16 vectors/)",
   MUONREF_CHECK_USAGE},
  {"gen", cmd_gen, "regenerate the golden vectors from the reference (muonref gen --out vectors)",
   "gen " MUONREF_GEN_ARGS "\n"
   "  writes DIR/PROFILE/PROFILE_AREA.json for every profile (or NAME, or the record FILE: a user's profile,\n"
   "  spec/profiles/README.md); BITS >= 256, default 256"},
  {"identify", cmd_identify, "name the profile a PyTorch port is, or how it differs (muonref identify --torch F:C)",
   MUONREF_IDENTIFY_USAGE},
  {"ns", cmd_ns, "Newton-Schulz convergence study (muonref ns --report DIR)",
   "ns --preset NAME [--steps K] --sigma S | ns --report DIR [--smin S]    (spec/ns-study.md)"},
  {"profile", cmd_profile, "list the profiles, or print one profile's options (muonref profile nemo)",
   MUONREF_PROFILE_USAGE},
  {"ref", cmd_ref, "run the high-precision reference on a tensor file (muonref ref polar|ns|step FILE)",
   "ref polar|ns|step FILE [--prec BITS] [--profile NAME]\n"
   "  FILE: a tensor {\"dtype\": \"f32\", \"shape\": [r, c], \"hex\": \"...\"} (spec/vectors.md section 1);\n"
   "  for step also {\"param\": tensor, \"grads\": [tensor, ...]}"},
  {"state", cmd_state, "check a state file (a checkpoint) and print a summary (muonref state FILE)",
   "state FILE    (spec/muon.md section 11.1; exit 2 for a corrupted, truncated or foreign file)"},
  {"vectors", cmd_vectors, "list the golden vector sets: profiles, areas, case counts, folder",
   MUONREF_VECTORS_USAGE},
  {"version", cmd_version, "print the version", "version"},
};

static int usage(FILE *f)
{
  fprintf(f, "usage: muonref COMMAND [ARGS]\n\ncommands:\n");
  for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
    fprintf(f, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
  fprintf(f, "\noptions of every command:\n"
             "  -q, --quiet    no progress and no informational lines: the result and errors only\n"
             "  -v, --verbose  also a line per item where the command has items (check: every case)\n"
             "  -h, --help     the command's usage (muonref COMMAND --help)\n"
             "\nexit status: 0 success, 1 a judged case failed, 2 usage error or unusable input,\n"
             "3 internal or numerical failure\n");
  return f == stdout ? EXIT_OK : EXIT_USAGE;
}

int main(int argc, char **argv)
{
  if (argc < 2)
    return usage(stderr);
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))
    return usage(stdout);
  for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++) {
    if (strcmp(argv[1], COMMANDS[i].name))
      continue;
    /* -q/--quiet and -v/--verbose mean the same in every subcommand: taken out here */
    int quiet = 0, verbose = 0, n = 2;
    for (int k = 2; k < argc; k++) {
      if (!strcmp(argv[k], "-q") || !strcmp(argv[k], "--quiet"))
        quiet = 1;
      else if (!strcmp(argv[k], "-v") || !strcmp(argv[k], "--verbose"))
        verbose = 1;
      else
        argv[n++] = argv[k];
    }
    argv[n] = NULL;
    argc = n;
    if (quiet && verbose) {
      fprintf(stderr, "muonref %s: --quiet and --verbose exclude each other\n", argv[1]);
      return EXIT_USAGE;
    }
    muonref_verbosity = quiet ? -1 : verbose;
    if (argc == 3 && COMMANDS[i].usage && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
      /* a one-line usage is followed by the summary; a longer one says it all */
      printf("usage: muonref %s\n", COMMANDS[i].usage);
      if (!strchr(COMMANDS[i].usage, '\n'))
        printf("%s\n", COMMANDS[i].summary);
      return EXIT_OK;
    }
    return COMMANDS[i].run(argc - 1, argv + 1);
  }
  fprintf(stderr, "muonref: unknown command '%s'\n", argv[1]);
  usage(stderr);
  return EXIT_USAGE;
}
