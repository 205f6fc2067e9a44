# shellcheck shell=bash
# The libFuzzer targets (tests/fuzz/TARGET.c) and their seed inputs, sourced by tools/fuzz
# and tests/fuzz/run.sh. Kept crash inputs live in tests/data/fuzz-regress/: by extension
# for the first three targets (tests/cli_checks.sh also runs them through the CLI), in a
# folder named after the target for the others.
#   sv_fuzz_targets            every target, one a line
#   sv_fuzz_seeds ROOT TARGET  its seed and regression files, one a line (existing only):
#                              tests/fuzz/seeds/TARGET/ and the shipped inputs of its kind

sv_fuzz_targets() {
    printf '%s\n' fuzz_scenario fuzz_trace fuzz_hfconfig fuzz_bench fuzz_calibrate fuzz_mooncake \
        fuzz_profile
}

sv_fuzz_seeds() {
    local root=$1 d="$1/tests/data" r="$1/tests/data/fuzz-regress" s="$1/../shared/profiles"
    local files=("$root"/tests/fuzz/seeds/"$2"/*)
    case $2 in
    fuzz_scenario) files+=("$root"/scenarios/*.yaml "$d"/*.yaml "$r"/*.yaml) ;;
    fuzz_trace) files+=("$d"/*.csv "$r"/*.csv) ;;
    fuzz_hfconfig) files+=("$d"/*config*.json "$d"/*/config.json "$r"/*.json) ;;
    fuzz_bench) files+=("$d"/result_*.json "$d"/vllm_result_*.json "$d"/genai_perf_export.json
        "$r"/fuzz_bench/*) ;;
    fuzz_calibrate) files+=("$d"/validation/splitwise_perf_model.csv "$d"/errors/*.csv
        "$s"/vidur/compute/a100/meta-llama/Meta-Llama-3-8B/mlp.csv
        "$s"/vidur/network/*/all_reduce.csv "$s"/vidur/network/*/send_recv.csv
        "$r"/fuzz_calibrate/*) ;;
    fuzz_mooncake) files+=("$d"/*.jsonl "$d"/errors/*.jsonl "$r"/fuzz_mooncake/*) ;;
    fuzz_profile) files+=("$r"/fuzz_profile/*) ;;
    esac
    local f
    for f in "${files[@]}"; do [ -f "$f" ] && printf '%s\n' "$f"; done
    return 0
}
