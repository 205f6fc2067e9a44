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
# The TP all-reduce algorithm by message size (docs/cost-model.md, "Collectives"): 16 KiB a
# token of Llama-3.1-70B; at 8 GPUs one-shot below 256 KiB, two-shot to 8 MiB, then NCCL.
ar=(explain --model llama-3.1-70b --gpu h100-sxm --tp 8 --batch 1,64,256)
expect_ok explain_allreduce 'all-reduce per batch: 1 one-shot \(16 KiB\), 64 two-shot \(1024 KiB\), 256 two-shot \(4096 KiB\)$' -- "${ar[@]}"
# the prefill's 16 MiB messages: NCCL's NVLink SHARP on the H100's NVSwitch, its ring without it
expect_ok explain_allreduce_prefill '^  tp all-reduce +14\.467  \(nccl-nvls\)$' -- "${ar[@]}"
expect_ok explain_allreduce_nvls_off '^  tp all-reduce +18\.985  \(nccl-ring\)$' -- "${ar[@]}" --set nccl_nvls=false
expect_ok explain_allreduce_eager "NCCL's ring at every size \(the engine profile has no custom all-reduce\)" -- "${ar[@]}" --profile eager
expect_ok explain_allreduce_json '"tp_allreduce":[[:space:]]*"two-shot"' -- "${ar[@]}" --json
expect_ok explain_config_json 'servesim explain: llama-3.1-8b on 1 x h100-sxm' -- explain --model "$data/llama-3.1-8b/config.json" --gpu h100-sxm

expect_fail unknown_gpu "^servesim: error: unknown GPU 'h100x' \(known: " -- explain --model llama-3.1-8b --gpu h100x
expect_fail unknown_model "^servesim: error: unknown model 'llama-9b'" -- explain --model llama-9b --gpu h100-sxm
expect_fail bad_config "bad_config.json:4:[0-9]+: malformed JSON" -- explain --model "$data/bad_config.json" --gpu h100-sxm
expect_fail missing_key "missing key 'num_hidden_layers'" -- explain --model "$data/missing_key_config.json" --gpu h100-sxm
expect_fail bad_tp "tp=8 does not divide the 28 attention heads of model 'qwen2.5-7b'" -- explain --model qwen2.5-7b --gpu h100-sxm --tp 8
expect_fail no_fit "model 'llama-3.1-70b' \(bf16 weights\) does not fit on a100-40gb with tp=1" -- explain --model llama-3.1-70b --gpu a100-40gb
expect_fail bad_set "--set compute_efficiency=2: compute_efficiency: expected a number > 0 and <= 1, got '2'" -- "${ex[@]}" --set compute_efficiency=2
expect_fail unknown_set "unknown key 'colour'" -- "${ex[@]}" --set colour=red
expect_fail bad_batch "--batch: expected 1 to 32 sizes >= 1 like 1,8,32,64, got .1,x." -- "${ex[@]}" --batch 1,x
expect_fail bad_option "unknown option '--frobnicate'" -- "${ex[@]}" --frobnicate
expect_fail bad_catalog "cannot open the catalog directory" -- --catalog /nonexistent list gpus

# run: the quickstart, bad scenarios, and byte-identical outputs
q="$src/scenarios/quickstart.yaml"
expect_ok run_quickstart '^============ Serving Benchmark Result ============$' -- run "$q" --set workload.num_requests=50
# --set KEY= removes the key: the scenario's rate gives way to a rate profile
expect_ok run_rate_unset_profile '^Successful requests: +20' -- run "$q" --set workload.num_requests=20 --set workload.rate= --set 'workload.rate_profile={kind: steps, points: [[0, 5]]}'
expect_ok run_goodput '^Request goodput \(req/s\):' -- run "$q" --set workload.num_requests=50
expect_ok run_convention '^Metric convention: +genai-perf$' -- run "$q" --set workload.num_requests=50 --convention genai-perf
expect_ok run_finance '^Total per 1M output tokens \(\$\):' -- run "$q" --set workload.num_requests=50 --set cost.pue=1.2
expect_ok run_verbose '^  max_num_batched_tokens: +8192$' -- run "$q" --set workload.num_requests=50 --verbose
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
expect_ok sweep_zip_curves '^\[hardware.replicas=2, engine.max_num_seqs=16\]$' -- sweep "$q" --vary 'hardware.replicas,engine.max_num_seqs=1,8;2,16' --vary workload.rate=4,8 --set workload.num_requests=100 --out "$tmp/swz"
"$bin" sweep "$q" --vary workload.rate=4,8,40 --set workload.num_requests=200 --out "$tmp/sw" --quiet --report "$tmp/sw.html" >/dev/null 2>&1
if grep -q "<svg" "$tmp/sw.html" && ! grep -qi "<script" "$tmp/sw.html" && [ -s "$tmp/sw-ttft.svg" ] &&
    [ -s "$tmp/sw/sweep.csv" ] && [ -s "$tmp/sw/points/point-000002.json" ]; then
    pass=$((pass + 1))
else
    failn=$((failn + 1))
    echo "FAIL sweep_outputs: report, SVG, sweep.csv or point JSON missing (or a script in the HTML)"
fi
# A second sweep into the same --out leaves no point file of the first: its failed point
# (tp=3 does not divide the heads) and the index it no longer has are gone.
"$bin" sweep "$q" --vary hardware.tp=1,3 --set workload.num_requests=5 --out "$tmp/sw" --quiet >/dev/null 2>&1
if [ "$(ls "$tmp/sw/points")" = point-000000.json ]; then
    pass=$((pass + 1))
else
    failn=$((failn + 1))
    echo "FAIL sweep_stale_points: $(ls "$tmp/sw/points" | tr '\n' ' ')"
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
expect_ok set_null_removes '^Request rate configured \(RPS\): +2\.00' -- run "$q" --set workload.rate=null --set 'workload.rate_profile={kind: steps, points: [[0, 2], [30, 8]]}' --set workload.num_requests=200
expect_fail plan_no_map "no plan: map in the scenario" -- plan "$q"
expect_fail plan_too_many_tps "plan.tp: give 1 to 8 values, got 9" -- plan "$q" --set 'plan={target_rate: 10, gpus: [h100-sxm], tp: [1, 2, 4, 8, 16, 32, 64, 128, 256]}'
expect_fail plan_empty_gpus "plan.gpus: give 1 to 16 values, got 0" -- plan "$q" --set 'plan={target_rate: 10, gpus: []}'
expect_fail sweep_bad_vary "--vary workload.rate=10:2:2: expected start:stop:step" -- sweep "$q" --vary workload.rate=10:2:2
expect_fail sweep_no_vary "sweep needs --vary" -- sweep "$q"
expect_fail sweep_bad_shard "--shard: expected K/N" -- sweep "$q" --vary workload.rate=1,2 --shard 3/2
# Issue 8 item 6
expect_fail sweep_vary_twice "^servesim: error: --vary workload.rate: the key is varied twice" -- sweep "$q" --vary workload.rate=2,4 --vary workload.rate=8,16 --out "$tmp/sw2"
expect_fail sweep_vary_unknown "^servesim: error: --vary workload.ratee: unknown key 'workload.ratee' \(did you mean 'workload.rate'\?\)$" -- sweep "$q" --vary workload.ratee=2,4 --out "$tmp/sw3"
expect_fail sweep_point_fails "^servesim: error: 1 of 2 points failed \(rows in .*/sw4/sweep.csv\); the first: pool 'default' \(1 x h100-sxm, tp=3\): tp=3 does not divide" -- sweep "$q" --vary hardware.tp=1,3 --set workload.num_requests=20 --out "$tmp/sw4" --quiet
if grep -q '^1,3,.*,"pool ' "$tmp/sw4/sweep.csv"; then pass=$((pass + 1)); else
    failn=$((failn + 1)); echo "FAIL sweep_point_fails_row: the failed point's row is missing"; fi
expect_fail plan_attainment_zero "^servesim: error: --set slo.attainment=0: slo.attainment: expected a number > 0 and <= 1, got '0'$" -- plan "$q" --set 'plan={target_rate: 10, gpus: [h100-sxm]}' --set slo.attainment=0
expect_fail plan_serving_empty "plan.serving: give 1 to 2 values, got 0$" -- plan "$q" --set 'plan={target_rate: 10, gpus: [h100-sxm], serving: []}'
expect_fail sweep_shard_trailing "--shard: expected K/N with 1 <= K <= N, got '1/2x'" -- sweep "$q" --vary workload.rate=1,2 --shard 1/2x
expect_fail catalog_no_value "^servesim: error: --catalog needs a directory \(--catalog DIR\)$" -- --catalog
expect_fail run_json_no_value "^servesim: error: --json needs a value \(see servesim --help\)$" -- run "$q" --json
expect_fail explain_model_no_value "^servesim: error: --model needs a value" -- explain --gpu h100-sxm --model
expect_fail merge_nothing "merge needs OUT and at least one shard directory" -- merge "$tmp/m"

# Issue 8 item 5: no output overwrites an input, and no two outputs share a file.
mkdir -p "$tmp/in"
cp "$q" "$tmp/in/q.yaml"
cp "$q" "$tmp/in/sweep.csv" # a scenario under the name a sweep writes
cp "$data/trace_scenario.yaml" "$data/small_trace.csv" "$tmp/in/"
cp "$data/llama-3.1-8b/config.json" "$tmp/in/config.json"
ln -s q.yaml "$tmp/in/link.yaml"
cp -r "$src/models" "$tmp/in/models"
cp -r "$tmp/in" "$tmp/orig"
qq="$tmp/in/q.yaml"
expect_fail out_over_scenario "^servesim: error: --json $qq: would overwrite the scenario \($qq\); write it elsewhere$" -- run "$qq" --set workload.num_requests=5 --quiet --json "$qq"
expect_fail out_over_scenario_link "^servesim: error: --requests-csv $tmp/in/link.yaml: would overwrite the scenario" -- run "$qq" --set workload.num_requests=5 --quiet --requests-csv "$tmp/in/link.yaml"
expect_fail out_over_scenario_dots "would overwrite the scenario" -- run "$qq" --set workload.num_requests=5 --quiet --prometheus "$tmp/in/../in/./q.yaml"
expect_fail out_over_trace "^servesim: error: --timeseries-csv $tmp/in/small_trace.csv: would overwrite a file the scenario reads \($tmp/in/small_trace.csv\)" -- run "$tmp/in/trace_scenario.yaml" --quiet --timeseries-csv "$tmp/in/small_trace.csv"
expect_fail out_over_catalog "^servesim: error: --json $tmp/in/models/gpus.yaml: would overwrite a catalog file" -- --catalog "$tmp/in/models" run "$qq" --set workload.num_requests=5 --quiet --json "$tmp/in/models/gpus.yaml"
expect_fail out_over_config "^servesim: error: --json $tmp/in/config.json: would overwrite the model's config.json \($tmp/in/config.json\)" -- explain --model "$tmp/in/config.json" --gpu h100-sxm --json="$tmp/in/config.json"
expect_fail out_twice "^servesim: error: --requests-csv $tmp/o.x: the same file as --json $tmp/o.x; give each output its own path$" -- run "$qq" --set workload.num_requests=5 --quiet --json "$tmp/o.x" --requests-csv "$tmp/o.x"
expect_fail out_twice_spelled "^servesim: error: --requests-csv $tmp/./o.x: the same file as --json $tmp/o.x" -- run "$qq" --set workload.num_requests=5 --quiet --json "$tmp/o.x" --requests-csv "$tmp/./o.x"
expect_fail out_report_chart "^servesim: error: --report $tmp/r-\*.svg: may be the same file as --json $tmp/r-ttft-cdf.svg" -- run "$qq" --set workload.num_requests=5 --quiet --json "$tmp/r-ttft-cdf.svg" --report "$tmp/r.html"
expect_fail sweep_report_over_scenario "^servesim: error: --report $qq: would overwrite the scenario" -- sweep "$qq" --vary workload.rate=2,4 --out "$tmp/swr" --report "$qq"
expect_fail sweep_out_over_scenario "^servesim: error: --out $tmp/in/sweep.csv: would overwrite the scenario" -- sweep "$tmp/in/sweep.csv" --vary workload.rate=2,4 --out "$tmp/in"
expect_fail plan_out_over_scenario "^servesim: error: --report $qq: would overwrite the scenario" -- plan "$qq" --set 'plan={target_rate: 10, gpus: [h100-sxm]}' --report "$qq"
expect_fail merge_into_shard "^servesim: error: merge OUT $tmp/sw/sweep.csv: would overwrite a shard's sweep.csv \($tmp/sw/sweep.csv\); write it elsewhere$" -- merge "$tmp/sw" "$tmp/sw"
if diff -r "$tmp/in" "$tmp/orig" >/dev/null 2>&1 && [ ! -e "$tmp/o.x" ]; then pass=$((pass + 1)); else
    failn=$((failn + 1)); echo "FAIL out_inputs_intact: an input changed or an output was written"; fi
# devices are never refused: two outputs to /dev/null are fine
if "$bin" run "$qq" --set workload.num_requests=5 --quiet --json /dev/null --requests-csv /dev/null 2>"$tmp/err"; then
    pass=$((pass + 1))
else
    failn=$((failn + 1)); echo "FAIL out_dev_null_twice:"; cat "$tmp/err"
fi

# Issue 8 item 8: a failed write (a full disk: /dev/full) is an error naming the output.
# expect_fail_stdout_full NAME ARGS...: stdout to /dev/full, non-zero, one line on stderr.
expect_fail_stdout_full() {
    local name=$1
    shift
    "$bin" "$@" >/dev/full 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -ne 0 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
        grep -q '^servesim: error: stdout: write error$' "$tmp/err"; then
        pass=$((pass + 1))
    else
        failn=$((failn + 1))
        echo "FAIL $name: rc=$rc, wanted one line 'stdout: write error':"
        cat "$tmp/err"
    fi
}
if [ -w /dev/full ]; then
    expect_fail explain_json_full "^servesim: error: /dev/full: write error$" -- "${ex[@]}" --json=/dev/full
    expect_fail explain_json_space_full "^servesim: error: /dev/full: write error$" -- "${ex[@]}" --json /dev/full
    for o in --json --requests-csv --timeseries-csv --prometheus --report; do
        expect_fail "run${o//-/_}_full" "^servesim: error: /dev/full: write error$" -- run "$q" --set workload.num_requests=20 --quiet $o /dev/full
    done
    expect_fail sweep_report_full "^servesim: error: /dev/full: write error$" -- sweep "$q" --vary workload.rate=4,8 --set workload.num_requests=20 --out "$tmp/swf" --quiet --report /dev/full
    # plan prints its progress on stderr first: the error is the last line
    "$bin" plan "$q" --set 'plan={target_rate: 10, gpus: [h100-sxm], probe_requests: 200}' --set workload.num_requests=200 --report /dev/full >/dev/null 2>"$tmp/err"
    if [ $? -ne 0 ] && [ "$(tail -1 "$tmp/err")" = "servesim: error: /dev/full: write error" ]; then
        pass=$((pass + 1))
    else
        failn=$((failn + 1)); echo "FAIL plan_report_full:"; cat "$tmp/err"
    fi
    expect_fail_stdout_full list_stdout_full list gpus
    expect_fail_stdout_full explain_stdout_full "${ex[@]}"
    expect_fail_stdout_full explain_json_stdout_full "${ex[@]}" --json
    expect_fail_stdout_full help_stdout_full --help
    expect_fail_stdout_full merge_stdout_full merge "$tmp/swm" "$tmp/sw"
fi
# Issue 8 item 11: explain --json FILE (with a space) writes FILE, like --json=FILE
if "$bin" "${ex[@]}" --json "$tmp/e.json" >"$tmp/out" 2>&1 && [ ! -s "$tmp/out" ] &&
    grep -q '"single_request"' "$tmp/e.json"; then pass=$((pass + 1)); else
    failn=$((failn + 1)); echo "FAIL explain_json_space_file: $tmp/e.json lacks the JSON"; fi

# every shipped scenario runs (cut short), with --check's per-step recount of KV blocks
for f in "$src"/scenarios/*.yaml; do
    expect_ok "scenario_$(basename "$f" .yaml)" '^Successful requests:' -- run "$f" --check --set workload.num_requests=300
done


# Cost model v2, engine profiles, calibrate and validate.
expect_ok explain_profile 'engine profile: trtllm' -- "${ex[@]}" --profile trtllm
expect_ok explain_small_ops '^  small_ops ' -- "${ex[@]}"
expect_fail explain_bad_profile "unknown engine profile 'nosuch' \(known: vllm, trtllm, eager" -- "${ex[@]}" --profile nosuch
hdr="n_head,n_kv_head,n_embd,n_expanded_embd,use_gated_mlp,num_tokens,num_tensor_parallel_workers,time_stats.mlp_up_proj.median"
printf 'n_head,n_embd\n32,4096\n' >"$tmp/nocols.csv"
printf '%s\n32,8,4096,14336,True,1,1,0.1\n32,8,4096,14336,True,1,1,fast\n' "$hdr" >"$tmp/text.csv"
printf '%s\n32,8,4096,14336,True,1,1,0.1\n' "$hdr" >"$tmp/few.csv"
expect_fail calibrate_missing_column "nocols.csv:1: missing column 'n_kv_head'" -- calibrate kernels --gpu a100-80gb "$tmp/nocols.csv"
expect_fail calibrate_not_a_number "text.csv:3: column 'time_stats.mlp_up_proj.median': expected a number, got 'fast'" -- calibrate kernels --gpu a100-80gb "$tmp/text.csv"
expect_fail calibrate_too_few_rows "few.csv: 1 usable rows for the gemm fit, need at least 6 to fit 4 parameters" -- calibrate kernels --gpu a100-80gb "$tmp/few.csv"
expect_fail calibrate_no_convergence "did not converge in 1 iterations" -- calibrate engine --rows bloom-176b:a100-80gb --base eager --fit layer_overhead_us,seq_overhead_us "$data/validation/splitwise_perf_model.csv" --max-iter 1
expect_fail calibrate_bad_rows "--rows: unknown GPU 'tpu'" -- calibrate engine --rows bloom-176b:tpu --base eager --fit seq_overhead_us "$data/validation/splitwise_perf_model.csv"
expect_ok calibrate_synthetic 'all recovered within 2%' -- calibrate synthetic --gpu a40
# Its temporary table is a fresh file (mkstemp): a link planted where a predictable
# name (the process id) would be is left alone, and nothing is left behind.
mkdir -p "$tmp/syn"
echo precious >"$tmp/syn-victim"
TMPDIR=$tmp/syn bash -c 'ln -s "$0" "$TMPDIR/servesim-synthetic-$$.csv"; exec "$1" calibrate synthetic --gpu a40' \
    "$tmp/syn-victim" "$bin" >/dev/null 2>&1
if [ "$(cat "$tmp/syn-victim")" = precious ] && [ "$(ls "$tmp/syn" | wc -l)" -eq 1 ]; then
    pass=$((pass + 1))
else
    failn=$((failn + 1))
    echo "FAIL calibrate_synthetic_tmp: the planted link's target was written, or a file was left"
fi
mkdir -p "$tmp/cat"
expect_ok calibrate_engine 'engine: 76 rows' -- calibrate engine --rows bloom-176b:a100-80gb,bloom-176b:h100-80gb --base eager --fit layer_overhead_us,seq_overhead_us,compute_efficiency,attention_efficiency "$data/validation/splitwise_perf_model.csv" --name eager-refit --out "$tmp/cat/eager.yaml"
cp "$src/models/gpus.yaml" "$src/models/llms.yaml" "$tmp/cat/"
expect_ok calibrate_output_loads 'engine profile: eager-refit' -- --catalog "$tmp/cat" "${ex[@]}" --profile eager-refit
head -8 "$data/validation/measurements.csv" | sed 's/^trtllm-8b-h100,throughput/trtllm-8b-h100,speed/' >"$tmp/badkind.csv"
expect_fail validate_bad_kind "badkind.csv:8: column 'kind': expected throughput, ttft, tpot, prefill, step or e2e, got 'speed'" -- validate --data "$tmp/badkind.csv"
printf 'family,kind,max_mape_pct\nsplitwise-bloom-h100,step,0.1\n' >"$tmp/tight.csv"
expect_fail validate_bound_exceeded "1 MAPE bound\(s\) of .*tight.csv exceeded" -- validate --family splitwise-bloom-h100 --bounds "$tmp/tight.csv"
mkdir -p "$tmp/be"
cp "$src/models/gpus.yaml" "$src/models/llms.yaml" "$tmp/be/"
printf 'engines:\n  - name: x\n    fitted_to: "nothing"\n    tp: 2\n' >"$tmp/be/engines.yaml"
expect_fail engine_bad_key "engines.yaml:4:9: engines\[0\].tp: not an engine-profile key" -- --catalog "$tmp/be" list gpus
printf 'engines:\n  - name: x\n    fitted_to: "nothing"\n    seq_overhead_us: fast\n' >"$tmp/be/engines.yaml"
expect_fail engine_bad_value "engines.yaml:4:22: engines\[0\]: seq_overhead_us: expected a number" -- --catalog "$tmp/be" list gpus
printf 'engines:\n  - name: x\n    seq_overhead_us: 3\n' >"$tmp/be/engines.yaml"
expect_fail engine_no_source "engines.yaml:2:5: engines\[0\]: missing required key 'fitted_to'" -- --catalog "$tmp/be" list gpus
expect_fail run_bad_profile "quickstart.yaml: engine.profile: unknown engine profile 'nosuch'" -- run "$q" --set engine.profile=nosuch
expect_ok run_profile '^Successful requests:' -- run "$q" --set engine.profile=trtllm --set workload.num_requests=100
# The engine names the scheduler and the profile; a mixed pair runs, with a note.
expect_ok run_engine_scalar '^Engine: +trtllm \(scheduler trtllm, profile trtllm\)' -- run "$q" --set engine= --set engine=trtllm --set workload.num_requests=20
expect_ok run_engine_version '^Engine: +vllm-0.6 \(scheduler vllm-v0, profile vllm\)' -- run "$q" --set engine.scheduler= --set engine.name=vllm-0.6 --set workload.num_requests=20
expect_ok run_engine_mixed '^Engine note: +scheduler vllm \(vllm.s\) with engine profile trtllm \(trtllm.s\): mixed as given' -- run "$q" --set engine.profile=trtllm --set workload.num_requests=20
expect_ok run_engine_json '"engine": "sglang", "scheduler": "sglang", "engine_profile": "sglang"' -- run "$q" --set engine.scheduler= --set engine.name=sglang --set workload.num_requests=20 --json -
# The engine profile's defaults for the pool's scheduler (models/engines.yaml scheduler_defaults).
expect_ok run_engine_loop '^Engine loop: +async scheduling on, API server 12 ms \(profile defaults\)$' -- run "$q" --set workload.num_requests=20
expect_ok run_engine_loop_v0 '^Engine: +vllm-v0 \(scheduler vllm-v0, profile vllm\)$' -- run "$q" --set engine.scheduler= --set engine.name=vllm-v0 --set workload.num_requests=20
if "$bin" run "$q" --set engine.scheduler= --set engine.name=vllm-v0 --set workload.num_requests=20 2>/dev/null | grep -q '^Engine loop:'; then
    failn=$((failn + 1))
    echo "FAIL run_engine_loop_v0: vLLM V0 printed an Engine loop line (no async scheduling, no API path)"
else
    pass=$((pass + 1))
fi
expect_ok explain_profile_defaults '^  scheduler vllm, where a scenario leaves them unset: async_scheduling true, api_server_ms 12 ' -- "${ex[@]}"
expect_ok validate_family 'splitwise-bloom-a100 .*\[fitted\]' -- validate --family splitwise-bloom-a100

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
expect_ok compare_fixture '^P99 TPOT \(ms\) +23\.90 +' -- compare "$fx" "$tmp/rt-a.json"
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
# A replay carries no prompt identity: the file's input_lens are whole prompts (no shared
# system prompt added again) and a Mooncake scenario's hash ids are not applied to them.
"$bin" run "$q" --set workload.num_requests=100 --set 'workload.shared_prefix={tokens: 512, prompts: 4}' --quiet --json "$tmp/sp-a.json" --detailed 2>/dev/null
"$bin" replay "$tmp/sp-a.json" "$q" --set 'workload.shared_prefix={tokens: 512, prompts: 4}' --quiet --json "$tmp/sp-b.json" 2>/dev/null
timeout 120 "$bin" replay "$fx" "$src/scenarios/mooncake-replay.yaml" --quiet --json "$tmp/mc.json" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ] && [ "$(grep -o '"total_input_tokens": [0-9]*' "$tmp/sp-a.json")" = "$(grep -o '"total_input_tokens": [0-9]*' "$tmp/sp-b.json")" ]; then
    pass=$((pass + 1))
else
    failn=$((failn + 1))
    echo "FAIL replay_no_identity: rc=$rc of the Mooncake replay, or the shared prefix was added twice"
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

# tests/data/fuzz-regress: inputs that once crashed a reader (docs/fuzzing.md) must end
# in a clean exit or a one-line error.
for f in "$data"/fuzz-regress/*.yaml "$data"/fuzz-regress/*.csv "$data"/fuzz-regress/*.json; do
    [ -f "$f" ] || continue
    case $f in
    *.yaml) set -- run "$f" --quiet --set workload.num_requests=50 ;;
    *.csv)
        printf 'model: llama-3.1-8b\nhardware: {gpu: h100-sxm}\nworkload:\n  trace: {file: "%s"}\n' "$f" >"$tmp/fz.yaml"
        set -- run "$tmp/fz.yaml" --quiet
        ;;
    *.json) set -- explain --model "$f" --gpu h100-sxm ;;
    esac
    "$bin" "$@" >/dev/null 2>"$tmp/err"
    rc=$?
    if { [ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ]; } || { [ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]; }; then
        pass=$((pass + 1))
    else
        failn=$((failn + 1))
        echo "FAIL fuzz-regress $(basename "$f"): rc=$rc"
        head -3 "$tmp/err"
    fi
done

# docs/errors.md: every row is an error a user can meet; run its command and require a
# non-zero exit and exactly its message as the last line on stderr.
# The rows run on copies, so a regression cannot overwrite the source tree's inputs.
doc_src=$tmp/docsrc
mkdir -p "$doc_src/scenarios"
cp -r "$data" "$doc_src/data"
cp -r "$src/models" "$doc_src/models"
cp "$src/scenarios/quickstart.yaml" "$doc_src/scenarios/"
doc_rows=0
while IFS= read -r row; do
    row=${row#| }
    row=${row% |}
    IFS=$'\x1f' read -r id _ cmd msg <<<"${row// | /$'\x1f'}"
    id=${id//\`/}
    cmd=${cmd#\`}
    cmd=${cmd%\`}
    msg=${msg#\`}
    msg=${msg%\`}
    cmd=${cmd//\\|/|}
    msg=${msg//\\|/|}
    cmd=${cmd//\$X/explain --model llama-3.1-8b --gpu h100-sxm}
    rm -rf "$tmp/doc"
    mkdir -p "$tmp/doc"
    want=$msg
    want=${want//\$Q/$doc_src/scenarios/quickstart.yaml}
    want=${want//\$E/$doc_src/data/errors}
    want=${want//\$D/$doc_src/data}
    want=${want//\$M/$doc_src/models}
    want=${want//\$T/$tmp/doc}
    (
        Q=$doc_src/scenarios/quickstart.yaml D=$doc_src/data E=$doc_src/data/errors
        M=$doc_src/models T=$tmp/doc
        export SERVESIM_CATALOG=$M
        eval "\"\$bin\" $cmd" >"$tmp/out" 2>"$tmp/err"
    )
    rc=$?
    got=$(tail -n 1 "$tmp/err")
    doc_rows=$((doc_rows + 1))
    if [ "$rc" -ne 0 ] && [ "$got" = "$want" ]; then
        pass=$((pass + 1))
    else
        failn=$((failn + 1))
        echo "FAIL errors.md $id: rc=$rc"
        echo "  want: $want"
        echo "  got:  $got"
    fi
done < <(grep '^| `' "$src/docs/errors.md" | grep -v '^| `out of memory`' | awk -F' [|] ' 'NF == 4')
if [ "$doc_rows" -lt 100 ]; then
    failn=$((failn + 1))
    echo "FAIL errors.md: only $doc_rows rows were read"
fi

echo "$pass passed, $failn failed"
[ "$failn" -eq 0 ]
