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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#define MAX_DEPTH 64

/* ---- the document's memory -------------------------------------------------------- */

/* A document's nodes, strings and arrays are carved from a few large chunks that the
 * document owns (the catalog's three files make some 2,500 nodes): parsing makes a
 * handful of malloc calls instead of several per node, and sv_ydoc_free releases the
 * chunks instead of walking the tree. What an edit gives up (a subtree an override
 * replaced, an array that outgrew its place) stays until the document is freed. */
typedef struct chunk {
    struct chunk *prev;
} chunk_t;

struct sv_yarena {
    char *cur, *end; /* the free part of the newest chunk */
    chunk_t *last;   /* the newest chunk; each links the one before */
    size_t next;     /* the size of the next chunk: doubling keeps them few */
    size_t total;    /* bytes in all chunks */
};

#define OBJ_ALIGN _Alignof(max_align_t)
#define CHUNK_HEAD ((sizeof(chunk_t) + OBJ_ALIGN - 1) & ~(OBJ_ALIGN - 1))
#define CHUNK_MIN ((size_t)4 << 10)
#define CHUNK_STEP_MAX ((size_t)1 << 20) /* chunks stop doubling at this size */
#define ARENA_PER_BYTE 6                 /* a tree's bytes per byte of its text, about */

/* Add a chunk with room for n bytes. 0 or SV_ENOMEM. */
static int arena_more(sv_yarena_t *a, size_t n)
{
    size_t size = a->next > CHUNK_HEAD + n ? a->next : CHUNK_HEAD + n;
    chunk_t *c = malloc(size);
    if (!c) return SV_ENOMEM;
    c->prev = a->last;
    a->last = c;
    a->cur = (char *)c + CHUNK_HEAD;
    a->end = (char *)c + size;
    a->total += size;
    if (a->next < CHUNK_STEP_MAX) a->next *= 2;
    return 0;
}

/* n bytes aligned to align (a power of two), or NULL when memory runs out. */
static void *arena_alloc(sv_yarena_t *a, size_t n, size_t align)
{
    uintptr_t at = ((uintptr_t)a->cur + align - 1) & ~(uintptr_t)(align - 1);
    if (at > (uintptr_t)a->end || (uintptr_t)a->end - at < n) {
        if (arena_more(a, n)) return NULL;
        at = (uintptr_t)a->cur; /* a chunk's start is aligned for any object */
    }
    a->cur = (char *)at + n;
    return (void *)at;
}

static char *arena_strndup(sv_yarena_t *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1, 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static char *arena_strdup(sv_yarena_t *a, const char *s)
{
    return arena_strndup(a, s, strlen(s));
}

/* A key's bit in a map's filters (keybits, askbits): a lookup of a key whose bit is clear
 * skips the search. */
static uint64_t key_bit(const char *k, size_t len)
{
    unsigned h =
        (unsigned char)k[0] * 7u + (unsigned char)k[len ? len - 1 : 0] * 13u + (unsigned)len * 31u;
    return (uint64_t)1 << (h & 63);
}

/* Make *arr, an array in the arena whose first have elements of elem bytes are in use,
 * hold at least need elements (moving it; the old place is given up). 0, SV_ENOMEM or
 * SV_ELIMIT, as sv__grow. */
static int arena_grow(sv_yarena_t *a, void **arr, size_t *cap, size_t have, size_t need,
                      size_t elem)
{
    if (need <= *cap) return 0;
    if (need > ((size_t)1 << 34) / elem) return SV_ELIMIT;
    size_t nc = *cap ? *cap * 2 : 8;
    while (nc < need)
        nc *= 2;
    void *p = arena_alloc(a, nc * elem, OBJ_ALIGN);
    if (!p) return SV_ENOMEM;
    if (have) memcpy(p, *arr, have * elem);
    *arr = p;
    *cap = nc;
    return 0;
}

/* A document, held in the first chunk (of size bytes) of its own arena; NULL when memory
 * runs out. */
static sv_ydoc_t *doc_new(size_t size)
{
    sv_yarena_t boot = {NULL, NULL, NULL, size < CHUNK_MIN ? CHUNK_MIN : size, 0};
    if (arena_more(&boot, sizeof(sv_yarena_t) + sizeof(sv_ydoc_t) + OBJ_ALIGN)) return NULL;
    sv_yarena_t *a = arena_alloc(&boot, sizeof *a, OBJ_ALIGN);
    *a = boot;
    sv_ydoc_t *doc = arena_alloc(a, sizeof *doc, OBJ_ALIGN);
    memset(doc, 0, sizeof *doc);
    doc->arena = a;
    return doc;
}

void sv_ydoc_free(sv_ydoc_t *doc)
{
    if (!doc) return;
    /* The arena and the document live in the first chunk, which goes last. */
    for (chunk_t *c = doc->arena->last, *prev; c; c = prev) {
        prev = c->prev;
        free(c);
    }
}

/* The paths are joined by hand: snprintf's format parsing cost more than the rest of a
 * node's construction, and every node of every catalog file has a path. */
static char *path_join_key(sv_yarena_t *a, const char *parent, const char *key)
{
    size_t lp = strlen(parent), lk = strlen(key);
    char *p = arena_alloc(a, lp + lk + 2, 1);
    if (!p) return NULL;
    memcpy(p, parent, lp);
    if (lp) p[lp++] = '.';
    memcpy(p + lp, key, lk + 1);
    return p;
}

static char *path_join_index(sv_yarena_t *a, const char *parent, size_t i)
{
    char digits[24];
    size_t nd = 0, lp = strlen(parent);
    do
        digits[nd++] = (char)('0' + i % 10);
    while ((i /= 10) > 0);
    char *p = arena_alloc(a, lp + nd + 3, 1);
    if (!p) return NULL;
    memcpy(p, parent, lp);
    p[lp++] = '[';
    while (nd > 0)
        p[lp++] = digits[--nd];
    p[lp++] = ']';
    p[lp] = '\0';
    return p;
}

/* A node with nothing in it, in arena a; NULL when memory runs out or path is NULL (a
 * join that ran out). */
static sv_ynode_t *node_new(sv_yarena_t *a, sv_ykind_t kind, const char *file, int line, int col,
                            char *path)
{
    sv_ynode_t *n = path ? arena_alloc(a, sizeof *n, OBJ_ALIGN) : NULL;
    if (!n) return NULL;
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->file = file;
    n->line = line;
    n->col = col;
    n->path = path;
    n->arena = a;
    return n;
}

/* A deep copy of node into document dst, its file names remapped from document src to
 * dst; NULL when memory runs out. Getters' marks (used, asked) are not copied: a copy is
 * read afresh. */
static sv_ynode_t *node_copy(const sv_ynode_t *n, const sv_ydoc_t *src, const sv_ydoc_t *dst)
{
    sv_yarena_t *a = dst->arena;
    const char *file = n->file;
    if (file == src->file) file = dst->file;
    for (size_t i = 0; i < src->nstrings; i++)
        if (file == src->strings[i]) file = dst->strings[i];
    sv_ynode_t *c =
        node_new(a, n->kind, file, n->line, n->col, arena_strdup(a, n->path ? n->path : ""));
    if (!c) return NULL;
    c->quoted = n->quoted;
    c->keybits = n->keybits;
    if (n->scalar && !(c->scalar = arena_strdup(a, n->scalar))) return NULL;
    if (n->n && n->kind == SV_Y_MAP && !(c->map = arena_alloc(a, n->n * sizeof *c->map, OBJ_ALIGN)))
        return NULL;
    if (n->n && n->kind == SV_Y_SEQ && !(c->seq = arena_alloc(a, n->n * sizeof *c->seq, OBJ_ALIGN)))
        return NULL;
    c->cap = c->n = n->n;
    for (size_t i = 0; i < n->n; i++) {
        if (n->kind == SV_Y_MAP) {
            sv_yentry_t *e = &c->map[i];
            e->used = e->asked = 0;
            e->key = arena_strdup(a, n->map[i].key);
            if (!e->key || !(e->val = node_copy(n->map[i].val, src, dst))) return NULL;
        } else if (!(c->seq[i] = node_copy(n->seq[i], src, dst))) {
            return NULL;
        }
    }
    return c;
}

int sv_ydoc_copy(const sv_ydoc_t *src, sv_ydoc_t **out, sv_error_t *err)
{
    *out = NULL;
    /* The copy needs no more than the source's chunks hold: one chunk of that size. */
    sv_ydoc_t *d = doc_new(src->arena->total);
    int bad = !d || !(d->file = arena_strdup(d->arena, src->file ? src->file : ""));
    if (!bad && src->nstrings) {
        bad = !(d->strings = arena_alloc(d->arena, src->nstrings * sizeof *d->strings, OBJ_ALIGN));
        for (size_t i = 0; !bad && i < src->nstrings; i++, d->nstrings++)
            bad = !(d->strings[i] = arena_strdup(d->arena, src->strings[i]));
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
    sv_yarena_t *arena; /* where the nodes go */
    const char *file;
    sv_error_t *err;
    const size_t *cuts; /* the text's cut comments, if it is trimmed (see trim_comments) */
    size_t ncuts;
} parse_ctx_t;

/* A parse of trimmed text that found a cut inside a scalar: the text is parsed as written
 * instead (positive, so never an error code). */
#define PARSE_UNTRIMMED 1

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

static int out_of_memory(parse_ctx_t *pc)
{
    return sv_errorf(pc->err, SV_ENOMEM, "%s: out of memory", pc->file);
}

/* Whether the scalar of ev, in trimmed text, may have lost text to a cut: a quoted one
 * that holds a cut '#' (which was its text, not a comment), or any block scalar (whose
 * lines a comment line moved to the left may end early). A plain scalar never holds a '#'
 * after a blank: libyaml ends it there. */
static int cut_inside(const parse_ctx_t *pc, const yaml_event_t *ev)
{
    yaml_scalar_style_t style = ev->data.scalar.style;
    if (!pc->ncuts || style == YAML_PLAIN_SCALAR_STYLE) return 0;
    if (style == YAML_LITERAL_SCALAR_STYLE || style == YAML_FOLDED_SCALAR_STYLE) return 1;
    size_t lo = 0, hi = pc->ncuts; /* the first cut at or after the scalar's start */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pc->cuts[mid] < ev->start_mark.index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < pc->ncuts && pc->cuts[lo] < ev->end_mark.index;
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
        if (arena_grow(pc->arena, (void **)&node->seq, &node->cap, node->n, node->n + 1,
                       sizeof *node->seq)) {
            yaml_event_delete(&ev);
            return out_of_memory(pc);
        }
        sv_ynode_t *child = NULL;
        rc =
            parse_node(pc, &ev, path_join_index(pc->arena, node->path, node->n), depth + 1, &child);
        yaml_event_delete(&ev);
        if (rc) return rc; /* a half-built item stays in the arena, freed with the document */
        node->seq[node->n++] = child;
    }
}

/* A set of a map's keys, so that duplicate checking stays linear in the map's size:
 * open addressing over indices into node->map (0 = empty slot, i + 1 = entry i). A key
 * whose bit is clear in the map's keybits is new without a search; maps of fewer than
 * KEYSET_MIN keys (all but the largest) are searched in order on a hit, without a set:
 * hashing every key cost more than those searches. */
typedef struct keyset {
    size_t *slot;
    size_t cap; /* a power of two, kept at least twice the number of keys; 0: no set yet */
} keyset_t;

#define KEYSET_MIN 64

static size_t key_hash(const char *s)
{
    size_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

/* Whether key is one of node's keys. */
static int keyset_has(const keyset_t *ks, const sv_ynode_t *node, const char *key)
{
    if (!ks->cap) {
        for (size_t i = 0; i < node->n; i++)
            if (strcmp(node->map[i].key, key) == 0) return 1;
        return 0;
    }
    for (size_t i = key_hash(key) & (ks->cap - 1);; i = (i + 1) & (ks->cap - 1)) {
        if (!ks->slot[i]) return 0;
        if (strcmp(node->map[ks->slot[i] - 1].key, key) == 0) return 1;
    }
}

/* Add entry e of node->map (its key not yet present), the set's slots taken from arena
 * a. 0 or SV_ENOMEM. */
static int keyset_add(keyset_t *ks, sv_yarena_t *a, const sv_ynode_t *node, size_t e)
{
    if (!ks->cap && e + 1 < KEYSET_MIN) return 0;
    if (2 * (e + 1) > ks->cap) {
        size_t nc = ks->cap ? ks->cap * 2 : 2 * KEYSET_MIN;
        size_t *ns = arena_alloc(a, nc * sizeof *ns, OBJ_ALIGN);
        if (!ns) return SV_ENOMEM;
        memset(ns, 0, nc * sizeof *ns);
        for (size_t k = 0; k < e; k++) {
            size_t i = key_hash(node->map[k].key) & (nc - 1);
            while (ns[i])
                i = (i + 1) & (nc - 1);
            ns[i] = k + 1;
        }
        ks->slot = ns;
        ks->cap = nc;
    }
    size_t i = key_hash(node->map[e].key) & (ks->cap - 1);
    while (ks->slot[i])
        i = (i + 1) & (ks->cap - 1);
    ks->slot[i] = e + 1;
    return 0;
}

static int parse_map(parse_ctx_t *pc, sv_ynode_t *node, int depth)
{
    keyset_t ks = {NULL, 0};
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
        if (cut_inside(pc, &kev)) {
            yaml_event_delete(&kev);
            return PARSE_UNTRIMMED;
        }
        const char *key = (const char *)kev.data.scalar.value;
        size_t klen = strlen(key);
        uint64_t bit = key_bit(key, klen);
        if ((node->keybits & bit) && keyset_has(&ks, node, key)) {
            rc = sv_errorf(pc->err, SV_EPARSE, "%s:%zu:%zu: duplicate key '%s'", pc->file,
                           kev.start_mark.line + 1, kev.start_mark.column + 1, key);
            yaml_event_delete(&kev);
            return rc;
        }
        if (arena_grow(pc->arena, (void **)&node->map, &node->cap, node->n, node->n + 1,
                       sizeof *node->map)) {
            yaml_event_delete(&kev);
            return out_of_memory(pc);
        }
        sv_yentry_t *e = &node->map[node->n];
        memset(e, 0, sizeof *e);
        e->key = arena_strndup(pc->arena, key, klen);
        node->keybits |= bit;
        char *cpath = e->key ? path_join_key(pc->arena, node->path, e->key) : NULL;
        yaml_event_delete(&kev);
        if (!cpath) return out_of_memory(pc);
        node->n++;
        if (keyset_add(&ks, pc->arena, node, node->n - 1)) return out_of_memory(pc);
        yaml_event_t vev;
        if ((rc = next_event(pc, &vev))) return rc;
        rc = parse_node(pc, &vev, cpath, depth + 1, &e->val);
        yaml_event_delete(&vev);
        if (rc) return rc;
    }
}

/* path is the node's, in the arena (NULL: its join ran out of memory). */
static int parse_node(parse_ctx_t *pc, yaml_event_t *ev, char *path, int depth, sv_ynode_t **out)
{
    int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
    *out = NULL;
    if (!path) return out_of_memory(pc);
    if (depth > MAX_DEPTH)
        return sv_errorf(pc->err, SV_EPARSE, "%s:%d:%d: nesting deeper than %d levels", pc->file,
                         line, col, MAX_DEPTH);
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        if (cut_inside(pc, ev)) return PARSE_UNTRIMMED;
        sv_ynode_t *n = node_new(pc->arena, SV_Y_SCALAR, pc->file, line, col, path);
        if (!n) return out_of_memory(pc);
        n->scalar = arena_strdup(pc->arena, (const char *)ev->data.scalar.value);
        n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
        *out = n;
        return n->scalar ? 0 : out_of_memory(pc);
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        int is_seq = ev->type == YAML_SEQUENCE_START_EVENT;
        sv_ynode_t *n =
            node_new(pc->arena, is_seq ? SV_Y_SEQ : SV_Y_MAP, pc->file, line, col, path);
        if (!n) return out_of_memory(pc);
        *out = n;
        return is_seq ? parse_seq(pc, n, depth) : parse_map(pc, n, depth);
    }
    case YAML_ALIAS_EVENT:
        return sv_errorf(pc->err, SV_EPARSE,
                         "%s:%d:%d: YAML aliases (*name) are not supported; write the value out",
                         pc->file, line, col);
    default:
        return sv_errorf(pc->err, SV_EPARSE, "%s:%d:%d: unexpected YAML content", pc->file, line,
                         col);
    }
}

static int parse_stream(parse_ctx_t *pc, sv_ynode_t **root)
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
            rc = parse_node(pc, &ev, arena_strdup(pc->arena, ""), 0, root);
            yaml_event_delete(&ev);
            if (rc) return rc;
            continue;
        }
        yaml_event_delete(&ev);
    }
}

/* The tree of text (file names it in messages and in its nodes), its nodes taken from
 * arena a; *root stays NULL for an empty document. On error what was built stays in the
 * arena. cuts: those of trimmed text (ncuts 0 for text as written). */
static int parse_text(sv_yarena_t *a, const char *file, const char *text, size_t len,
                      const size_t *cuts, size_t ncuts, sv_ynode_t **root, sv_error_t *err)
{
    parse_ctx_t pc = {.arena = a, .file = file, .err = err, .cuts = cuts, .ncuts = ncuts};
    *root = NULL;
    if (!yaml_parser_initialize(&pc.parser))
        return sv_errorf(err, SV_ENOMEM, "%s: out of memory", file);
    yaml_parser_set_input_string(&pc.parser, (const unsigned char *)text, len);
    int rc = parse_stream(&pc, root);
    yaml_parser_delete(&pc.parser);
    return rc;
}

/*
 * libyaml reads a comment character by character like any other text (some 60
 * instructions a byte), and a third of the catalog files is comments. A file is therefore
 * parsed first with each comment cut down to its '#', and the spaces before it with it
 * (all of a comment line's indentation, all but one after a value): a comment stays a
 * comment, and as nothing else on its line or any other line moves, every token and its
 * line and column stay the file's own. Whether a '#' began a comment is libyaml's to say,
 * not this pass's: it cuts at a '#' that starts a line or follows a blank (one that
 * follows anything else is never a comment), and a parse that finds a cut inside a quoted
 * scalar (where the '#' was text), meets a block scalar (whose text a comment line moved
 * left could end), or fails at all is done again on the text as written, which gives the
 * file's own error. Only all-ASCII text is cut, so that libyaml's character index is the
 * byte offset kept in cuts; and only printable characters after a '#' are cut away, so
 * that none of them was one the reader rejects or a line break.
 */
typedef struct trimmed {
    char *text; /* the text with its comments cut (NULL: parse the text as written) */
    size_t len;
    size_t *cuts; /* the offsets, in text, of the '#'s whose comments were cut, ascending */
    size_t ncuts, capcuts;
} trimmed_t;

static int all_ascii(const char *text, size_t len)
{
    const uint64_t high = 0x8080808080808080ULL;
    uint64_t any = 0;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, text + i, sizeof w);
        any |= w;
    }
    for (; i < len; i++)
        any |= (unsigned char)text[i];
    return !(any & high);
}

/* Whether ASCII text [q, e) is printable or tabs, eight bytes at a time while no byte is
 * below a space or DEL (the word tests are exact for bytes under 0x80). */
static int printable(const char *q, const char *e)
{
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    for (; e - q >= 8; q += 8) {
        uint64_t w, d;
        memcpy(&w, q, sizeof w);
        d = w ^ (0x7f * ones);
        if (((w - 0x20 * ones) & ~w & high) || ((d - ones) & ~d & high)) break;
    }
    for (; q < e; q++)
        if ((unsigned char)(*q - 0x20) > 0x7e - 0x20 && *q != '\t') return 0;
    return 1;
}

/* Where the comment of the '#' at h ends (the line break or the end of text), if what it
 * would cut is printable; NULL otherwise. */
static const char *comment_end(const char *h, const char *end)
{
    const char *ce = memchr(h, '\n', (size_t)(end - h));
    if (!ce) ce = end;
    if (ce > h && ce[-1] == '\r') ce--;
    return printable(h + 1, ce) ? ce : NULL;
}

/* The count of double quotes in [p, h): odd means h is likely inside a quoted scalar,
 * where a cut would only make the parse run twice. */
static int odd_quotes(const char *p, const char *h)
{
    int odd = 0;
    while ((p = memchr(p, '"', (size_t)(h - p)))) {
        odd ^= 1;
        p++;
    }
    return odd;
}

/* t for text: its text NULL when nothing is cut. 0 or SV_ENOMEM. */
static int trim_comments(const char *text, size_t len, trimmed_t *t)
{
    memset(t, 0, sizeof *t);
    if (!len || !memchr(text, '#', len) || !all_ascii(text, len)) return 0;
    char *out = malloc(len);
    if (!out) return SV_ENOMEM;
    const char *end = text + len, *from = text; /* from: the text not yet copied */
    size_t o = 0;
    for (const char *p = text; p < end;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        for (const char *h = p; (h = memchr(h, '#', (size_t)(eol - h))); h++) {
            if ((h > p && h[-1] != ' ' && h[-1] != '\t') || odd_quotes(p, h)) continue;
            const char *ce = comment_end(h, end);
            if (!ce) break;
            if (ce == h + 1) break; /* nothing to cut */
            if (SV_GROW(t->cuts, t->capcuts, t->ncuts + 1)) {
                free(out);
                free(t->cuts);
                return SV_ENOMEM;
            }
            /* The spaces before the '#' go too: all of a comment line's indentation (when
             * it is spaces), and all but one after a value, so that the '#' still follows
             * a blank. */
            const char *sp = h;
            while (sp > p && sp[-1] == ' ')
                sp--;
            const char *keep = sp == p ? p : sp < h ? sp + 1 : h; /* copied up to here */
            memcpy(out + o, from, (size_t)(keep - from));
            o += (size_t)(keep - from);
            t->cuts[t->ncuts++] = o;
            out[o++] = '#';
            from = ce;
            break;
        }
        p = eol + 1;
    }
    if (!t->ncuts) {
        free(out);
        return 0;
    }
    memcpy(out + o, from, (size_t)(end - from));
    t->text = out;
    t->len = o + (size_t)(end - from);
    return 0;
}

/* A document of text (its nodes' file named name), or NULL with a message in err. */
static sv_ydoc_t *parse_doc(const char *name, const char *text, size_t len, const size_t *cuts,
                            size_t ncuts, int *rc, sv_error_t *err)
{
    /* The first chunk is sized to hold the whole tree of a usual file. */
    sv_ydoc_t *doc = doc_new(len * ARENA_PER_BYTE);
    if (!doc || !(doc->file = arena_strdup(doc->arena, name))) {
        sv_ydoc_free(doc);
        *rc = sv_errorf(err, SV_ENOMEM, "%s: out of memory", name);
        return NULL;
    }
    *rc = parse_text(doc->arena, doc->file, text, len, cuts, ncuts, &doc->root, err);
    if (*rc) {
        sv_ydoc_free(doc);
        return NULL;
    }
    return doc;
}

int sv_ydoc_parse(const char *name, const char *text, size_t len, sv_ydoc_t **out, sv_error_t *err)
{
    trimmed_t t;
    int rc;
    *out = NULL;
    if (trim_comments(text, len, &t) == 0 && t.text) {
        /* No message for a failure here: the text as written gives it. */
        *out = parse_doc(name, t.text, t.len, t.cuts, t.ncuts, &rc, NULL);
        free(t.text);
        free(t.cuts);
        if (*out) return 0;
    }
    *out = parse_doc(name, text, len, NULL, 0, &rc, err);
    return rc;
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

/* Give n and everything under it the place of an override: file, no line, and the paths
 * under path (a string of the arena, which n keeps). */
static int reroot(sv_yarena_t *a, sv_ynode_t *n, const char *file, char *path)
{
    n->file = file;
    n->line = n->col = 0;
    n->path = path;
    for (size_t i = 0; i < n->n; i++) {
        char *cp = n->kind == SV_Y_MAP ? path_join_key(a, path, n->map[i].key)
                                       : path_join_index(a, path, i);
        if (!cp) return SV_ENOMEM;
        int rc = reroot(a, n->kind == SV_Y_MAP ? n->map[i].val : n->seq[i], file, cp);
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
static int map_slot(sv_yarena_t *a, sv_ynode_t *cur, const char *tok, int drop, const char *src,
                    sv_ynode_t ***slot, sv_error_t *err)
{
    sv_ynode_t **found = NULL;
    size_t at = cur->n;
    for (size_t i = 0; i < cur->n; i++)
        if (strcmp(cur->map[i].key, tok) == 0) found = &cur->map[(at = i)].val;
    if (drop) {
        if (at < cur->n) {
            memmove(&cur->map[at], &cur->map[at + 1], (cur->n - at - 1) * sizeof *cur->map);
            cur->n--;
        }
        return 0;
    }
    if (!found) {
        if (arena_grow(a, (void **)&cur->map, &cur->cap, cur->n, cur->n + 1, sizeof *cur->map))
            return sv_errorf(err, SV_ENOMEM, "out of memory");
        sv_yentry_t *e = &cur->map[cur->n];
        memset(e, 0, sizeof *e);
        e->key = arena_strdup(a, tok);
        cur->keybits |= key_bit(tok, strlen(tok));
        e->val = e->key ? node_new(a, SV_Y_MAP, src, 0, 0, path_join_key(a, cur->path, tok)) : NULL;
        if (!e->val) return sv_errorf(err, SV_ENOMEM, "out of memory");
        /* A key a getter already asked for while it was absent is in the asked list. */
        for (size_t k = 0; k < cur->nasked && !e->asked; k++)
            e->asked = strcmp(cur->asked[k], tok) == 0;
        cur->n++;
        found = &e->val;
    }
    *slot = found;
    return 0;
}

int sv_ydoc_set(sv_ydoc_t *doc, const char *assignment, sv_error_t *err)
{
    sv_yarena_t *a = doc->arena;
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return sv_errorf(err, SV_EINVAL, "--set %s: expected KEY=VALUE (e.g. hardware.tp=2)",
                         assignment);
    /* Remember the source text; nodes point at it. */
    if (arena_grow(a, (void **)&doc->strings, &doc->capstrings, doc->nstrings, doc->nstrings + 1,
                   sizeof(char *)))
        return sv_errorf(err, SV_ENOMEM, "out of memory");
    size_t srclen = strlen(assignment) + 8;
    char *src = arena_alloc(a, srclen, 1);
    if (!src) return sv_errorf(err, SV_ENOMEM, "out of memory");
    snprintf(src, srclen, "--set %s", assignment);
    doc->strings[doc->nstrings++] = src;

    sv_ynode_t *val;
    int rc = parse_text(a, src, eq + 1, strlen(eq + 1), NULL, 0, &val, err);
    if (rc) return rc;
    if (!val) { /* "key=" sets an empty (null) scalar */
        val = node_new(a, SV_Y_SCALAR, src, 0, 0, arena_strdup(a, ""));
        if (!val || !(val->scalar = arena_strdup(a, "")))
            return sv_errorf(err, SV_ENOMEM, "out of memory");
    }

    size_t klen = (size_t)(eq - assignment);
    int empty_part = assignment[0] == '.' || eq[-1] == '.';
    for (size_t i = 1; i < klen; i++)
        if (assignment[i] == '.' && assignment[i - 1] == '.') empty_part = 1;
    if (empty_part)
        return sv_errorf(err, SV_EINVAL,
                         "%s: expected a dotted key like hardware.tp or pools.0.gpu before '=', "
                         "got '%.*s'",
                         src, (int)klen, assignment);
    char *key = arena_strndup(a, assignment, klen); /* cut into parts by strtok_r */
    if (!key) return sv_errorf(err, SV_ENOMEM, "out of memory");

    if (!doc->root && !(doc->root = node_new(a, SV_Y_MAP, src, 0, 0, arena_strdup(a, ""))))
        return sv_errorf(err, SV_ENOMEM, "out of memory");
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
            if ((rc = map_slot(a, cur, tok, drop, src, &slot, err)) || drop) break;
        } else {
            rc = sv_errorf(err, SV_EINVAL, "%s: '%s' is a single value, it has no key '%s'", src,
                           cur->path[0] ? cur->path : "the top level", tok);
            break;
        }
        /* The replaced node is given up; the new one takes its path string. */
        if (!next) {
            if (reroot(a, val, src, (*slot)->path)) {
                rc = sv_errorf(err, SV_ENOMEM, "out of memory");
                break;
            }
            *slot = val;
        } else if ((*slot)->kind == SV_Y_SCALAR && sv_yscalar_is_null(*slot)) {
            /* "key:" left empty in the file; treat as an empty map to set into. */
            sv_ynode_t *m = node_new(a, SV_Y_MAP, src, 0, 0, (*slot)->path);
            if (!m) {
                rc = sv_errorf(err, SV_ENOMEM, "out of memory");
                break;
            }
            *slot = m;
        }
        cur = *slot;
        tok = next;
    }
    return rc;
}

/* ---- getters ---------------------------------------------------------------------- */

/* Add key to map's asked list (a string of the arena: one the list may keep). */
static void add_asked(sv_ynode_t *map, char *key)
{
    if (arena_grow(map->arena, (void **)&map->asked, &map->capasked, map->nasked, map->nasked + 1,
                   sizeof(char *)))
        return;
    map->asked[map->nasked++] = key;
}

sv_ynode_t *sv_ymap_get(sv_ynode_t *map, const char *key)
{
    if (!map || map->kind != SV_Y_MAP) return NULL;
    /* Readers ask for keys much in the order files write them: the search starts after
     * the last key found and wraps (keys are unique, so the answer is the same). */
    size_t i = map->hint < map->n ? map->hint : 0;
    sv_yentry_t *e = map->n ? &map->map[i] : NULL;
    uint64_t bit = 0;
    if (e && (e->key[0] != key[0] || strcmp(e->key, key) != 0)) {
        e = NULL;
        bit = key_bit(key, strlen(key));
        for (size_t j = 1; j < map->n && (map->keybits & bit); j++) {
            i = i + 1 < map->n ? i + 1 : 0;
            if (map->map[i].key[0] == key[0] && strcmp(map->map[i].key, key) == 0) {
                e = &map->map[i];
                break;
            }
        }
    } else if (!e) {
        bit = key_bit(key, strlen(key));
    }
    if (!e) {
        /* An absent key: in the asked list once. */
        if (map->askbits & bit)
            for (size_t k = 0; k < map->nasked; k++)
                if (map->asked[k][0] == key[0] && strcmp(map->asked[k], key) == 0) return NULL;
        char *k = arena_strdup(map->arena, key);
        if (k) {
            add_asked(map, k);
            map->askbits |= bit;
        }
        return NULL;
    }
    /* A key of the map is in the asked list once, by its flag. */
    if (!e->asked) {
        e->asked = 1;
        add_asked(map, e->key);
    }
    e->used = 1;
    map->hint = i + 1 < map->n ? i + 1 : 0;
    return e->val;
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
