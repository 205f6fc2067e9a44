/*
 * Output paths checked against input paths, so that no command overwrites a file it
 * reads (the scenario, its trace, a config.json, the catalog) or writes two outputs to
 * one file. Files that exist are compared by device and inode (links and other spellings
 * of a path are caught); files that do not exist yet by their normalised path (the
 * folder resolved with realpath, then the name). Devices and pipes (/dev/null, /dev/full,
 * "-" for stdout) are never refused.
 *
 * Ownership: sv_paths_new() returns a set freed with sv_paths_free() (NULL-safe); it
 * copies every string it is given.
 */
#ifndef SERVESIM_PATHS_H
#define SERVESIM_PATHS_H

#include "servesim/base/error.h"

typedef struct sv_paths sv_paths_t;

sv_paths_t *sv_paths_new(void);
void sv_paths_free(sv_paths_t *ps);

/* Record an input; what names it in messages ("the scenario"). 0 or SV_ENOMEM. */
int sv_paths_input(sv_paths_t *ps, const char *path, const char *what);

/* Record every regular file in dir whose name ends in ext (".yaml") as an input. A
 * folder that cannot be read adds nothing (its loader reports that). */
int sv_paths_input_dir(sv_paths_t *ps, const char *dir, const char *ext, const char *what);

/*
 * Record an output written to path, or, with a suffix, to every file named
 * path + "*" + suffix (a report's charts: "r-" and ".svg"). SV_EINVAL when it is, or may
 * be, an input or an output recorded before, with a message naming both:
 *   "--json q.yaml: would overwrite the scenario (q.yaml); write it elsewhere"
 *   "--requests-csv o.csv: the same file as --json o.csv; give each output its own path"
 */
int sv_paths_output(sv_paths_t *ps, const char *path, const char *suffix, const char *what,
                    sv_error_t *err);

#endif
