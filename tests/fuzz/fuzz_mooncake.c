/*
 * libFuzzer target: a Mooncake trace (JSON lines with timestamp, input_length,
 * output_length and hash_ids) through its reader and, when it reads, the prompt identity
 * generator over every row.
 */
#include "fuzz_common.h"
#include "servesim/traffic/identity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_write("trace.jsonl", data, size);
    sv_mooncake_cfg_t c;
    memset(&c, 0, sizeof c);
    c.given = 1;
    snprintf(c.path, sizeof c.path, "%s", path);
    c.block_tokens = 512;
    c.speedup = 1.0;
    sv_error_t err;
    sv_trace_t *t = NULL;
    sv_prompts_t *p = NULL;
    if (sv_mooncake_load(&c, &t, &p, &err)) return 0;
    sv_identity_t *g = NULL;
    if (sv_identity_new(NULL, p, 1, &g, &err) == 0) {
        for (size_t i = 0; i < t->n; i++) {
            int32_t input = t->input[i];
            const sv_segment_t *seg;
            (void)sv_identity_next(g, (int32_t)i, &input, &seg);
        }
        sv_identity_free(g);
    }
    sv_prompts_free(p);
    sv_trace_free(t);
    return 0;
}
