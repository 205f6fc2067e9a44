/*
 * The settings schema: every scenario key written once, as a row of one table
 * (sv_scenario_keys), with its section, type, range, default, unit and help text.
 *
 * The table drives the scenario loader (a row with a field is read, range-checked, given
 * its default and stored by sv__keys_read; its messages are the getters' of base/yaml.h),
 * `servesim help keys` and the key tables of docs/scenarios.md (`servesim help keys
 * --markdown`, compared with the file by the ctest scenario_keys). Keys whose reading
 * needs more than one value (maps, lists, length distributions, rules between keys) are
 * rows of type SV_KEY_CUSTOM: documented here, read by their section's code in
 * sim/cluster/scenario.c. docs/architecture.md ("The settings schema") says how to add a key.
 *
 * Ownership: the table and every string in it are static; nothing here allocates.
 */
#ifndef SERVESIM_SCHEMA_H
#define SERVESIM_SCHEMA_H

#include <stddef.h>
#include <stdio.h>

#include "servesim/base/error.h"
#include "servesim/base/yaml.h"

typedef enum {
    SV_KEY_INT,    /* a whole number in [lo, hi], into a long or an int field */
    SV_KEY_NUM,    /* a number in [lo, hi] ("inf" allowed where hi is), stored x scale */
    SV_KEY_BOOL,   /* true or false, into an int */
    SV_KEY_TEXT,   /* text shorter than the char array it goes into */
    SV_KEY_ENUM,   /* one of names[], its value into an int */
    SV_KEY_COST,   /* a cost-model setting: sv_perf_settings_set() reads and checks it */
    SV_KEY_CUSTOM, /* read by its section's own code (documented here) */
} sv_keytype_t;

typedef struct sv_keydef {
    const char *section; /* dotted ("" top level, "engine", "workload.trace") */
    const char *name;
    sv_keytype_t type;
    int group;    /* sv__keys_read() reads one group of a section at a time */
    int required; /* 1: absent is an error */
    double lo, hi;
    double scale; /* SV_KEY_NUM: the field holds given x scale (0 means 1) */
    const sv_yenum_t *names;
    int nnames;
    size_t offset, size; /* the field, from the struct the section's reader passes */
    const char *unit;    /* unit or type for the docs ("tokens", "GB/s"); NULL: the type's */
    const char *(*list)(char *buf, size_t n); /* or the names another table accepts */
    const char *def; /* default: a number is applied when the key is absent; other text
                      * only documents the default the loader or the engine computes */
    const char *help;
} sv_keydef_t;

/* Every key, section by section, in the order the loader reads them; NULL-named last row. */
extern const sv_keydef_t sv_scenario_keys[];

/* The row of "section.key" ("engine.max_num_seqs"; a top-level key has no dot), or NULL.
 * Sections with a list ("pools", "workload.classes") name it without an index. */
const sv_keydef_t *sv_scenario_key(const char *section, const char *name);

/* The name an enumerated key (section, key) gives value: "swap" for engine.preemption 1;
 * NULL when the key is not enumerated or no name has that value. For the reports'
 * configuration block, so that it echoes what the scenario would say. */
const char *sv_scenario_enum_name(const char *section, const char *name, int value);

/*
 * Read the rows of `section` in `group` that have a field (every type but SV_KEY_CUSTOM)
 * from map into base, the struct that section's fields live in (see the table in
 * schema.c). Absent keys take a numeric default; a required absent key is an error.
 * 0, or a negative SV_E* with a located message.
 */
int sv__keys_read(sv_ynode_t *map, const char *section, int group, void *base, sv_error_t *err);

/* The key tables: markdown (one table per documented section, each between the lines
 * "<!-- keys SECTION -->" and "<!-- end keys -->") or plain text (one key a line).
 * section NULL: all of them. */
void sv_keys_markdown(FILE *f, const char *section);
void sv_keys_text(FILE *f);

/* The batch defaults vLLM gives an engine that leaves them unset, by GPU (see schema.c). */
typedef struct sv_batch_default {
    int v1;                /* for the V1 scheduler (`vllm`), or for the others */
    double min_gib;        /* GPUs with at least this much memory ... */
    const char *not_named; /* ... whose catalog name does not contain this (NULL: any) */
    long max_num_seqs, max_num_batched_tokens;
    const char *gpus; /* which catalog GPUs that is, for the docs */
} sv_batch_default_t;
/* The first row for that scheduler kind and a GPU of mem_gib GiB named name. */
const sv_batch_default_t *sv_batch_default(int v1, double mem_gib, const char *name);
extern const sv_batch_default_t sv_batch_defaults[]; /* last row: max_num_seqs 0 */

/*
 * The serving engines `engine: NAME` (or `engine.name`) names: each sets the scheduler and
 * the engine profile together (schema.c's table; docs/scenarios.md, "Engines").
 */
typedef struct sv_engine_choice {
    const char *name;    /* what a scenario writes */
    int scheduler;       /* sv_sched_t */
    const char *profile; /* models/engines.yaml profile */
    const char *what;    /* the version it stands for, for the docs */
} sv_engine_choice_t;
/* The engine named name, or NULL. */
const sv_engine_choice_t *sv_engine_choice(const char *name);
extern const sv_engine_choice_t sv_engine_choices[]; /* last row: name NULL */
/* The engine (vllm, trtllm, sglang) a scheduler or a profile belongs to (a profile of one
 * version, "sglang-0.5.9-rocm", to its engine); NULL for those of no one engine (orca,
 * static, eager). */
const char *sv_engine_of_scheduler(int scheduler);
const char *sv_engine_of_profile(const char *profile);

#endif
