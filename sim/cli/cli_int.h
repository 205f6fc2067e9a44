/*
 * Internal: what the command-line files share (sim/cli/main.c, sim/cli/cli_cmp.c): reading an
 * option's value the one way every command accepts it.
 */
#ifndef SERVESIM_CLI_INT_H
#define SERVESIM_CLI_INT_H

/* An option's value: "--opt=value" or "--opt value". NULL when argv[*i] is not this
 * option; NULL with *missing set (and the option remembered) when nothing follows it. */
const char *sv__opt_value(int argc, char **argv, int *i, const char *name, int *missing);
/* The option whose value was last found missing, for the message. */
const char *sv__opt_missing(void);

#endif
