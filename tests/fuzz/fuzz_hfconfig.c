/*
 * libFuzzer target: the Hugging Face config.json reader on arbitrary bytes.
 */
#include "fuzz_common.h"
#include "servesim/cost/catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_write("config.json", data, size);
    sv_model_t m;
    sv_error_t err;
    (void)sv_model_from_hf_config(path, &m, &err);
    return 0;
}
