/*
 * libFuzzer target: a calibrate table through every CSV reader of `servesim calibrate`
 * (Vidur's mlp.csv, all_reduce.csv and send_recv.csv on the A100, Splitwise's
 * perf_model.csv for the eager profile) and, when a table reads, its fit, bounded to 20
 * iterations so a slow fit is not mistaken for a hang.
 */
#include "fuzz_common.h"
#include "servesim/cost/catalog.h"
#include "servesim/studies/calibrate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const sv_catalog_t *cat = fz_catalog("fuzz_calibrate");
    static const sv_gpu_t *gpu;
    static const sv_engine_profile_t *base;
    sv_error_t err;
    if (!gpu && (sv_catalog_gpu(cat, "a100-80gb", &gpu, &err) ||
                 sv_catalog_engine(cat, "eager", &base, &err))) {
        fprintf(stderr, "fuzz_calibrate: %s\n", err.msg);
        abort();
    }
    const char *path = fz_write("table.csv", data, size);
    sv_fit_opts_t o = {.max_iter = 20};
    sv_fit_t a, b;
    (void)sv_calibrate_kernels(&path, 1, gpu, &o, &a, &b, &err);
    (void)sv_calibrate_allreduce(path, gpu, &o, &a, &err);
    (void)sv_calibrate_sendrecv(path, gpu, &o, &a, &err);
    const char *keys[] = {"layer_overhead_us", "compute_efficiency"};
    (void)sv_calibrate_engine(path, "bloom-176b:a100-80gb", cat, base, keys,
                              2, &o, &a, &err);
    return 0;
}
