/*
 * Internal: the command lines of `servesim compare` and `servesim replay` (argument
 * parsing only; the work is in compare.h, replay.h and the report functions). Kept out of
 * sim/cli/main.c, which dispatches to it, so the two commands live in files of their own.
 */
#ifndef SERVESIM_CLI_CMP_INT_H
#define SERVESIM_CLI_CMP_INT_H

/* Run cmd ("compare" or "replay") with its arguments; returns the exit status. */
int sv__cli_compare_replay(const char *cmd, const char *catalog_dir, int argc, char **argv);

#endif
