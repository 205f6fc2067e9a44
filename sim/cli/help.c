/*
 * The command line's help, as tables (see help_int.h): one row per option of each command,
 * printed by `servesim help`, `servesim help CMD` and `servesim CMD --help`, and searched
 * for the "did you mean" of an unknown option or command. docs/servesim.1 is the same
 * text as a manual page; tests/help_checks.sh keeps the parsers, these tables and the page
 * in step.
 */
#include "cli/help_int.h"

#include <stdlib.h>
#include <string.h>

#include "servesim/base/suggest.h"
#include "servesim/cluster/schema.h"
#include "servesim/cost/perf.h"

#define EXIT_USAGE 2

/* Rows several commands share. */
#define OPT_SET                                                                                    \
    {                                                                                              \
        "--set", "KEY=VALUE", "override a scenario key; repeatable, applied in order"              \
    }
#define OPT_REPORT                                                                                 \
    {                                                                                              \
        "--report", "FILE.html", "write an HTML report, its charts beside it as FILE-*.svg"        \
    }
#define OPT_JOBS                                                                                   \
    {                                                                                              \
        "--jobs", "N", "simulations at once, in worker processes (1 to 1024; default 1)"           \
    }

static const sv__opt_help_t run_opts[] = {
    OPT_SET,
    {"--json", "FILE", "write vLLM's result JSON (- for stdout)"},
    {"--detailed", NULL, "with --json: add the per-request arrays (ttfts, itls, ...)"},
    {"--requests-csv", "FILE", "write one CSV row per request"},
    {"--timeseries-csv", "FILE", "write the sampled queue, batch and KV usage as CSV"},
    {"--cluster-csv", "FILE", "write the cluster over time (replicas up, SLO attainment) as CSV"},
    {"--prometheus", "FILE", "write vLLM's Prometheus metrics at the end (text format)"},
    {"--prometheus-series", "FILE", "the same over time: a scrape per sample, OpenMetrics"},
    OPT_REPORT,
    {"--quiet", NULL, "no summary on stdout, no notes on stderr"},
    {"--check", NULL, "recount the KV blocks after every step (slow; a self-check)"},
    {"--sketch", NULL, "percentiles from quantile sketches (1% relative error)"},
    {"--sketch-alpha", "A", "the sketches' relative error, in (0, 0.5] (default 0.01)"},
    {"--exact-max", "N", "exact percentiles up to N requests (default 20000000)"},
    {"--convention", "NAME", "metric names: vllm (default), genai-perf, llmperf, sglang"},
    {"--verbose", NULL, "print the configuration block before the summary"},
    {"--trace-json", "FILE", "write a Perfetto timeline of steps, transfers and requests"},
    {"--axes-from", "RUN.json", "with --report: stretch the axes to cover that run's too"},
    {"--jobs", "N", "accepted as for sweep and plan; a run is one process"},
    {NULL, NULL, NULL},
};

static const sv__opt_help_t sweep_opts[] = {
    {"--vary", "KEY=SPEC", "a key and its values (up to 6; default: the scenario's sweep.vary)"},
    {"--load", "KEY", "the load axis of the curves and knees (default workload.rate)"},
    OPT_SET,
    {"--out", "DIR", "write sweep.csv, sweep.json, points/ into DIR (default sweep-out)"},
    OPT_JOBS,
    {"--shard", "K/N", "run every N-th point from the K-th only (default 1/1); see merge"},
    OPT_REPORT,
    {"--quiet", NULL, "no table on stdout, no progress on stderr"},
    {NULL, NULL, NULL},
};

static const sv__opt_help_t no_opts[] = {{NULL, NULL, NULL}};

static const sv__opt_help_t plan_opts[] = {
    OPT_SET,
    {"--out", "DIR", "also write plan.csv and plan.json into DIR (default: none)"},
    OPT_JOBS,
    OPT_REPORT,
    {NULL, NULL, NULL},
};

static const sv__opt_help_t compare_opts[] = {
    {"--tolerance", "PCT", "exit 1 when a metric is off by over PCT % (default: no verdict)"},
    {"--report", "FILE.html", "write an HTML report with the distributions overlaid"},
    {NULL, NULL, NULL},
};

static const sv__opt_help_t replay_opts[] = {
    OPT_SET,
    {"--json", "FILE", "write vLLM's result JSON (- for stdout)"},
    {"--detailed", NULL, "with --json: add the per-request arrays (ttfts, itls, ...)"},
    {"--requests-csv", "FILE", "write one CSV row per request"},
    {"--timeseries-csv", "FILE", "write the sampled queue, batch and KV usage as CSV"},
    {"--prometheus", "FILE", "write vLLM's Prometheus metrics at the end (text format)"},
    OPT_REPORT,
    {"--quiet", NULL, "no summary on stdout, no note on stderr"},
    {"--check", NULL, "recount the KV blocks after every step (slow; a self-check)"},
    {"--convention", "NAME", "metric names: vllm (default), genai-perf, llmperf, sglang"},
    {NULL, NULL, NULL},
};

static const sv__opt_help_t explain_opts[] = {
    {"--model", "M", "a catalog model or a path to a config.json (required)"},
    {"--gpu", "G", "a catalog GPU, see servesim list gpus (required)"},
    {"--tp", "N", "tensor-parallel GPUs (default 1)"},
    {"--input", "N", "prompt tokens (default 1024)"},
    {"--output", "N", "output tokens (default 256)"},
    {"--batch", "LIST", "decode batch sizes, 1 to 32 (default 1,8,32,64,128,256)"},
    {"--weight-dtype", "T", "bf16, fp16, fp8, int4, nvfp4 or mxfp4 (default bf16)"},
    {"--kv-dtype", "T", "bf16, fp16, fp8, nvfp4 or mxfp4 (default bf16)"},
    {"--profile", "NAME", "engine profile of models/engines.yaml (default vllm)"},
    {"--ideal", NULL, "efficiencies 1, overheads and floors 0: the pure roofline"},
    {"--set", "KEY=VALUE", "a cost-model key (below), applied after the options above"},
    {"--json", "[FILE]", "print JSON instead of the text, on stdout or to FILE"},
    {NULL, NULL, NULL},
};

static const sv__opt_help_t validate_opts[] = {
    {"--data", "FILE.csv", "measured runs (default tests/data/validation/measurements.csv)"},
    {"--family", "PREFIX", "only the families starting with PREFIX (default: all)"},
    {"--bounds", "FILE.csv", "exit 1 when a family's MAPE is past its bound in FILE"},
    {"--coverage-tolerance", "PTS", "exit 1 when a band's coverage is PTS off 80%"},
    {"--band-tolerance", "PTS", "exit 1 when a printed band is PTS off the derived one"},
    {"--band-table", NULL, "print the derived bands as sim/studies/bands.c's lines"},
    {"--markdown", NULL, "print docs/validation.md's tables (tools/validation-doc)"},
    {NULL, NULL, NULL},
};

static const sv__opt_help_t calibrate_opts[] = {
    {"--gpu", "G", "kernels, runs, synthetic: the GPU fitted"},
    {"--out", "F.yaml", "kernels, engine: write the fit as a catalog file"},
    {"--name", "N", "its name (default GPU-calibrated, or the base profile's)"},
    {"--allreduce", "F.csv", "kernels: also fit Vidur's all_reduce.csv"},
    {"--send-recv", "F.csv", "kernels: also fit Vidur's send_recv.csv"},
    {"--rows", "MODEL:HW,...", "engine: the rows of PERF_MODEL.csv fitted"},
    {"--base", "PROFILE", "engine: the engine profile the fit starts from"},
    {"--fit", "KEY,...", "engine, runs, result: the keys fitted (at most 8)"},
    {"--family", "F", "runs: the validation family fitted"},
    {"--data", "CSV", "runs: the measured runs (default: as validate)"},
    {"--set", "KEY=VALUE", "result: override a scenario key (repeatable)"},
    {"--check", NULL, "kernels: the GPU's own values against the tables, fitting nothing"},
    {"--noise", "REL", "synthetic: relative noise of the tables, 0 to 0.5 (default 0.01)"},
    {"--max-iter", "N", "iterations before a fit has not converged (default 200)"},
    {NULL, NULL, NULL},
};

static const sv__opt_help_t lab_opts[] = {
    {"--port", "N", "the TCP port (default 8080; 0 takes a free one and prints it)"},
    {"--bind", "ADDR", "the address to listen on (default 127.0.0.1: this machine only)"},
    {NULL, NULL, NULL},
};

static const sv__opt_help_t serve_opts[] = {
    {"--host", "ADDR", "the address to listen on (default 127.0.0.1: this machine only)"},
    {"--port", "N", "the TCP port (default 8000; 0 takes a free one and prints it)"},
    {"--speed", "X", "simulated seconds per wall-clock second (default 1)"},
    {"--background", "", "the scenario's own workload runs alongside the HTTP requests"},
    {"--max-connections", "N", "connections answered, in all and per client (default 1024)"},
    {"--timeout", "S", "seconds to send a request whole (default 10; idle: 3 x S)"},
    {"--json", "FILE", "at the end, the run's result JSON with the per-request lists"},
    {"--log", "", "a line per request on stderr"},
    {"--set", "KEY=VALUE", "override a scenario key (repeatable)"},
    {"--jobs", "N", "accepted as for sweep and plan; the server runs one simulation"},
    {NULL, NULL, NULL},
};

static const sv__cmd_help_t commands[] = {
    {"run", "SCENARIO.yaml [options]", "simulate a scenario; print the vLLM-style summary",
     "Simulate one scenario and print the summary `vllm bench serve` prints, then the\n"
     "per-pool and KV-link sections of a cluster. Same scenario and seed, same bytes.",
     run_opts,
     "KEY is a dotted scenario key (docs/scenarios.md): workload.rate, engine.max_num_seqs,\n"
     "pools.0.replicas; VALUE is YAML: 8, inf, [1, 2], {tokens: 512, prompts: 4}.",
     "servesim run scenarios/quickstart.yaml --set workload.rate=16 --json out.json"},
    {"sweep", "SCENARIO.yaml --vary KEY=SPEC [options]",
     "run the scenario over a grid; report the knee",
     "Run the scenario at every point of a grid (the product of the --vary keys, the first\n"
     "varying fastest), print one row per point and the knee of each load curve: the\n"
     "highest load before SLO attainment falls below slo.attainment (docs/planning.md).",
     sweep_opts,
     "SPEC is a list 1,2,4, a linear range start:stop:step (inclusive) or a geometric range\n"
     "start:stop:xF. Zipped keys move together: K1,K2=a1,b1;a2,b2.\nShards of one sweep (--shard "
     "1/2, --shard 2/2) are joined by merge.",
     "servesim sweep scenarios/quickstart.yaml --vary workload.rate=2:20:2 --out sw --jobs 2"},
    {"merge", "OUT DIR...", "join the directories of sharded sweeps into OUT",
     "Join the output directories of the shards of one sweep (sweep --shard K/N) into OUT:\n"
     "exactly the sweep.csv and sweep.json the unsharded sweep writes.",
     no_opts, NULL, "servesim merge sw sw-1 sw-2"},
    {"plan", "SCENARIO.yaml [options]", "cheapest clusters for the scenario's plan: target",
     "For every configuration the scenario's plan: map allows (GPU, TP, colocated or\n"
     "disaggregated), find the fewest replicas that meet the SLOs at the target rate and\n"
     "rank the configurations by cost (docs/planning.md).",
     plan_opts, NULL, "servesim plan scenarios/plan-chat-50rps.yaml --jobs 2 --report plan.html"},
    {"compare", "REAL.json SIM.json [options]",
     "metric by metric: both values, relative error, KS tests",
     "Compare two results (vLLM's result JSON or a GenAI-Perf export) metric by metric: both\n"
     "values and the relative error, then Kolmogorov-Smirnov tests of the per-request\n"
     "distributions when both files have them (docs/compare.md).",
     compare_opts, NULL, "servesim compare real.json sim.json --tolerance 10"},
    {"replay", "REAL.json SCENARIO.yaml [options]",
     "simulate a result's requests at their send times",
     "Simulate the requests of a vLLM result JSON saved with --save-detailed (their lengths\n"
     "and send times) on the scenario's cluster; compare the two with servesim compare.",
     replay_opts, NULL, "servesim replay real.json scenarios/quickstart.yaml --json sim.json"},
    {"list", "gpus|models", "print the catalog", "Print the GPUs or the models of the catalog.",
     no_opts, NULL, "servesim list gpus"},
    {"explain", "--model M --gpu G [options]", "what the cost model says about one setup",
     "Print what the cost model computes for one model on one GPU: memory, the prefill of\n"
     "one prompt, decode steps per batch size, and what bounds each (docs/cost-model.md).",
     explain_opts, NULL,
     "servesim explain --model llama-3.1-8b --gpu h100-sxm --tp 1 --batch 1,8,32,64"},
    {"validate", "[options]", "simulate every measured run of the validation table",
     "Simulate every measured run of the validation table and print the errors per family,\n"
     "in sample and with each family left out of every fit, and the error bands (80%\n"
     "coverage) derived from the left-out residuals (docs/validation.md).",
     validate_opts, NULL, "servesim validate --family splitwise-bloom-a100"},
    {"calibrate", "kernels|engine|runs|result|synthetic [options] [FILE...]",
     "fit GPU curves or an engine profile to measurements",
     "kernels --gpu G MLP.csv...: fit a GPU's efficiency curves to Vidur kernel tables\n"
     "  (no MLP.csv, only --allreduce/--send-recv: the collectives alone).\n"
     "engine --rows MODEL:HW,... --base P --fit KEY,... PERF_MODEL.csv: fit an engine\n"
     "  profile to Splitwise iteration times.\n"
     "runs --family F --gpu G --fit KEY,...: fit to whole simulated runs of one family.\n"
     "result RESULT.json SCENARIO.yaml --fit KEY,...: fit to one real vllm bench serve\n"
     "  result replayed on the scenario (docs/compare.md).\n"
     "synthetic --gpu G: recover known parameters from generated tables (a self-test).",
     calibrate_opts, NULL, "servesim calibrate synthetic --gpu a40"},
    {"lab", "[options]", "the classroom lab: live lessons in the browser",
     "Serve the classroom lab on this machine: one page of lesson tabs whose sliders rerun\n"
     "the simulator (docs/lab.md). Ctrl-C stops it.",
     lab_opts, NULL, "servesim lab --port 8080"},
    {"serve", "SCENARIO.yaml [options]", "the scenario's cluster behind an OpenAI-compatible API",
     "Serve POST /v1/completions and /v1/chat/completions (streamed or not), GET /v1/models,\n"
     "/health and /metrics as vLLM does, each request simulated live on the scenario's\n"
     "cluster: every token leaves when the simulation makes it (docs/serve.md). Ctrl-C\n"
     "stops it.",
     serve_opts, NULL, "servesim serve scenarios/quickstart.yaml --port 8000"},
    {"help", "[COMMAND]", "this overview, or a command's options",
     "Print the overview, or COMMAND's usage, options and an example (as COMMAND --help).", no_opts,
     NULL, "servesim help sweep"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const sv__opt_help_t global_opts[] = {
    {"--catalog", "DIR", "the catalog folder (default $SERVESIM_CATALOG, else models/)"},
    {"--help", NULL, "this overview (-h too); after a command, that command's help"},
    {"--version", NULL, "print servesim's version"},
    {NULL, NULL, NULL},
};

const sv__cmd_help_t *sv__help_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
    return NULL;
}

/* The options as a two-column list: "  --name ARG" then the meaning at column 27, on the
 * next line when the first column is longer. */
static void print_opts(const sv__opt_help_t *o, FILE *f)
{
    for (; o->name; o++) {
        char left[64];
        snprintf(left, sizeof left, "%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        if (strlen(left) <= 22)
            fprintf(f, "  %-22s  %s\n", left, o->meaning);
        else
            fprintf(f, "  %s\n  %-22s  %s\n", left, "", o->meaning);
    }
}

/* Names joined with ", " and wrapped, for explain's --set keys. */
static void print_words(const char *const *w, const char *indent, FILE *f)
{
    size_t col = 0;
    for (size_t i = 0; w[i]; i++) {
        size_t l = strlen(w[i]) + (w[i + 1] ? 1 : 0);
        if (col == 0 || col + 1 + l > 88) {
            fprintf(f, "%s%s", col ? "\n" : "", indent);
            col = strlen(indent);
        } else {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%s%s", w[i], w[i + 1] ? "," : "");
        col += l;
    }
    fputc('\n', f);
}

void sv__help_print(const sv__cmd_help_t *h, FILE *f)
{
    fprintf(f, "usage: servesim %s %s\n\n%s\n", h->name, h->usage, h->about);
    if (h->opts[0].name) {
        fprintf(f, "\noptions:\n");
        print_opts(h->opts, f);
    }
    if (h->notes) fprintf(f, "\n%s\n", h->notes);
    if (strcmp(h->name, "explain") == 0) {
        fprintf(f, "\n--set keys (a leading hardware. or engine. is accepted):\n");
        print_words(sv_perf_setting_keys, "  ", f);
    }
    fprintf(f, "\nexample:\n  %s\n", h->example);
}

void sv__help_overview(FILE *f)
{
    fprintf(f, "usage: servesim [--catalog DIR] COMMAND [options]\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\noptions before the command:\n");
    print_opts(global_opts, f);
    fprintf(f,
            "\nservesim help COMMAND (or servesim COMMAND --help) prints a command's options and\n"
            "an example; the manual page has them all (man servesim once installed, else\n"
            "man -l docs/servesim.1). Scenario keys: servesim help keys, docs/scenarios.md.\n"
            "\nexample:\n  servesim run scenarios/quickstart.yaml\n");
}

int sv__help_asked(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
    return 0;
}

static const char *closest_command(const char *word)
{
    const char *names[NCOMMANDS];
    for (size_t i = 0; i < NCOMMANDS; i++)
        names[i] = commands[i].name;
    return sv_suggest(word, names, NCOMMANDS);
}

/* `servesim help keys [--markdown [SECTION]]`: the settings schema (cluster/schema.h) as
 * text, or as docs/scenarios.md's key tables. */
static int help_keys(int argc, char **argv)
{
    if (argc == 0) {
        printf("Scenario keys (section.key, type or unit, default); docs/scenarios.md explains "
               "each:\n");
        sv_keys_text(stdout);
        return EXIT_SUCCESS;
    }
    if (strcmp(argv[0], "--markdown") == 0 && argc <= 2) {
        if (argc == 2 && strcmp(argv[1], "top") != 0 && strcmp(argv[1], "batch-defaults") != 0) {
            int known = 0;
            for (const sv_keydef_t *k = sv_scenario_keys; k->name && !known; k++)
                known = strcmp(k->section, argv[1]) == 0;
            if (!known) {
                fprintf(stderr,
                        "servesim: error: help keys: no section '%s' (see servesim help "
                        "keys)\n",
                        argv[1]);
                return EXIT_FAILURE;
            }
        }
        sv_keys_markdown(stdout, argc == 2 ? argv[1] : NULL);
        return EXIT_SUCCESS;
    }
    fprintf(stderr,
            "servesim: error: help keys: expected no argument or --markdown [SECTION], "
            "got '%s'\n",
            argv[0]);
    return EXIT_USAGE;
}

int sv__help_main(int argc, char **argv)
{
    if (argc == 0) {
        sv__help_overview(stdout);
        return EXIT_SUCCESS;
    }
    if (strcmp(argv[0], "keys") == 0) return help_keys(argc - 1, argv + 1);
    if (sv__help_asked(argc, argv)) argv[0] = "help";
    const sv__cmd_help_t *h = sv__help_command(argv[0]);
    if (!h || argc > 1) {
        if (h) {
            fprintf(stderr, "servesim: error: help takes one command; '%s' is one too many\n",
                    argv[1]);
            return EXIT_USAGE;
        }
        return sv__unknown_command(argv[0]);
    }
    sv__help_print(h, stdout);
    return EXIT_SUCCESS;
}

static const char *parsing; /* the command whose arguments are parsed; NULL: before one */

void sv__help_parsing(const char *cmd)
{
    parsing = cmd;
}

/* The option table of cmd (NULL: the options before a command). */
static const sv__opt_help_t *opts_of(const char *cmd)
{
    const sv__cmd_help_t *h = cmd ? sv__help_command(cmd) : NULL;
    return h ? h->opts : global_opts;
}

static int listed(const char *cmd, const char *name)
{
    for (const sv__opt_help_t *o = opts_of(cmd); o->name; o++)
        if (strcmp(o->name, name) == 0) return 1;
    return 0;
}

void sv__opt_listed(const char *name)
{
    if (listed(parsing, name)) return;
    fprintf(stderr,
            "servesim: error: internal: %s parses option '%s', which its help table "
            "(sim/cli/help.c) does not list\n",
            parsing ? parsing : "servesim", name);
    exit(70);
}

int sv__opt_is(const char *arg, const char *name)
{
    sv__opt_listed(name);
    return strcmp(arg, name) == 0;
}

int sv__unknown_option(const char *cmd, const char *opt)
{
    const sv__opt_help_t *o = opts_of(cmd);
    const char *names[64];
    size_t n = 0;
    for (; o->name && n < 64; o++)
        names[n++] = o->name;
    /* "--jsn=out.json": the name is what comes before '='. */
    char word[128];
    snprintf(word, sizeof word, "%.*s", (int)strcspn(opt, "="), opt);
    if (listed(cmd, word)) {
        fprintf(stderr,
                "servesim: error: internal: %s lists option '%s' in its help, but its parser "
                "does not take it\n",
                cmd ? cmd : "servesim", word);
        exit(70);
    }
    const char *near = sv_suggest(word, names, n);
    if (!cmd) {
        if (near)
            fprintf(stderr, "servesim: error: unknown option '%s' (did you mean '%s'?)\n", opt,
                    near);
        else
            fprintf(stderr,
                    "servesim: error: unknown option '%s' (options before the command: "
                    "--catalog DIR, --help, --version)\n",
                    opt);
        return EXIT_USAGE;
    }
    if (near)
        fprintf(stderr, "servesim: error: %s: unknown option '%s' (did you mean '%s'?)\n", cmd, opt,
                near);
    else
        fprintf(stderr, "servesim: error: %s: unknown option '%s' (see servesim %s --help)\n", cmd,
                opt, cmd);
    return EXIT_FAILURE;
}

int sv__unknown_command(const char *cmd)
{
    const char *near = closest_command(cmd);
    if (near)
        fprintf(stderr, "servesim: error: unknown command '%s' (did you mean '%s'?)\n", cmd, near);
    else {
        fprintf(stderr, "servesim: error: unknown command '%s' (commands:", cmd);
        for (size_t i = 0; i < NCOMMANDS; i++)
            fprintf(stderr, "%s %s", i ? "," : "", commands[i].name);
        fprintf(stderr, "; see servesim help)\n");
    }
    return EXIT_USAGE;
}
