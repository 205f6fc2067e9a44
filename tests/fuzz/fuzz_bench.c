/*
 * libFuzzer target: a benchmark result file (vLLM's result JSON, a GenAI-Perf or AIPerf
 * profile export) through the reader and, when it loads, what `compare` and `replay` do
 * with it: the comparison against itself (scalar rows and the KS distributions, printed)
 * and the replay trace built from its per-request lists.
 */
#include "fuzz_common.h"
#include "servesim/studies/compare.h"
#include "servesim/studies/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_write("result.json", data, size);
    sv_error_t err;
    sv_bench_t *b = NULL;
    if (sv_bench_load(path, &b, &err)) return 0;
    sv_compare_t *c = NULL;
    if (sv_compare_new(b, b, &c, &err) == 0) {
        FILE *f = fopen("/dev/null", "w");
        if (f) {
            sv_compare_print(c, 0.1, f);
            fclose(f);
        }
        sv_compare_free(c);
    }
    sv_trace_t *t = NULL;
    long skipped = 0;
    if (sv_replay_trace(b, &t, &skipped, &err) == 0) sv_trace_free(t);
    sv_bench_free(b);
    return 0;
}
