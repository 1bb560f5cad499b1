/* muonref command: the subcommands, one per file (cli/cmd_*.c).
 *
 * Exit statuses, the same for every subcommand (README.md, "Exit status"):
 *   0  success (for `check`: every case passed)
 *   1  the judged implementation failed at least one case
 *   2  usage error or unusable input (bad option, malformed file); the
 *      message names the input and the rule it broke
 *   3  an internal or numerical failure (out of memory, no convergence) */
#ifndef MUONREF_CLI_COMMANDS_H
#define MUONREF_CLI_COMMANDS_H

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_INTERNAL = 3 };

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
  const char *summary;
  const char *usage; /* printed by `muonref NAME --help` (NULL: NAME handles --help) */
} command;

int cmd_profile(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_ref(int argc, char **argv);
int cmd_ns(int argc, char **argv);
int cmd_state(int argc, char **argv);

#endif
