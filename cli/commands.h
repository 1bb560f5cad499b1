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

/* The PyTorch driver of `muonref check --torch` and `muonref identify`:
 * $MUONREF_DRIVER, else the source tree's (MUONREF_DRIVER_SRC) for the
 * build tree's command, else the installed one (cli/datapath.h), run by
 * MUONREF_PYTHON (the build defines all three). */
#ifndef MUONREF_DRIVER_SRC
#define MUONREF_DRIVER_SRC "vectors/drivers/torch_driver.py"
#endif
#ifndef MUONREF_DRIVER_INST
#define MUONREF_DRIVER_INST MUONREF_DRIVER_SRC
#endif
#ifndef MUONREF_PYTHON
#define MUONREF_PYTHON "python3"
#endif

/* -q/--quiet and -v/--verbose, the same for every subcommand: main.c takes
 * them out of argv before the subcommand parses it (both: a usage error).
 *   -1 quiet:   no progress, no per-item or informational lines; the
 *               result itself (a table, a value, a listing) and errors still print
 *    0 normal:  the result; a progress line on standard error only when it is a terminal
 *    1 verbose: also a line per item where the command has items (check: every
 *               case; vectors: every test group) */
extern int muonref_verbosity;

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
  const char *summary;
  const char *usage; /* printed by `muonref NAME --help` (NULL: NAME handles --help) */
} command;

/* `muonref check --help` (also printed on a usage error); man/muonref-check.1
 * is generated from it by help2man (make man). */
#define MUONREF_CHECK_USAGE \
  "check (--impl fast-bf16|fast-fp32 [--fault NAME] | --results FILE | --torch MODULE_OR_FILE:CLASS)\n" \
  "                     [OPTIONS] [VECTOR FILES OR DIRS...]\n" \
  "       muonref check --fault list\n" \
  "Judges an implementation against golden vectors.  Without vector paths: ./vectors if it exists, else\n" \
  "the installed set (muonref vectors prints its path).\n" \
  "\n" \
  "Options:\n" \
  "  --impl fast-bf16|fast-fp32\n" \
  "                       judge muonref's own fast path, Newton-Schulz in bf16 or fp32\n" \
  "  --fault NAME         run the fast path with a deliberate fault (mutation testing; list: --fault list)\n" \
  "  --results FILE       judge an outside implementation's results file (spec/vectors.md section 4)\n" \
  "  --torch MODULE_OR_FILE:CLASS\n" \
  "                       run a PyTorch optimizer through the driver torch_driver.py (its --optimizer)\n" \
  "                       and judge its results: driver and judge in one command (the installed\n" \
  "                       driver; $MUONREF_DRIVER names another); the port runs in both lifecycles,\n" \
  "                       assign (judged) and training-loop (zero_grad, step(closure): a second run\n" \
  "                       whose failures count too), unless a --torch-option names --lifecycle\n" \
  "  --torch-option OPT   one more option for the driver (repeatable), e.g. --torch-option=--ns-format=fp32;\n" \
  "                       with --profile NAME the driver takes that profile's adapter unless an\n" \
  "                       --adapter is given here\n" \
  "  --adapter NAME       with --torch: the driver's adapter (--torch-option=--adapter=NAME; without it\n" \
  "                       the driver chooses one from the port's constructor)\n" \
  "  --ns-function FILE:FUNC, --state-name PORT_KEY=KEY  with --torch: the driver's options of those\n" \
  "                       names (its messages suggest them), as --torch-option=--ns-function=... would\n" \
  "  --write-results FILE  with --impl: also write the fast path's results file\n" \
  "  --junit FILE         also write the verdicts as JUnit XML: one testcase per vector case,\n" \
  "                       classname PROFILE.AREA, the judge's message as the failure message\n" \
  "  --tap                write the verdicts as TAP version 14 on standard output (the table and the\n" \
  "                       FAIL lines go to standard error); --tap=13 writes the same stream as TAP\n" \
  "                       version 13, for consumers that refuse 14 (Debian 12's prove)\n" \
  "  --baseline FILE      an expected-failures file, a line FILE#TCID [REASON] [URL] per case: its failing\n" \
  "                       cases count as known (KNOWN with the reason; JUnit skipped, TAP TODO), so the\n" \
  "                       exit status is 1 only for new failures (a port's CI); listed cases that pass\n" \
  "                       are reported FIXED\n" \
  "  --write-failures FILE  write every failing case as a FILE#TCID line under a comment saying how it\n" \
  "                       fails (what --baseline reads; add each line's reason and issue URL)\n" \
  "  --environment FILE   with --results: the run's environment statement (a submission: spec/vectors.md\n" \
  "                       section 9), checked against the results file and the judged vectors' release\n" \
  "                       and profile; a statement the run contradicts is unusable input (exit 2)\n" \
  "  --enforce-raw        count the raw run's failures too: a results file of the driver's default\n" \
  "                       --mode neutral+raw is judged neutral (the port's logic) and its raw results\n" \
  "                       (this platform's own bf16 arithmetic) are a second verdict, reported but not\n" \
  "                       counted unless this is given\n" \
  "  --profile NAME       without vector paths: only that profile's folder of the default set (./vectors\n" \
  "                       or the installed one), e.g. --profile torch\n" \
  "  --profile-file FILE  a user's profile record (spec/profiles/README.md): the vectors of that profile\n" \
  "                       (muonref gen --profile-file FILE) are read through it; repeatable (with\n" \
  "                       --torch once: the driver builds the port with its base's adapter)\n" \
  "  --no-diagnosis       with --results/--torch: no diagnosis line under each failing case (by default the\n" \
  "                       catalogued fault or the platform effect that gives the port's result is named)\n" \
  "  -q, --quiet          no per-case FAIL lines and no progress line; the table and the totals still print\n" \
  "  -v, --verbose        a line for every case, passing ones included\n" \
  "  -h, --help           print this help\n" \
  "\n" \
  "On a terminal a progress line (cases judged, failures so far) shows on standard error.\n" \
  "Exit status: 0 every case passed; 1 a case failed; 2 usage error or unusable input (a\n" \
  "malformed vector or results file, an unwritable --junit FILE, a port the driver cannot load, an\n" \
  "environment statement the run contradicts);\n" \
  "3 internal failure."

/* The arguments of `muonref gen`. */
#define MUONREF_GEN_ARGS "[--prec BITS] [--out DIR] [--area NAME] [--profile NAME | --profile-file FILE] [--threads N]"

/* `muonref profile --help`. */
#define MUONREF_PROFILE_USAGE \
  "profile [NAME | --profile-file FILE] [--json]\n" \
  "       muonref profile --markdown | --fields-markdown | --completeness-markdown | --test-ports\n" \
  "                     | --c-table | --c-ids | --c-checks | --c-catalogue-ids [--records DIR]\n" \
  "Without arguments: every built-in profile with the port it describes.  With NAME: the port's options\n" \
  "under its own names, then every field of the profile (spec/profiles/NAME.md).  NAME@RELEASE (emerging@0.3)\n" \
  "is a release of NAME, with its upstream ref in the list (spec/profiles/README.md, \"Releases\").\n" \
  "\n" \
  "Options:\n" \
  "  --profile-file FILE  a user's profile record (a built-in base and what differs; spec/profiles/README.md):\n" \
  "                       check it completely and print it as NAME would be\n" \
  "  --json               print the profile as a resolved record: every default, the key table, the areas\n" \
  "  --markdown           the table of the profiles for spec/profiles/README.md, from the records\n" \
  "  --fields-markdown    the table of every option field's values and the profiles that take each, for\n" \
  "                       spec/profiles/fields.md, from the records\n" \
  "  --completeness-markdown  the table of the options each profile expresses and those it does not, with\n" \
  "                       why, for spec/profiles/completeness.md, from the records\n" \
  "  --test-ports         one line per record: NAME FILE:CLASS ADAPTER MODE NS_FORMAT CONSTRUCTOR, its\n" \
  "                       PyTorch test port (FILE relative to the source tree), for test scripts\n" \
  "  --c-table            core/profile_table.h, the built-in profiles' C table, from the records\n" \
  "  --c-ids              include/muonref/profile_ids.h, the profile ids, from the records\n" \
  "  --c-checks           core/checks_table.h, the catalogues of checks (each row a field, a rule and a\n" \
  "                       message), from the records' member \"catalogue\"\n" \
  "  --c-catalogue-ids    include/muonref/catalogue_ids.h, the catalogues' numbers, from the records\n" \
  "  --records DIR        the folder of the records (default: the source tree's spec/profiles, else the\n" \
  "                       installed copy)\n" \
  "  -h, --help           print this help\n" \
  "\n" \
  "Exit status: 0 printed; 2 an unknown profile, or a record that is not valid (the message names the\n" \
  "file, the member and the rule); 3 internal failure."

/* `muonref vectors --help`. */
#define MUONREF_VECTORS_USAGE \
  "vectors [-q|--quiet] [-v|--verbose] [--profile-file FILE] [VECTOR FILES OR DIRS...]\n" \
  "   or: muonref vectors --diff OLD NEW\n" \
  "Lists golden vector sets: their release, each file's profile, area and case count, and the folder they\n" \
  "come from. Without paths: ./vectors if it exists, else the installed set.\n" \
  "\n" \
  "Options:\n" \
  "  -q, --quiet          print only the folder of the vectors\n" \
  "  -v, --verbose        also list each file's test groups (kind and case count)\n" \
  "  --profile-file FILE  a user's profile record, which the vectors of that profile need (repeatable)\n" \
  "  --diff OLD NEW       the cases two folders of vectors (two releases) differ in: one line per added,\n" \
  "                       changed or removed case (file and tcId); NEWS says why\n" \
  "  -h, --help           print this help\n" \
  "\n" \
  "Exit status: 0 listed; 2 no vectors found, or a file that is not a vector file."

/* The folder of the profile records: `given`, else $MUONREF_RECORDS, else
 * the source tree's spec/profiles for the build tree's command, else the
 * installed copy (cli/datapath.h; cmd_profile.c). */
const char *muonref_cli_records_dir(const char *given);

/* `muonref identify --help`; man/muonref-identify.1 is generated from it. */
#define MUONREF_IDENTIFY_USAGE \
  "identify (--torch MODULE_OR_FILE:CLASS | --results FILE) [OPTIONS] [VECTORS]\n" \
  "Names the profile a PyTorch Muon port is, or the nearest one and how the port differs from it.  A probe\n" \
  "set is derived from every profile's golden vectors under VECTORS (default: ./vectors if it exists, else\n" \
  "the installed set; a folder of profile folders): each profile's defaults cases and, of every other\n" \
  "area, 3 step, ns or transpose cases and one for each further flag (TinyNorm, ...).  The driver\n" \
  "torch_driver.py runs the port once over it (as\n" \
  "`muonref check --torch` does), with the adapter of the profile whose option names the port's\n" \
  "constructor takes; the results are judged against each profile (bf16 results also as fp32: the\n" \
  "better counts), and the differences from the nearest profile are fitted to the option space\n" \
  "(spec/vectors.md section 7).\n" \
  "\n" \
  "Options:\n" \
  "  --torch MODULE_OR_FILE:CLASS\n" \
  "                       the port: a module path or a file, and its optimizer class (the driver's --optimizer)\n" \
  "  --results FILE       judge a results file instead (of a run over the whole VECTORS, not a probe set)\n" \
  "  --adapter NAME       the driver's adapter (default: chosen from the constructor's keyword names)\n" \
  "  --mode raw|neutral   the driver's mode (default neutral: the port's logic, not the platform's bf16)\n" \
  "  --ns-format bf16|fp32  the port's Newton-Schulz format (default: the adapter's; bf16 results are also\n" \
  "                       judged as fp32)\n" \
  "  --torch-option OPT   one more option for the driver (repeatable)\n" \
  "  --keep DIR           write the probe set and the results file into DIR and keep them\n" \
  "  -q, --quiet          only the table and the verdict\n" \
  "  -h, --help           print this help\n" \
  "\n" \
  "Prints each profile's passed and failed probe cases, the nearest profile, and the explanations the\n" \
  "fit finds for its failures (\"explained: ...\").\n" \
  "Exit status: 0 the port is a profile (every probe case of the nearest passes); 1 it differs from every\n" \
  "profile; 2 usage error or unusable input (a port the driver cannot load); 3 internal failure."

int cmd_identify(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_vectors(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_ref(int argc, char **argv);
int cmd_ns(int argc, char **argv);
int cmd_state(int argc, char **argv);

#endif
