/*
 * Internal: the command line's help as data (sim/cli/help.c). One table per command
 * lists every option the command's parser accepts, with its argument and a one-line
 * meaning that states the default; `servesim help`, `servesim help CMD`, `servesim CMD
 * --help` and the "did you mean" of an unknown option or command all read these tables, so
 * a new option is one row (and its branch in the parser). The parsers check their option
 * names against the tables as they run (sv__opt_listed below); tests/help_checks.sh fails
 * when a parser takes an option its table (or docs/servesim.1) lacks, or the other way round.
 *
 * Ownership: every table and string is static; nothing is allocated.
 */
#ifndef SERVESIM_CLI_HELP_INT_H
#define SERVESIM_CLI_HELP_INT_H

#include <stdio.h>

/* One option: its name ("--json"), its argument ("FILE"; NULL for a flag) and what it
 * does, with its default, on one line. */
typedef struct sv__opt_help {
    const char *name;
    const char *arg;
    const char *meaning;
} sv__opt_help_t;

/* One command: usage after "servesim NAME ", the one-line summary `servesim help` lists,
 * a short paragraph, the options (ended by a row with a NULL name), notes printed after
 * the options (NULL: none) and one example command line. */
typedef struct sv__cmd_help {
    const char *name;
    const char *usage;
    const char *summary;
    const char *about;
    const sv__opt_help_t *opts;
    const char *notes;
    const char *example;
} sv__cmd_help_t;

/* The command named name, or NULL. */
const sv__cmd_help_t *sv__help_command(const char *name);

/* `servesim help`: the commands, the options before a command, where to read more. */
void sv__help_overview(FILE *f);

/* `servesim CMD --help`: usage, about, every option, notes, example. */
void sv__help_print(const sv__cmd_help_t *h, FILE *f);

/*
 * The tables drive the parsers: main names the command whose arguments are being parsed
 * (NULL: the options before the command), and every option name a parser compares an
 * argument with goes through sv__opt_listed (sv__opt_value and sv__opt_is do it). A name
 * the command's table lacks, or a listed option that reaches the parser's "unknown option"
 * branch, is a defect of the program: it prints "servesim: error: internal: ..." and exits
 * with 70 (EX_SOFTWARE). tests/help_checks.sh runs every command with every listed option
 * and with an unknown one, so both kinds fail the tests.
 */
void sv__help_parsing(const char *cmd);
void sv__opt_listed(const char *name);
/* argv word arg is the flag name (checked with sv__opt_listed). */
int sv__opt_is(const char *arg, const char *name);

/* 1 when an argument is --help or -h (a command's help is asked for). */
int sv__help_asked(int argc, char **argv);

/* `servesim help [CMD]` (argv: the words after "help"); returns the exit status. */
int sv__help_main(int argc, char **argv);

/* Print the one-line error for an unknown option of cmd (NULL: before the command), with
 * the closest option of that command when one is near; returns EXIT_FAILURE (2 before the
 * command, as for an unknown command). */
int sv__unknown_option(const char *cmd, const char *opt);

/* Print the one-line error for an unknown command, with the closest command when one is
 * near; returns 2. */
int sv__unknown_command(const char *cmd);

#endif
