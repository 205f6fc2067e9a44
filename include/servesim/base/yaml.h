/*
 * A YAML document as a tree of maps, sequences and scalars, each node carrying the
 * file, line and column it came from and its dotted key path ("hardware.tp",
 * "pools[1].gpu"). It exists so that every loader (catalog, scenario) reports bad
 * input at its exact place and rejects unknown keys.
 *
 * Strictness: duplicate keys, aliases, non-scalar keys and multi-document streams are
 * errors. Getters mark the keys they read; sv_ymap_check_unknown() then reports the
 * first key nobody asked for, listing the keys that were expected.
 *
 * Ownership: sv_ydoc_load()/sv_ydoc_parse() return a document that the caller frees
 * with sv_ydoc_free() (NULL-safe). Every node, string and array belongs to the document
 * (taken from its arena, which sv_ydoc_free releases at once); pointers returned by
 * getters stay valid until it is freed. Nodes are made and changed only by this module.
 */
#ifndef SERVESIM_YAML_H
#define SERVESIM_YAML_H

#include <stddef.h>
#include <stdint.h>

#include "servesim/base/error.h"

typedef enum { SV_Y_SCALAR, SV_Y_MAP, SV_Y_SEQ } sv_ykind_t;

typedef struct sv_ynode sv_ynode_t;

/* A document's memory (private to yaml.c). */
typedef struct sv_yarena sv_yarena_t;

typedef struct sv_yentry {
    char *key;
    sv_ynode_t *val;
    int used;  /* set by getters; unknown-key checking reads it */
    int asked; /* set by sv_ymap_get when it puts the key in the map's asked list */
} sv_yentry_t;

struct sv_ynode {
    sv_ykind_t kind;
    const char *file; /* owned by the document; "--set" for command-line overrides */
    int line, col;    /* 1-based; line 0 for nodes made by an override */
    char *path;       /* dotted key path from the root, "" for the root */
    char *scalar;     /* SV_Y_SCALAR: the text */
    int quoted;       /* SV_Y_SCALAR: written in quotes (so never null) */
    size_t n, cap;    /* number of map entries or sequence items */
    sv_yentry_t *map; /* SV_Y_MAP */
    sv_ynode_t **seq; /* SV_Y_SEQ */
    char **asked;     /* SV_Y_MAP: keys a getter looked for (for error messages) */
    size_t nasked, capasked;
    size_t hint; /* SV_Y_MAP: where sv_ymap_get starts looking (after its last find) */
    uint64_t keybits, askbits; /* SV_Y_MAP: filters of its keys and of the absent keys asked */
    sv_yarena_t *arena;        /* the document's, where the asked keys go */
};

typedef struct sv_ydoc {
    char *file;
    sv_ynode_t *root; /* NULL for an empty document */
    char **strings;   /* names of override sources, freed with the document */
    size_t nstrings, capstrings;
    sv_yarena_t *arena; /* holds the document itself and everything above */
} sv_ydoc_t;

/* Parse a file. On error returns SV_EIO or SV_EPARSE with "file:line:col: ..." in err. */
int sv_ydoc_load(const char *path, sv_ydoc_t **out, sv_error_t *err);

/* Parse text held in memory; name is used in messages as the file name. */
int sv_ydoc_parse(const char *name, const char *text, size_t len, sv_ydoc_t **out, sv_error_t *err);

void sv_ydoc_free(sv_ydoc_t *doc);

/* A deep copy of src (every node, string and place), with no key marked as read: what a
 * loader that applies different overrides to one parsed file starts from. 0 or SV_ENOMEM;
 * the caller frees *out. */
int sv_ydoc_copy(const sv_ydoc_t *src, sv_ydoc_t **out, sv_error_t *err);

/*
 * Apply an override "a.b.c=value" (as given to --set): walks maps (creating missing
 * ones) and sequence items by index ("pools.1.gpu") or by the item's `name`
 * ("pools.decode.gpu"), then sets or replaces the scalar. The value is parsed as a YAML
 * flow scalar or flow collection ("[1, 2]", "{a: 1}"); an explicit null ("a.b=null" or
 * "a.b=~", not "a.b=") removes the key instead. Returns SV_EINVAL with a message
 * when the key has an empty part (".", "a..b"), the path crosses a scalar, or an index
 * or name does not match an item.
 */
int sv_ydoc_set(sv_ydoc_t *doc, const char *assignment, sv_error_t *err);

/* "file:line:col" of a node, or "--set" for an override; writes into buf and returns it. */
const char *sv_ynode_where(const sv_ynode_t *node, char *buf, size_t n);

/* Look a key up in a map and mark it used; NULL if absent or if map is not a map. */
sv_ynode_t *sv_ymap_get(sv_ynode_t *map, const char *key);

/* Require node to be a map (what names the thing for the message). */
int sv_yexpect_map(const sv_ynode_t *node, const char *what, sv_error_t *err);
int sv_yexpect_seq(const sv_ynode_t *node, const char *what, sv_error_t *err);

/* An unused key in map becomes an SV_ENOKEY error naming it and the expected keys. */
int sv_ymap_check_unknown(const sv_ynode_t *map, sv_error_t *err);

/* A scalar that is empty, "null" or "~" (unquoted) stands for "not given". */
int sv_yscalar_is_null(const sv_ynode_t *node);

/*
 * Typed getters for map[key]. Return 0 when the key was present and *out was set,
 * 1 when it was absent (or null) and not required (*out untouched), and a negative
 * code with a located message otherwise. Numbers accept "inf"/".inf"; ranges are
 * inclusive.
 */
int sv_yget_str(sv_ynode_t *map, const char *key, int required, const char **out, sv_error_t *err);
int sv_yget_double(sv_ynode_t *map, const char *key, int required, double lo, double hi,
                   double *out, sv_error_t *err);
int sv_yget_long(sv_ynode_t *map, const char *key, int required, long lo, long hi, long *out,
                 sv_error_t *err);
int sv_yget_bool(sv_ynode_t *map, const char *key, int required, int *out, sv_error_t *err);

/* One allowed name of an enumerated key, and the value it stands for. */
typedef struct sv_yenum {
    const char *name;
    int value;
} sv_yenum_t;
/* map[key] as one of the n names: *out = its value. The error lists the names in table
 * order ("expected a, b or c, got 'x'"), so the table is the only place they are written. */
int sv_yget_enum(sv_ynode_t *map, const char *key, int required, const sv_yenum_t *names, int n,
                 int *out, sv_error_t *err);
/* The same for a scalar node on its own (a sequence item). */
int sv_yscalar_enum(const sv_ynode_t *node, const sv_yenum_t *names, int n, int *out,
                    sv_error_t *err);
/* The same for text already read: SV_EINVAL when it is none of the names (no message). */
int sv_yenum_find(const sv_yenum_t *names, int n, const char *text, int *out);
/* "a, b or c": the names of the table, for a message; returns buf. */
const char *sv_yenum_list(const sv_yenum_t *names, int n, char *buf, size_t size);

/* The same conversions for a scalar node on its own (a sequence item). */
int sv_yscalar_double(const sv_ynode_t *node, double lo, double hi, double *out, sv_error_t *err);
int sv_yscalar_long(const sv_ynode_t *node, long lo, long hi, long *out, sv_error_t *err);

/* Plain-text number parsing used by the getters and by the CLI: whole string must match. */
int sv_parse_double(const char *s, double *out);
int sv_parse_long(const char *s, long *out);
int sv_parse_bool(const char *s, int *out);

#endif
