/*
 * YAML documents as located trees (see include/servesim/base/yaml.h): libyaml's event
 * stream folded into maps, sequences and scalars that remember their file, line,
 * column and dotted path, with typed getters that turn bad values into messages
 * naming the place, and --set overrides grafted onto the tree.
 */
#include "servesim/base/yaml.h"
#include "servesim/base/suggest.h"

#include "base/fileio_int.h"
#include "base/vec_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#define MAX_DEPTH 64

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* The paths are joined by hand: snprintf's format parsing cost more than the rest of a
 * node's construction, and every node of every catalog file has a path. */
static char *path_join_key(const char *parent, const char *key)
{
    size_t lp = strlen(parent), lk = strlen(key);
    char *p = malloc(lp + lk + 2);
    if (!p) return NULL;
    memcpy(p, parent, lp);
    if (lp) p[lp++] = '.';
    memcpy(p + lp, key, lk + 1);
    return p;
}

static char *path_join_index(const char *parent, size_t i)
{
    char digits[24];
    size_t nd = 0, lp = strlen(parent);
    do
        digits[nd++] = (char)('0' + i % 10);
    while ((i /= 10) > 0);
    char *p = malloc(lp + nd + 3);
    if (!p) return NULL;
    memcpy(p, parent, lp);
    p[lp++] = '[';
    while (nd > 0)
        p[lp++] = digits[--nd];
    p[lp++] = ']';
    p[lp] = '\0';
    return p;
}

static void node_free(sv_ynode_t *node)
{
    if (!node) return;
    free(node->path);
    free(node->scalar);
    for (size_t i = 0; i < node->n; i++) {
        if (node->kind == SV_Y_MAP) {
            free(node->map[i].key);
            node_free(node->map[i].val);
        } else if (node->kind == SV_Y_SEQ) {
            node_free(node->seq[i]);
        }
    }
    for (size_t i = 0; i < node->nasked; i++)
        free(node->asked[i]);
    free(node->asked);
    free(node->map);
    free(node->seq);
    free(node);
}

void sv_ydoc_free(sv_ydoc_t *doc)
{
    if (!doc) return;
    node_free(doc->root);
    for (size_t i = 0; i < doc->nstrings; i++)
        free(doc->strings[i]);
    free(doc->strings);
    free(doc->file);
    free(doc);
}

static sv_ynode_t *node_new(sv_ykind_t kind, const char *file, int line, int col, char *path)
{
    sv_ynode_t *n = calloc(1, sizeof *n);
    if (!n) {
        free(path);
        return NULL;
    }
    n->kind = kind;
    n->file = file;
    n->line = line;
    n->col = col;
    n->path = path;
    return n;
}

/* A deep copy of node whose file names are remapped from document src to dst; NULL when
 * memory runs out. Getters' marks (used, asked) are not copied: a copy is read afresh. */
static sv_ynode_t *node_copy(const sv_ynode_t *n, const sv_ydoc_t *src, const sv_ydoc_t *dst)
{
    const char *file = n->file;
    if (file == src->file) file = dst->file;
    for (size_t i = 0; i < src->nstrings; i++)
        if (file == src->strings[i]) file = dst->strings[i];
    char *path = strdup(n->path ? n->path : "");
    sv_ynode_t *c = path ? node_new(n->kind, file, n->line, n->col, path) : NULL;
    if (!c) return NULL;
    c->quoted = n->quoted;
    if (n->scalar && !(c->scalar = strdup(n->scalar))) goto fail;
    if (n->n && n->kind == SV_Y_MAP && !(c->map = calloc(n->n, sizeof *c->map))) goto fail;
    if (n->n && n->kind == SV_Y_SEQ && !(c->seq = calloc(n->n, sizeof *c->seq))) goto fail;
    c->cap = n->n;
    for (size_t i = 0; i < n->n; i++, c->n++) {
        if (n->kind == SV_Y_MAP) {
            c->map[i].key = strdup(n->map[i].key);
            c->map[i].val = c->map[i].key ? node_copy(n->map[i].val, src, dst) : NULL;
            if (!c->map[i].val) {
                free(c->map[i].key);
                goto fail;
            }
        } else if (!(c->seq[i] = node_copy(n->seq[i], src, dst))) {
            goto fail;
        }
    }
    return c;
fail:
    node_free(c);
    return NULL;
}

int sv_ydoc_copy(const sv_ydoc_t *src, sv_ydoc_t **out, sv_error_t *err)
{
    *out = NULL;
    sv_ydoc_t *d = calloc(1, sizeof *d);
    int bad = !d || !(d->file = strdup(src->file ? src->file : ""));
    if (!bad && src->nstrings) {
        bad = !(d->strings = calloc(src->nstrings, sizeof *d->strings));
        for (size_t i = 0; !bad && i < src->nstrings; i++, d->nstrings++)
            bad = !(d->strings[i] = strdup(src->strings[i]));
        d->capstrings = d->nstrings;
    }
    if (!bad && src->root) bad = !(d->root = node_copy(src->root, src, d));
    if (bad) {
        sv_ydoc_free(d);
        return sv_errorf(err, SV_ENOMEM, "out of memory copying %s",
                         src->file ? src->file : "a document");
    }
    *out = d;
    return 0;
}

const char *sv_ynode_where(const sv_ynode_t *node, char *buf, size_t n)
{
    if (!node)
        snprintf(buf, n, "?");
    else if (node->line <= 0)
        snprintf(buf, n, "%s", node->file);
    else
        snprintf(buf, n, "%s:%d:%d", node->file, node->line, node->col);
    return buf;
}

/* ---- parsing ---------------------------------------------------------------------- */

typedef struct parse_ctx {
    yaml_parser_t parser;
    const char *file;
    sv_error_t *err;
} parse_ctx_t;

static int next_event(parse_ctx_t *pc, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&pc->parser, ev)) {
        const yaml_parser_t *p = &pc->parser;
        return sv_errorf(pc->err, SV_EPARSE, "%s:%zu:%zu: malformed YAML: %s%s%s", pc->file,
                         p->problem_mark.line + 1, p->problem_mark.column + 1,
                         p->problem ? p->problem : "syntax error", p->context ? " " : "",
                         p->context ? p->context : "");
    }
    return 0;
}

static int parse_node(parse_ctx_t *pc, yaml_event_t *ev, char *path, int depth, sv_ynode_t **out);

static int parse_seq(parse_ctx_t *pc, sv_ynode_t *node, int depth)
{
    for (;;) {
        yaml_event_t ev;
        int rc = next_event(pc, &ev);
        if (rc) return rc;
        if (ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            return 0;
        }
        if (sv__grow((void **)&node->seq, &node->cap, node->n + 1, sizeof *node->seq)) {
            yaml_event_delete(&ev);
            return sv_errorf(pc->err, SV_ENOMEM, "%s: out of memory", pc->file);
        }
        char *cpath = path_join_index(node->path, node->n);
        sv_ynode_t *child = NULL;
        rc = parse_node(pc, &ev, cpath, depth + 1, &child);
        yaml_event_delete(&ev);
        if (rc) {
            node_free(child); /* a map or list that failed half-way */
            return rc;
        }
        node->seq[node->n++] = child;
    }
}

/* A set of a map's keys, so that duplicate checking stays linear in the map's size:
 * open addressing over indices into node->map (0 = empty slot, i + 1 = entry i). */
typedef struct keyset {
    size_t *slot;
    size_t cap; /* a power of two, kept at least twice the number of keys */
} keyset_t;

static size_t key_hash(const char *s)
{
    size_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* The entry of node->map holding key, or -1. */
static long keyset_find(const keyset_t *ks, const sv_ynode_t *node, const char *key)
{
    if (!ks->cap) return -1;
    for (size_t i = key_hash(key) & (ks->cap - 1);; i = (i + 1) & (ks->cap - 1)) {
        if (!ks->slot[i]) return -1;
        if (strcmp(node->map[ks->slot[i] - 1].key, key) == 0) return (long)(ks->slot[i] - 1);
    }
}

/* Add entry e of node->map (its key not yet present). 0 or SV_ENOMEM. */
static int keyset_add(keyset_t *ks, const sv_ynode_t *node, size_t e)
{
    if (2 * (e + 1) > ks->cap) {
        size_t nc = ks->cap ? ks->cap * 2 : 16;
        size_t *ns = calloc(nc, sizeof *ns);
        if (!ns) return SV_ENOMEM;
        for (size_t k = 0; k < e; k++) {
            size_t i = key_hash(node->map[k].key) & (nc - 1);
            while (ns[i])
                i = (i + 1) & (nc - 1);
            ns[i] = k + 1;
        }
        free(ks->slot);
        ks->slot = ns;
        ks->cap = nc;
    }
    size_t i = key_hash(node->map[e].key) & (ks->cap - 1);
    while (ks->slot[i])
        i = (i + 1) & (ks->cap - 1);
    ks->slot[i] = e + 1;
    return 0;
}

static int parse_map_entries(parse_ctx_t *pc, sv_ynode_t *node, int depth, keyset_t *ks)
{
    for (;;) {
        yaml_event_t kev;
        int rc = next_event(pc, &kev);
        if (rc) return rc;
        if (kev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&kev);
            return 0;
        }
        if (kev.type != YAML_SCALAR_EVENT) {
            rc = sv_errorf(pc->err, SV_EPARSE, "%s:%zu:%zu: %s: keys must be plain words", pc->file,
                           kev.start_mark.line + 1, kev.start_mark.column + 1,
                           node->path[0] ? node->path : "top level");
            yaml_event_delete(&kev);
            return rc;
        }
        const char *key = (const char *)kev.data.scalar.value;
        if (keyset_find(ks, node, key) >= 0) {
            rc = sv_errorf(pc->err, SV_EPARSE, "%s:%zu:%zu: duplicate key '%s'", pc->file,
                           kev.start_mark.line + 1, kev.start_mark.column + 1, key);
            yaml_event_delete(&kev);
            return rc;
        }
        if (sv__grow((void **)&node->map, &node->cap, node->n + 1, sizeof *node->map)) {
            yaml_event_delete(&kev);
            return sv_errorf(pc->err, SV_ENOMEM, "%s: out of memory", pc->file);
        }
        sv_yentry_t *e = &node->map[node->n];
        memset(e, 0, sizeof *e);
        e->key = dupstr(key);
        char *cpath = path_join_key(node->path, key);
        yaml_event_delete(&kev);
        if (!e->key) {
            free(cpath);
            return sv_errorf(pc->err, SV_ENOMEM, "%s: out of memory", pc->file);
        }
        node->n++;
        if (keyset_add(ks, node, node->n - 1)) {
            free(cpath);
            return sv_errorf(pc->err, SV_ENOMEM, "%s: out of memory", pc->file);
        }
        yaml_event_t vev;
        rc = next_event(pc, &vev);
        if (rc) {
            free(cpath);
            return rc;
        }
        rc = parse_node(pc, &vev, cpath, depth + 1, &e->val);
        yaml_event_delete(&vev);
        if (rc) return rc;
    }
}

static int parse_map(parse_ctx_t *pc, sv_ynode_t *node, int depth)
{
    keyset_t ks = {NULL, 0};
    int rc = parse_map_entries(pc, node, depth, &ks);
    free(ks.slot);
    return rc;
}

/* Takes ownership of path. */
static int parse_node(parse_ctx_t *pc, yaml_event_t *ev, char *path, int depth, sv_ynode_t **out)
{
    int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
    *out = NULL;
    if (!path) return sv_errorf(pc->err, SV_ENOMEM, "%s: out of memory", pc->file);
    if (depth > MAX_DEPTH) {
        free(path);
        return sv_errorf(pc->err, SV_EPARSE, "%s:%d:%d: nesting deeper than %d levels", pc->file,
                         line, col, MAX_DEPTH);
    }
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        sv_ynode_t *n = node_new(SV_Y_SCALAR, pc->file, line, col, path);
        if (!n) return sv_errorf(pc->err, SV_ENOMEM, "%s: out of memory", pc->file);
        n->scalar = dupstr((const char *)ev->data.scalar.value);
        n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
        *out = n;
        return n->scalar ? 0 : sv_errorf(pc->err, SV_ENOMEM, "%s: out of memory", pc->file);
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        int is_seq = ev->type == YAML_SEQUENCE_START_EVENT;
        sv_ynode_t *n = node_new(is_seq ? SV_Y_SEQ : SV_Y_MAP, pc->file, line, col, path);
        if (!n) return sv_errorf(pc->err, SV_ENOMEM, "%s: out of memory", pc->file);
        *out = n;
        return is_seq ? parse_seq(pc, n, depth) : parse_map(pc, n, depth);
    }
    case YAML_ALIAS_EVENT:
        free(path);
        return sv_errorf(pc->err, SV_EPARSE,
                         "%s:%d:%d: YAML aliases (*name) are not supported; write the value out",
                         pc->file, line, col);
    default:
        free(path);
        return sv_errorf(pc->err, SV_EPARSE, "%s:%d:%d: unexpected YAML content", pc->file, line,
                         col);
    }
}

static int parse_stream(parse_ctx_t *pc, sv_ydoc_t *doc)
{
    yaml_event_t ev;
    int rc;
    int docs = 0;
    for (;;) {
        if ((rc = next_event(pc, &ev))) return rc;
        yaml_event_type_t t = ev.type;
        if (t == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            return 0;
        }
        if (t == YAML_DOCUMENT_START_EVENT) {
            if (++docs > 1) {
                rc = sv_errorf(pc->err, SV_EPARSE,
                               "%s:%zu:%zu: only one YAML document per file is allowed", pc->file,
                               ev.start_mark.line + 1, ev.start_mark.column + 1);
                yaml_event_delete(&ev);
                return rc;
            }
        } else if (t != YAML_STREAM_START_EVENT && t != YAML_DOCUMENT_END_EVENT) {
            rc = parse_node(pc, &ev, dupstr(""), 0, &doc->root);
            yaml_event_delete(&ev);
            if (rc) return rc;
            continue;
        }
        yaml_event_delete(&ev);
    }
}

int sv_ydoc_parse(const char *name, const char *text, size_t len, sv_ydoc_t **out, sv_error_t *err)
{
    *out = NULL;
    sv_ydoc_t *doc = calloc(1, sizeof *doc);
    if (!doc || !(doc->file = dupstr(name))) {
        free(doc);
        return sv_errorf(err, SV_ENOMEM, "%s: out of memory", name);
    }
    parse_ctx_t pc = {.file = doc->file, .err = err};
    if (!yaml_parser_initialize(&pc.parser)) {
        sv_ydoc_free(doc);
        return sv_errorf(err, SV_ENOMEM, "%s: out of memory", name);
    }
    yaml_parser_set_input_string(&pc.parser, (const unsigned char *)text, len);
    int rc = parse_stream(&pc, doc);
    yaml_parser_delete(&pc.parser);
    if (rc) {
        sv_ydoc_free(doc);
        return rc;
    }
    *out = doc;
    return 0;
}

int sv_ydoc_load(const char *path, sv_ydoc_t **out, sv_error_t *err)
{
    char *buf;
    size_t len;
    *out = NULL;
    int rc = sv__read_file(path, (size_t)64 << 20, &buf, &len, err);
    if (rc) return rc;
    rc = sv_ydoc_parse(path, buf, len, out, err);
    free(buf);
    return rc;
}

/* ---- overrides -------------------------------------------------------------------- */

static int reroot(sv_ynode_t *n, const char *file, const char *path)
{
    n->file = file;
    n->line = n->col = 0;
    free(n->path);
    if (!(n->path = dupstr(path))) return SV_ENOMEM;
    for (size_t i = 0; i < n->n; i++) {
        char *cp =
            n->kind == SV_Y_MAP ? path_join_key(path, n->map[i].key) : path_join_index(path, i);
        if (!cp) return SV_ENOMEM;
        int rc = reroot(n->kind == SV_Y_MAP ? n->map[i].val : n->seq[i], file, cp);
        free(cp);
        if (rc) return rc;
    }
    return 0;
}

/* The value of key in a map, without marking it as read. */
static sv_ynode_t *find_key(const sv_ynode_t *map, const char *key)
{
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->map[i].key, key) == 0) return map->map[i].val;
    return NULL;
}

static int all_digits(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s)) return 0;
    return 1;
}

/* --set into a list by name: the slot of the item whose name: is tok (a list of named maps,
 * like pools); 0, or the error naming the items. */
static int seq_slot_by_name(sv_ynode_t *cur, const char *tok, const char *src, sv_ynode_t ***slot,
                            sv_error_t *err)
{
    char names[256] = "";
    size_t off = 0;
    sv_ynode_t **found = NULL;
    for (size_t i = 0; i < cur->n && !found; i++) {
        sv_ynode_t *nm = cur->seq[i]->kind == SV_Y_MAP ? find_key(cur->seq[i], "name") : NULL;
        if (!nm || nm->kind != SV_Y_SCALAR) continue;
        if (strcmp(nm->scalar, tok) == 0)
            found = &cur->seq[i];
        else if (off < sizeof names - 1)
            off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", off ? ", " : "",
                                    nm->scalar);
    }
    if (!found)
        return sv_errorf(err, SV_EINVAL,
                         "%s: '%s' is a list of %zu items: index it by number (0 to %zu) "
                         "or by an item's name%s%s%s, not '%s'",
                         src, cur->path[0] ? cur->path : "the top level", cur->n,
                         cur->n ? cur->n - 1 : 0, off ? " (" : "", names, off ? ")" : "", tok);
    *slot = found;
    return 0;
}

/* --set into a map: the slot of key tok, added as an empty map when absent. With drop (KEY=null
 * as the last key) the key is removed instead, as if the file never had it; *slot is untouched. */
static int map_slot(sv_ynode_t *cur, const char *tok, int drop, const char *src, sv_ynode_t ***slot,
                    sv_error_t *err)
{
    sv_ynode_t **found = NULL;
    size_t at = cur->n;
    for (size_t i = 0; i < cur->n; i++)
        if (strcmp(cur->map[i].key, tok) == 0) found = &cur->map[(at = i)].val;
    if (drop) {
        if (at < cur->n) {
            free(cur->map[at].key);
            node_free(cur->map[at].val);
            memmove(&cur->map[at], &cur->map[at + 1], (cur->n - at - 1) * sizeof *cur->map);
            cur->n--;
        }
        return 0;
    }
    if (!found) {
        if (sv__grow((void **)&cur->map, &cur->cap, cur->n + 1, sizeof *cur->map))
            return sv_errorf(err, SV_ENOMEM, "out of memory");
        sv_yentry_t *e = &cur->map[cur->n];
        memset(e, 0, sizeof *e);
        e->key = dupstr(tok);
        e->val = node_new(SV_Y_MAP, src, 0, 0, path_join_key(cur->path, tok));
        if (!e->key || !e->val) {
            free(e->key);
            node_free(e->val);
            return sv_errorf(err, SV_ENOMEM, "out of memory");
        }
        cur->n++;
        found = &e->val;
    }
    *slot = found;
    return 0;
}

int sv_ydoc_set(sv_ydoc_t *doc, const char *assignment, sv_error_t *err)
{
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return sv_errorf(err, SV_EINVAL, "--set %s: expected KEY=VALUE (e.g. hardware.tp=2)",
                         assignment);
    /* Remember the source text; nodes point at it. */
    if (sv__grow((void **)&doc->strings, &doc->capstrings, doc->nstrings + 1, sizeof(char *)))
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    size_t srclen = strlen(assignment) + 8;
    char *src = malloc(srclen);
    if (!src) return sv_errorf(err, SV_ENOMEM, "out of memory");
    snprintf(src, srclen, "--set %s", assignment);
    doc->strings[doc->nstrings++] = src;

    sv_ydoc_t *vdoc = NULL;
    int rc = sv_ydoc_parse(src, eq + 1, strlen(eq + 1), &vdoc, err);
    if (rc) return rc;
    sv_ynode_t *val = vdoc->root;
    vdoc->root = NULL;
    sv_ydoc_free(vdoc);
    if (!val) { /* "key=" sets an empty (null) scalar */
        val = node_new(SV_Y_SCALAR, src, 0, 0, dupstr(""));
        if (!val || !(val->scalar = dupstr(""))) {
            node_free(val);
            return sv_errorf(err, SV_ENOMEM, "out of memory");
        }
    }

    size_t klen = (size_t)(eq - assignment);
    int empty_part = assignment[0] == '.' || eq[-1] == '.';
    for (size_t i = 1; i < klen; i++)
        if (assignment[i] == '.' && assignment[i - 1] == '.') empty_part = 1;
    if (empty_part) {
        node_free(val);
        return sv_errorf(err, SV_EINVAL,
                         "%s: expected a dotted key like hardware.tp or pools.0.gpu before '=', "
                         "got '%.*s'",
                         src, (int)klen, assignment);
    }
    char *key = malloc(klen + 1);
    if (!key) {
        node_free(val);
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    }
    memcpy(key, assignment, klen);
    key[klen] = '\0';

    if (!doc->root) doc->root = node_new(SV_Y_MAP, src, 0, 0, dupstr(""));
    sv_ynode_t *cur = doc->root;
    rc = 0;
    char *save = NULL;
    char *tok = strtok_r(key, ".", &save);
    while (tok && !rc) {
        char *next = strtok_r(NULL, ".", &save);
        sv_ynode_t **slot = NULL;
        if (cur->kind == SV_Y_SEQ && all_digits(tok)) {
            size_t idx = strtoul(tok, NULL, 10);
            if (idx >= cur->n) {
                rc = sv_errorf(err, SV_EINVAL, "%s: index %zu is out of range (%s has %zu items)",
                               src, idx, cur->path[0] ? cur->path : "the top level", cur->n);
                break;
            }
            slot = &cur->seq[idx];
        } else if (cur->kind == SV_Y_SEQ) {
            if ((rc = seq_slot_by_name(cur, tok, src, &slot, err))) break;
        } else if (cur->kind == SV_Y_MAP) {
            int drop =
                !next && val->kind == SV_Y_SCALAR && val->scalar[0] && sv_yscalar_is_null(val);
            if ((rc = map_slot(cur, tok, drop, src, &slot, err)) || drop) break;
        } else {
            rc = sv_errorf(err, SV_EINVAL, "%s: '%s' is a single value, it has no key '%s'", src,
                           cur->path[0] ? cur->path : "the top level", tok);
            break;
        }
        if (!next) {
            char *p = dupstr((*slot)->path);
            if (!p || reroot(val, src, p)) {
                free(p);
                rc = sv_errorf(err, SV_ENOMEM, "out of memory");
                break;
            }
            free(p);
            node_free(*slot);
            *slot = val;
            val = NULL;
        } else if ((*slot)->kind == SV_Y_SCALAR && sv_yscalar_is_null(*slot)) {
            /* "key:" left empty in the file; treat as an empty map to set into. */
            sv_ynode_t *m = node_new(SV_Y_MAP, src, 0, 0, dupstr((*slot)->path));
            if (!m) {
                rc = sv_errorf(err, SV_ENOMEM, "out of memory");
                break;
            }
            node_free(*slot);
            *slot = m;
        }
        cur = *slot;
        tok = next;
    }
    free(key);
    node_free(val);
    return rc;
}

/* ---- getters ---------------------------------------------------------------------- */

static void note_asked(sv_ynode_t *map, const char *key)
{
    for (size_t i = 0; i < map->nasked; i++)
        if (map->asked[i][0] == key[0] && strcmp(map->asked[i], key) == 0) return;
    if (sv__grow((void **)&map->asked, &map->capasked, map->nasked + 1, sizeof(char *))) return;
    char *k = dupstr(key);
    if (k) map->asked[map->nasked++] = k;
}

sv_ynode_t *sv_ymap_get(sv_ynode_t *map, const char *key)
{
    if (!map || map->kind != SV_Y_MAP) return NULL;
    note_asked(map, key);
    /* Readers ask for keys much in the order files write them: the search starts after
     * the last key found and wraps (keys are unique, so the answer is the same). */
    for (size_t j = 0, i = map->hint < map->n ? map->hint : 0; j < map->n;
         j++, i = i + 1 < map->n ? i + 1 : 0) {
        if (map->map[i].key[0] == key[0] && strcmp(map->map[i].key, key) == 0) {
            map->map[i].used = 1;
            map->hint = i + 1 < map->n ? i + 1 : 0;
            return map->map[i].val;
        }
    }
    return NULL;
}

static const char *kind_name(sv_ykind_t k)
{
    return k == SV_Y_MAP ? "a map" : k == SV_Y_SEQ ? "a list" : "a single value";
}

static int expect_kind(const sv_ynode_t *node, sv_ykind_t kind, const char *what, sv_error_t *err)
{
    char where[512];
    if (!node) return sv_errorf(err, SV_EINVAL, "%s: missing", what);
    if (node->kind == kind) return 0;
    return sv_errorf(err, SV_EINVAL, "%s: %s: expected %s, got %s",
                     sv_ynode_where(node, where, sizeof where), node->path[0] ? node->path : what,
                     kind_name(kind), kind_name(node->kind));
}

int sv_yexpect_map(const sv_ynode_t *node, const char *what, sv_error_t *err)
{
    return expect_kind(node, SV_Y_MAP, what, err);
}

int sv_yexpect_seq(const sv_ynode_t *node, const char *what, sv_error_t *err)
{
    return expect_kind(node, SV_Y_SEQ, what, err);
}

int sv_ymap_check_unknown(const sv_ynode_t *map, sv_error_t *err)
{
    if (!map || map->kind != SV_Y_MAP) return 0;
    for (size_t i = 0; i < map->n; i++) {
        if (map->map[i].used) continue;
        char where[512], expected[1536];
        size_t off = 0;
        expected[0] = '\0';
        for (size_t k = 0; k < map->nasked && off < sizeof expected - 1; k++)
            off += (size_t)snprintf(expected + off, sizeof expected - off, "%s%s", k ? ", " : "",
                                    map->asked[k]);
        const sv_ynode_t *v = map->map[i].val;
        char full[600];
        snprintf(full, sizeof full, "%s%s%s", map->path, map->path[0] ? "." : "", map->map[i].key);
        /* A key an override added is named by that override ("--set k=v"), not by a place
         * in the file. */
        sv_ynode_where(v, where, sizeof where);
        const char *near =
            sv_suggest(map->map[i].key, (const char *const *)map->asked, map->nasked);
        if (near)
            return sv_errorf(err, SV_ENOKEY, "%s: unknown key '%s' (did you mean '%s%s%s'?)", where,
                             full, map->path, map->path[0] ? "." : "", near);
        return sv_errorf(err, SV_ENOKEY, "%s: unknown key '%s' (expected one of: %s)", where, full,
                         map->nasked ? expected : "no keys here");
    }
    return 0;
}

int sv_yscalar_is_null(const sv_ynode_t *node)
{
    if (!node || node->kind != SV_Y_SCALAR || node->quoted) return 0;
    const char *s = node->scalar;
    return s[0] == '\0' || strcmp(s, "~") == 0 || strcasecmp(s, "null") == 0;
}

int sv_parse_double(const char *s, double *out)
{
    if (!s || !*s) return SV_EINVAL;
    const char *p = s;
    int neg = 0;
    if (*p == '+' || *p == '-') neg = *p++ == '-';
    if (*p == '.') p++; /* YAML's .inf */
    if (strcasecmp(p, "inf") == 0 || strcasecmp(p, "infinity") == 0) {
        *out = neg ? -INFINITY : INFINITY;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || isnan(v)) return SV_EINVAL;
    *out = v;
    return 0;
}

int sv_parse_long(const char *s, long *out)
{
    if (!s || !*s) return SV_EINVAL;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || errno == ERANGE) return SV_EINVAL;
    if (*end != '\0') {
        /* Accept integral floats written like 1e6 or 4096.0. */
        double d;
        if (sv_parse_double(s, &d) || !isfinite(d) || d != floor(d) || fabs(d) > 9.0e18)
            return SV_EINVAL;
        v = (long)d;
    }
    *out = v;
    return 0;
}

int sv_parse_bool(const char *s, int *out)
{
    if (!s) return SV_EINVAL;
    if (!strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcasecmp(s, "on")) {
        *out = 1;
        return 0;
    }
    if (!strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcasecmp(s, "off")) {
        *out = 0;
        return 0;
    }
    return SV_EINVAL;
}

static int bad_value(const sv_ynode_t *node, const char *expected, sv_error_t *err)
{
    char where[512];
    return sv_errorf(err, SV_EINVAL, "%s: %s: expected %s, got %s%s%s",
                     sv_ynode_where(node, where, sizeof where),
                     node->path[0] ? node->path : "value", expected,
                     node->kind == SV_Y_SCALAR ? "'" : "",
                     node->kind == SV_Y_SCALAR ? node->scalar : kind_name(node->kind),
                     node->kind == SV_Y_SCALAR ? "'" : "");
}

static void range_text(char *buf, size_t n, const char *what, double lo, double hi)
{
    /* A tiny positive lower bound stands for "greater than zero". */
    if (lo > 0 && lo <= 1e-6) {
        if (isinf(hi))
            snprintf(buf, n, "%s > 0", what);
        else
            snprintf(buf, n, "%s > 0 and <= %g", what, hi);
        return;
    }
    if (isinf(lo) && isinf(hi))
        snprintf(buf, n, "%s", what);
    else if (isinf(hi))
        snprintf(buf, n, "%s >= %g", what, lo);
    else if (isinf(lo))
        snprintf(buf, n, "%s <= %g", what, hi);
    else
        snprintf(buf, n, "%s in [%g, %g]", what, lo, hi);
}

int sv_yscalar_double(const sv_ynode_t *node, double lo, double hi, double *out, sv_error_t *err)
{
    double v;
    if (node->kind != SV_Y_SCALAR || sv_parse_double(node->scalar, &v) || v < lo || v > hi) {
        char exp[128]; /* the expectation's text, only for the error */
        range_text(exp, sizeof exp, "a number", lo, hi);
        return bad_value(node, exp, err);
    }
    *out = v;
    return 0;
}

int sv_yscalar_long(const sv_ynode_t *node, long lo, long hi, long *out, sv_error_t *err)
{
    long v;
    if (node->kind != SV_Y_SCALAR || sv_parse_long(node->scalar, &v) || v < lo || v > hi) {
        char exp[128];
        range_text(exp, sizeof exp, "a whole number", (double)lo,
                   hi == LONG_MAX ? INFINITY : (double)hi);
        return bad_value(node, exp, err);
    }
    *out = v;
    return 0;
}

static int get_present(sv_ynode_t *map, const char *key, int required, sv_ynode_t **node,
                       sv_error_t *err)
{
    *node = sv_ymap_get(map, key);
    if (*node && !sv_yscalar_is_null(*node)) return 0;
    if (!required) return 1;
    char where[512];
    return sv_errorf(err, SV_EINVAL, "%s: %s%smissing required key '%s'",
                     sv_ynode_where(*node ? *node : map, where, sizeof where), map->path,
                     map->path[0] ? ": " : "", key);
}

int sv_yget_str(sv_ynode_t *map, const char *key, int required, const char **out, sv_error_t *err)
{
    sv_ynode_t *n;
    int rc = get_present(map, key, required, &n, err);
    if (rc) return rc;
    if (n->kind != SV_Y_SCALAR) return bad_value(n, "a text value", err);
    *out = n->scalar;
    return 0;
}

int sv_yenum_find(const sv_yenum_t *names, int n, const char *text, int *out)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i].name, text) == 0) {
            *out = names[i].value;
            return 0;
        }
    return SV_EINVAL;
}

const char *sv_yenum_list(const sv_yenum_t *names, int n, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && len < size; i++) {
        const char *sep = i == 0 ? "" : i == n - 1 ? " or " : ", ";
        int k = snprintf(buf + len, size - len, "%s%s", sep, names[i].name);
        if (k < 0) break;
        len += (size_t)k;
    }
    return buf;
}

int sv_yscalar_enum(const sv_ynode_t *node, const sv_yenum_t *names, int n, int *out,
                    sv_error_t *err)
{
    if (node->kind == SV_Y_SCALAR && sv_yenum_find(names, n, node->scalar, out) == 0) return 0;
    char list[512];
    return bad_value(node, sv_yenum_list(names, n, list, sizeof list), err);
}

int sv_yget_enum(sv_ynode_t *map, const char *key, int required, const sv_yenum_t *names, int n,
                 int *out, sv_error_t *err)
{
    sv_ynode_t *node;
    int rc = get_present(map, key, required, &node, err);
    return rc ? rc : sv_yscalar_enum(node, names, n, out, err);
}

int sv_yget_double(sv_ynode_t *map, const char *key, int required, double lo, double hi,
                   double *out, sv_error_t *err)
{
    sv_ynode_t *n;
    int rc = get_present(map, key, required, &n, err);
    return rc ? rc : sv_yscalar_double(n, lo, hi, out, err);
}

int sv_yget_long(sv_ynode_t *map, const char *key, int required, long lo, long hi, long *out,
                 sv_error_t *err)
{
    sv_ynode_t *n;
    int rc = get_present(map, key, required, &n, err);
    return rc ? rc : sv_yscalar_long(n, lo, hi, out, err);
}

int sv_yget_bool(sv_ynode_t *map, const char *key, int required, int *out, sv_error_t *err)
{
    sv_ynode_t *n;
    int rc = get_present(map, key, required, &n, err);
    if (rc) return rc;
    if (n->kind != SV_Y_SCALAR || sv_parse_bool(n->scalar, out))
        return bad_value(n, "true or false", err);
    return 0;
}
