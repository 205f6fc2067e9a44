/*
 * libFuzzer target: the trace CSV reader (and the empirical-length reader, which shares
 * its CSV code) on arbitrary bytes.
 */
#include "fuzz_common.h"
#include "servesim/traffic/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_write("trace.csv", data, size);
    sv_trace_cfg_t c;
    memset(&c, 0, sizeof c);
    snprintf(c.path, sizeof c.path, "%s", path);
    snprintf(c.time_col, sizeof c.time_col, "TIMESTAMP");
    snprintf(c.input_col, sizeof c.input_col, "ContextTokens");
    snprintf(c.output_col, sizeof c.output_col, "GeneratedTokens");
    c.speedup = 1.0;
    sv_error_t err;
    sv_trace_t *t = NULL;
    if (sv_trace_load(&c, &t, &err) == 0) sv_trace_free(t);
    long *v = NULL;
    size_t n = 0;
    if (sv_empirical_load(path, "ContextTokens", &v, &n, &err) == 0) free(v);
    return 0;
}
