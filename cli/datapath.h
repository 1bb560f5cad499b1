/* muonref command: where the scripts it runs live (the PyTorch driver of
 * `check --torch`, the PyTorch half of `bench`).
 *
 * The command built in a build tree runs the source tree's scripts, so that a
 * change to a script is tested with the command beside it; an installed
 * command runs the installed scripts only, whatever build tree may be
 * readable on the machine (issue 29: an installed binary reached into a
 * build tree whenever its source path was readable). */
#ifndef MUONREF_CLI_DATAPATH_H
#define MUONREF_CLI_DATAPATH_H

/* 1 when the running executable (/proc/self/exe, symbolic links resolved)
 * is the build tree's muonref (MUONREF_BUILD_EXE, set by Makefile.am), else
 * 0 (also when either path cannot be resolved: an installed command). */
int cli_in_build_tree(void);

/* The value of the environment variable `env` when it is set and not empty
 * (a staged install, as $MUONREF_VECTORS_DIR for the vectors; env may be
 * NULL), else in_source_tree when cli_in_build_tree(), else installed
 * (static strings or the environment's; nothing is checked for existence:
 * the caller's exec names a missing file). */
const char *cli_data_path(const char *env, const char *in_source_tree, const char *installed);

#endif
