/*
 * Outputs checked against inputs and against each other (see include/servesim/base/paths.h):
 * device + inode for files that exist, the normalised path for those that do not.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "servesim/base/paths.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/vec_int.h"

typedef struct entry {
    char *given;  /* as the user wrote it */
    char *what;   /* "the scenario", "--json" */
    char *norm;   /* folder through realpath, then the name */
    char *real;   /* realpath of the whole path when it exists (links resolved), else NULL */
    char *suffix; /* outputs only: a family of files norm + "*" + suffix */
    int has_id;
    dev_t dev;
    ino_t ino;
    int input;
} entry_t;

struct sv_paths {
    entry_t *e;
    size_t n, cap;
};

sv_paths_t *sv_paths_new(void)
{
    return calloc(1, sizeof(sv_paths_t));
}

void sv_paths_free(sv_paths_t *ps)
{
    if (!ps) return;
    for (size_t i = 0; i < ps->n; i++) {
        free(ps->e[i].given);
        free(ps->e[i].what);
        free(ps->e[i].norm);
        free(ps->e[i].real);
        free(ps->e[i].suffix);
    }
    free(ps->e);
    free(ps);
}

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* The folder of path through realpath, then the last name; when the folder does not
 * exist, the path made absolute as it is. */
static char *normalise(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX], real[PATH_MAX], out[2 * PATH_MAX + 2];
    const char *base = slash ? slash + 1 : path;
    if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else
        snprintf(dir, sizeof dir, ".");
    if (realpath(dir, real)) {
        snprintf(out, sizeof out, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base);
    } else if (path[0] != '/' && getcwd(real, sizeof real)) {
        snprintf(out, sizeof out, "%s/%s", real, path);
    } else {
        snprintf(out, sizeof out, "%s", path);
    }
    return dupstr(out);
}

/* Fill e from path: 1 to record, 0 for what is never refused (stdout, devices, pipes),
 * SV_ENOMEM. */
static int make_entry(entry_t *e, const char *path, const char *what, const char *suffix, int input)
{
    memset(e, 0, sizeof *e);
    struct stat st;
    if (strcmp(path, "-") == 0) return 0;
    int exists = stat(path, &st) == 0;
    if (exists && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return 0;
    char real[PATH_MAX];
    e->input = input;
    e->given = dupstr(path);
    e->what = dupstr(what);
    e->norm = normalise(path);
    e->real = exists && realpath(path, real) ? dupstr(real) : NULL;
    e->suffix = suffix ? dupstr(suffix) : NULL;
    if (exists && !suffix) {
        e->has_id = 1;
        e->dev = st.st_dev;
        e->ino = st.st_ino;
    }
    if (!e->given || !e->what || !e->norm || (suffix && !e->suffix)) return SV_ENOMEM;
    return 1;
}

static void entry_free(entry_t *e)
{
    free(e->given);
    free(e->what);
    free(e->norm);
    free(e->real);
    free(e->suffix);
}

static int add(sv_paths_t *ps, entry_t *e)
{
    if (SV_GROW(ps->e, ps->cap, ps->n + 1)) {
        entry_free(e);
        return SV_ENOMEM;
    }
    ps->e[ps->n++] = *e;
    return 0;
}

int sv_paths_input(sv_paths_t *ps, const char *path, const char *what)
{
    entry_t e;
    int rc = make_entry(&e, path, what, NULL, 1);
    if (rc <= 0) {
        entry_free(&e);
        return rc;
    }
    return add(ps, &e);
}

int sv_paths_input_dir(sv_paths_t *ps, const char *dir, const char *ext, const char *what)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *de;
    int rc = 0;
    size_t el = strlen(ext);
    while (!rc && (de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l <= el || strcmp(de->d_name + l - el, ext) != 0) continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        rc = sv_paths_input(ps, path, what);
    }
    closedir(d);
    return rc;
}

/* Does name (a normalised or real path) belong to the family prefix*suffix? */
static int in_family(const char *name, const char *prefix, const char *suffix)
{
    size_t n = strlen(name), p = strlen(prefix), s = strlen(suffix);
    return n >= p + s && strncmp(name, prefix, p) == 0 && strcmp(name + n - s, suffix) == 0;
}

/* One file against another entry (neither a family). */
static int same_file(const entry_t *a, const entry_t *b)
{
    if (a->has_id && b->has_id) return a->dev == b->dev && a->ino == b->ino;
    return strcmp(a->norm, b->norm) == 0 || (a->real && b->real && !strcmp(a->real, b->real));
}

static int clash(const entry_t *a, const entry_t *b)
{
    if (a->suffix && b->suffix) return 0; /* two families: different prefixes by design */
    if (a->suffix || b->suffix) {
        const entry_t *fam = a->suffix ? a : b, *one = a->suffix ? b : a;
        return in_family(one->norm, fam->norm, fam->suffix) ||
               (one->real && in_family(one->real, fam->norm, fam->suffix));
    }
    return same_file(a, b);
}

int sv_paths_output(sv_paths_t *ps, const char *path, const char *suffix, const char *what,
                    sv_error_t *err)
{
    entry_t e;
    int rc = make_entry(&e, path, what, suffix, 0);
    if (rc <= 0) {
        entry_free(&e);
        return rc ? sv_errorf(err, rc, "out of memory") : 0;
    }
    for (size_t i = 0; i < ps->n; i++) {
        const entry_t *o = &ps->e[i];
        if (!clash(&e, o)) continue;
        /* A family is shown as its pattern, "--report r-*.svg". */
        const char *star = suffix ? "*" : "", *end = suffix ? suffix : "";
        const char *ostar = o->suffix ? "*" : "", *oend = o->suffix ? o->suffix : "";
        if (o->input)
            rc = sv_errorf(err, SV_EINVAL, "%s %s%s%s: would overwrite %s (%s); write it elsewhere",
                           what, path, star, end, o->what, o->given);
        else
            rc = sv_errorf(err, SV_EINVAL, "%s %s%s%s: %s %s %s%s%s; give each output its own path",
                           what, path, star, end,
                           suffix || o->suffix ? "may be the same file as" : "the same file as",
                           o->what, o->given, ostar, oend);
        entry_free(&e);
        return rc;
    }
    return add(ps, &e) ? sv_errorf(err, SV_ENOMEM, "out of memory") : 0;
}
