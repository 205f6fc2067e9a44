#!/usr/bin/env bash
# Command-line checks: each case runs servesim and asserts its exit status and that a
# failure prints exactly one clear line on stderr. Usage: cli_checks.sh SERVESIM SRCDIR
set -u
bin=$1
src=$2
data="$src/tests/data"
pass=0
failn=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect_fail NAME REGEX -- ARGS...: non-zero exit, one stderr line matching REGEX.
expect_fail() {
    local name=$1 re=$2
    shift 3
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    local lines
    lines=$(wc -l <"$tmp/err")
    if [ "$rc" -ne 0 ] && [ "$lines" -eq 1 ] && grep -Eq -- "$re" "$tmp/err"; then
        pass=$((pass + 1))
    else
        failn=$((failn + 1))
        echo "FAIL $name: rc=$rc, $lines stderr lines, wanted /$re/:"
        cat "$tmp/err"
    fi
}

# expect_ok NAME REGEX -- ARGS...: exit 0 and stdout matching REGEX.
expect_ok() {
    local name=$1 re=$2
    shift 3
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -eq 0 ] && grep -Eq -- "$re" "$tmp/out"; then
        pass=$((pass + 1))
    else
        failn=$((failn + 1))
        echo "FAIL $name: rc=$rc, wanted /$re/ on stdout; stderr:"
        cat "$tmp/err"
    fi
}

ex=(explain --model llama-3.1-8b --gpu h100-sxm --tp 1 --input 1024 --output 256 --batch 1,8,32,64)

expect_ok list_gpus 'mi300x' -- list gpus
expect_ok list_models 'mixtral-8x7b' -- list models
expect_ok explain 'Prefill of 1024 tokens: .* compute-bound' -- "${ex[@]}"
expect_ok explain_decode_memory '^ +1 +[0-9.]+ +memory' -- "${ex[@]}"
expect_ok explain_ideal 'compute efficiency 1.00, memory efficiency 1.00, overhead 0.000 ms' -- "${ex[@]}" --ideal
expect_ok explain_set 'compute efficiency 0.42' -- "${ex[@]}" --set compute_efficiency=0.42
expect_ok explain_json '"single_request"' -- "${ex[@]}" --json
expect_ok explain_config_json 'servesim explain: llama-3.1-8b on 1 x h100-sxm' -- explain --model "$data/llama-3.1-8b/config.json" --gpu h100-sxm

expect_fail unknown_gpu "^servesim: error: unknown GPU 'h100x' \(known: " -- explain --model llama-3.1-8b --gpu h100x
expect_fail unknown_model "^servesim: error: unknown model 'llama-9b'" -- explain --model llama-9b --gpu h100-sxm
expect_fail bad_config "bad_config.json:4:[0-9]+: malformed JSON" -- explain --model "$data/bad_config.json" --gpu h100-sxm
expect_fail missing_key "missing key 'num_hidden_layers'" -- explain --model "$data/missing_key_config.json" --gpu h100-sxm
expect_fail bad_tp "tp=8 does not divide the 28 attention heads of model 'qwen2.5-7b'" -- explain --model qwen2.5-7b --gpu h100-sxm --tp 8
expect_fail no_fit "model 'llama-3.1-70b' \(bf16 weights\) does not fit on a100-40gb with tp=1" -- explain --model llama-3.1-70b --gpu a100-40gb
expect_fail bad_set "--set compute_efficiency=2: compute_efficiency: expected a number > 0 and <= 1, got '2'" -- "${ex[@]}" --set compute_efficiency=2
expect_fail unknown_set "unknown key 'colour'" -- "${ex[@]}" --set colour=red
expect_fail bad_batch "--batch: expected sizes" -- "${ex[@]}" --batch 1,x
expect_fail bad_option "unknown option '--frobnicate'" -- "${ex[@]}" --frobnicate
expect_fail bad_catalog "cannot open the catalog directory" -- --catalog /nonexistent list gpus

# run: the quickstart, bad scenarios, and byte-identical outputs
q="$src/scenarios/quickstart.yaml"
expect_ok run_quickstart '^============ Serving Benchmark Result ============$' -- run "$q" --set workload.num_requests=50
expect_ok run_goodput '^Request goodput \(req/s\):' -- run "$q" --set workload.num_requests=50
expect_fail run_malformed "bad_yaml.yaml:5:1: malformed YAML" -- run "$data/bad_yaml.yaml"
expect_fail run_unknown_key "unknown_key.yaml:5:16: unknown key 'engine.max_num_seq'" -- run "$data/unknown_key.yaml"
expect_fail run_negative_rate "negative_rate.yaml:6:9: workload.rate: expected requests per second > 0 or inf, got '-2'" -- run "$data/negative_rate.yaml"
expect_fail run_bad_trace "bad_trace.csv:3: column ContextTokens: expected a whole number >= 1, got 'abc'" -- run "$data/bad_trace_scenario.yaml"
expect_fail run_missing "nope.yaml: cannot open" -- run "$tmp/nope.yaml"
expect_fail run_no_file "run needs a scenario file" -- run
expect_fail run_unwritable "/nonexistent/dir/x.json: cannot write" -- run "$q" --set workload.num_requests=5 --quiet --json /nonexistent/dir/x.json
expect_fail run_bad_set "--set hardware.tp=3: hardware.tp: .*|tp=3 does not divide" -- run "$q" --set hardware.tp=3
# the cluster: disaggregated output and bad cluster input
dl="$src/scenarios/disagg-vs-colocated-long-prompts-disaggregated.yaml"
expect_ok run_disagg '^------------- pool prefill \(prefill\) -------------$' -- run "$dl" --set workload.num_requests=100
expect_ok run_disagg_transfer '^Mean KV transfer \(ms\):' -- run "$dl" --set workload.num_requests=100
expect_fail run_no_decode_pool "no_decode_pool.yaml:3:3: pools: a disaggregated scenario needs a decode pool" -- run "$data/no_decode_pool.yaml"
expect_fail run_pool_no_fit "pool 'small' \(1 x a100-40gb, tp=1\): model 'llama-3.1-70b' \(bf16 weights\) does not fit" -- run "$data/pool_no_fit.yaml"
expect_fail run_zero_link "zero_link.yaml:6:47: disaggregation.kv_link.bandwidth_gb_s: expected a number > 0" -- run "$data/zero_link.yaml"

# sweeps, plans and their reports
expect_ok sweep_knee '^knee: workload.rate=' -- sweep "$q" --vary workload.rate=4,8,40 --set workload.num_requests=200 --out "$tmp/sw" --jobs 2
"$bin" sweep "$q" --vary workload.rate=4,8,40 --set workload.num_requests=200 --out "$tmp/sw" --quiet --report "$tmp/sw.html" >/dev/null 2>&1
if grep -q "<svg" "$tmp/sw.html" && ! grep -qi "<script" "$tmp/sw.html" && [ -s "$tmp/sw-ttft.svg" ] &&
    [ -s "$tmp/sw/sweep.csv" ] && [ -s "$tmp/sw/points/point-000002.json" ]; then
    pass=$((pass + 1))
else
    failn=$((failn + 1))
    echo "FAIL sweep_outputs: report, SVG, sweep.csv or point JSON missing (or a script in the HTML)"
fi
"$bin" run "$q" --set workload.num_requests=100 --quiet --report "$tmp/run.html" 2>/dev/null
if grep -q "TTFT: share of requests" "$tmp/run.html" && [ -s "$tmp/run-ttft-cdf.svg" ] &&
    [ -s "$tmp/run-kv-usage.svg" ] && ! grep -q "https\?://[a-z]" <(grep -v 'xmlns="http://www.w3.org/2000/svg"' "$tmp/run.html"); then
    pass=$((pass + 1))
else
    failn=$((failn + 1))
    echo "FAIL run_report: the run report or its SVG files are missing, or it links outside"
fi
expect_ok plan_rank '^   1  h100-sxm TP1 colocated' -- plan "$q" --set 'plan={target_rate: 10, gpus: [h100-sxm, l4], probe_requests: 200}' --set workload.num_requests=200 --set slo.ttft_ms=500 --set slo.tpot_ms=50
expect_fail plan_no_map "no plan: map in the scenario" -- plan "$q"
expect_fail plan_too_many_tps "plan.tp: give 1 to 8 values, got 9" -- plan "$q" --set 'plan={target_rate: 10, gpus: [h100-sxm], tp: [1, 2, 4, 8, 16, 32, 64, 128, 256]}'
expect_fail plan_empty_gpus "plan.gpus: give 1 to 16 values, got 0" -- plan "$q" --set 'plan={target_rate: 10, gpus: []}'
expect_fail sweep_bad_vary "--vary workload.rate=10:2:2: expected start:stop:step" -- sweep "$q" --vary workload.rate=10:2:2
expect_fail sweep_no_vary "sweep needs --vary" -- sweep "$q"
expect_fail sweep_bad_shard "--shard: expected K/N" -- sweep "$q" --vary workload.rate=1,2 --shard 3/2
expect_fail merge_nothing "merge needs OUT and at least one shard directory" -- merge "$tmp/m"

# every shipped scenario runs (cut short), with --check's per-step recount of KV blocks
for f in "$src"/scenarios/*.yaml; do
    expect_ok "scenario_$(basename "$f" .yaml)" '^Successful requests:' -- run "$f" --check --set workload.num_requests=300
done

"$bin" run "$q" --set workload.num_requests=300 --quiet --json "$tmp/a.json" --detailed --requests-csv "$tmp/a.csv" --timeseries-csv "$tmp/a.ts.csv" 2>/dev/null
"$bin" run "$q" --set workload.num_requests=300 --quiet --json "$tmp/b.json" --detailed --requests-csv "$tmp/b.csv" --timeseries-csv "$tmp/b.ts.csv" 2>/dev/null
if cmp -s "$tmp/a.json" "$tmp/b.json" && cmp -s "$tmp/a.csv" "$tmp/b.csv" && cmp -s "$tmp/a.ts.csv" "$tmp/b.ts.csv" &&
    [ "$(wc -l <"$tmp/a.csv")" -eq 301 ]; then
    pass=$((pass + 1))
else
    failn=$((failn + 1))
    echo "FAIL run_deterministic: outputs of two identical runs differ (or the CSV lacks rows)"
fi

# compare and replay: the exact round trip, tolerance, the report, and bad result files
"$bin" run "$q" --set workload.num_requests=200 --quiet --json "$tmp/rt-a.json" --detailed 2>/dev/null
"$bin" replay "$tmp/rt-a.json" "$q" --quiet --json "$tmp/rt-b.json" --detailed 2>/dev/null
"$bin" compare "$tmp/rt-a.json" "$tmp/rt-b.json" --tolerance 0 >"$tmp/rt.out" 2>&1
rc=$?
rows=$(grep -cE '^(Request|Output|Total|Mean|Median|P90|P99) .* 0\.00%$' "$tmp/rt.out")
ks=$(grep -cE '^KS (TTFT|TPOT|ITL|E2EL) +[0-9]+ +[0-9]+ +0\.0000 +1\.0000$' "$tmp/rt.out")
if [ "$rc" -eq 0 ] && [ "$rows" -eq 19 ] && [ "$ks" -eq 4 ] && grep -q 'within the tolerance of 0%' "$tmp/rt.out"; then
    pass=$((pass + 1))
else
    failn=$((failn + 1))
    echo "FAIL replay_round_trip: rc=$rc, $rows of 19 metrics at 0.00%, $ks of 4 KS rows at D=0:"
    cat "$tmp/rt.out"
fi
rt=(run "$q" --set workload.num_requests=200 --set workload.rate=inf --set workload.max_concurrency=16 --quiet --json "$tmp/rt-c.json" --detailed)
"$bin" "${rt[@]}" 2>/dev/null
"$bin" replay "$tmp/rt-c.json" "$q" --quiet --json "$tmp/rt-d.json" --detailed 2>/dev/null
expect_ok replay_round_trip_closed_loop 'worst \|error\| 0\.00% .* within the tolerance of 0%' -- compare "$tmp/rt-c.json" "$tmp/rt-d.json" --tolerance 0
fx="$data/vllm_result_llama8b.json"
expect_ok compare_fixture '^P99 TPOT \(ms\) +20\.04 +' -- compare "$fx" "$tmp/rt-a.json"
expect_ok compare_genai_perf '^Total token throughput \(tok/s\) +[0-9.]+ +not in SIM +-$' -- compare "$fx" "$data/genai_perf_export.json"
expect_ok compare_ks_missing '^KS TTFT +not in SIM' -- compare "$fx" "$data/genai_perf_export.json"
"$bin" compare "$fx" "$tmp/rt-a.json" --tolerance 5 --report "$tmp/cmp.html" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 1 ] && [ ! -s "$tmp/err" ] && grep -q 'past the tolerance of 5%' "$tmp/out" &&
    [ "$(grep -c '<svg' "$tmp/cmp.html")" -eq 4 ] && ! grep -qi '<script' "$tmp/cmp.html"; then
    pass=$((pass + 1))
else
    failn=$((failn + 1))
    echo "FAIL compare_tolerance_report: rc=$rc (wanted 1), or no verdict, or the report lacks its 4 charts"
fi
"$bin" replay "$data/result_one_failed.json" "$q" --json "$tmp/rf.json" >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 0 ] && grep -q 'replayed 2 requests .*left out 1 that failed there' "$tmp/err"; then
    pass=$((pass + 1))
else
    failn=$((failn + 1))
    echo "FAIL replay_failed_requests: wanted 2 replayed and 1 left out:"
    cat "$tmp/err"
fi
expect_fail compare_not_vllm "result_not_vllm.json: not a vLLM result JSON: no key 'completed'" -- compare "$data/result_not_vllm.json" "$fx"
expect_fail compare_malformed "result_malformed.json:3:[0-9]+: malformed JSON" -- compare "$fx" "$data/result_malformed.json"
expect_fail compare_not_json "quickstart.yaml:[0-9]+:[0-9]+: malformed JSON" -- compare "$q" "$fx"
expect_fail compare_missing "nope.json: cannot open" -- compare "$fx" "$tmp/nope.json"
expect_fail compare_one_file "compare: needs two result files" -- compare "$fx"
expect_fail compare_bad_tolerance "--tolerance: expected a percentage >= 0, got 'ten'" -- compare "$fx" "$fx" --tolerance ten
expect_fail compare_len_mismatch "result_len_mismatch.json: key 'output_lens' has 49 entries but 'input_lens' has 50" -- compare "$data/result_len_mismatch.json" "$fx"
expect_fail compare_bad_entry "result_bad_entry.json: key 'ttfts'\[2\]: expected a number, got a string" -- compare "$data/result_bad_entry.json" "$fx"
expect_fail replay_no_start_times "result_no_start_times.json: no key 'start_times': replay needs per-request data" -- replay "$data/result_no_start_times.json" "$q"
expect_fail replay_len_mismatch "result_len_mismatch.json: key 'output_lens' has 49 entries but 'input_lens' has 50" -- replay "$data/result_len_mismatch.json" "$q"
expect_fail replay_genai_perf "genai_perf_export.json: a GenAI-Perf/AIPerf profile export holds no per-request data" -- replay "$data/genai_perf_export.json" "$q"
expect_fail replay_bad_scenario "bad_yaml.yaml:5:1: malformed YAML" -- replay "$fx" "$data/bad_yaml.yaml"

echo "$pass passed, $failn failed"
[ "$failn" -eq 0 ]
