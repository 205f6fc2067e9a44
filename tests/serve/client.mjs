// Real clients of `servesim serve` for its tests (tests/serve_sdk.sh), with the official
// OpenAI Node SDK (pinned in package-lock.json):
//   node client.mjs sdk BASE_URL                 stream a chat completion and a completion,
//                                                print the transcript, check the usage counts
//   node client.mjs load BASE_URL CONC N TOKENS OUT.json [sdk]
//                                                a closed loop of CONC concurrent streams, N
//                                                requests in all, each TOKENS reply tokens;
//                                                per request: the server's id, when it was
//                                                sent, when each token arrived (ms); and
//                                                /metrics scraped and parsed every 100 ms;
//                                                through node:http, or with sdk the SDK's
//                                                own streams (sent: when create() is called)
// Everything stays on the URL given (127.0.0.1); the process ends within its own bound.
import OpenAI from "openai";
import { writeFileSync } from "node:fs";
import http from "node:http";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";

const [mode, base, ...rest] = process.argv.slice(2);
const client = new OpenAI({ baseURL: base, apiKey: "none", maxRetries: 0, timeout: 120000 });
const fail = (msg) => {
  console.error("client: FAIL " + msg);
  process.exit(1);
};
setTimeout(() => fail("the client's own bound (300 s) passed"), 300000).unref();

// The Prometheus text exposition format (version 0.0.4), strictly: comments # HELP / # TYPE,
// samples NAME{LABELS} VALUE; anything else is an error. Returns [{name, labels, value}].
function parseProm(text) {
  const out = [];
  const types = new Map();
  for (const line of text.split("\n")) {
    if (line === "") continue;
    let m;
    if ((m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line))) {
      if (m[1] === "TYPE") {
        if (!["gauge", "counter", "histogram", "summary", "untyped"].includes(m[3]))
          throw new Error("bad TYPE line: " + line);
        types.set(m[2], m[3]);
      }
      continue;
    }
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error("not a sample line: " + line);
    const labels = {};
    if (m[3]) {
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y;
      let l;
      re.lastIndex = 0;
      while (re.lastIndex < m[3].length && (l = re.exec(m[3]))) labels[l[1]] = l[2];
      if (re.lastIndex !== m[3].length) throw new Error("bad labels: " + line);
    }
    const v = m[4] === "+Inf" ? Infinity : Number(m[4]);
    if (Number.isNaN(v)) throw new Error("bad value: " + line);
    const fam = m[1].replace(/_(bucket|count|sum)$/, "");
    if (!types.has(m[1]) && !types.has(fam)) throw new Error("sample without TYPE: " + line);
    out.push({ name: m[1], labels, value: v });
  }
  return out;
}

function gauge(samples, name) {
  return samples.filter((s) => s.name === name).reduce((a, s) => a + s.value, 0);
}

async function sdk() {
  const models = await client.models.list();
  const model = models.data[0].id;
  console.log(`models: ${models.data.map((m) => m.id).join(", ")}`);
  const t0 = performance.now();
  const chat = await client.chat.completions.create({
    model,
    messages: [{ role: "user", content: "Say something about simulated tokens." }],
    max_tokens: 12,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "", chunks = 0, usage = null, finish = null, first = null;
  for await (const c of chat) {
    if (c.usage) usage = c.usage;
    const ch = c.choices[0];
    if (!ch) continue;
    if (ch.delta?.content) {
      if (first === null) first = performance.now() - t0;
      text += ch.delta.content;
      chunks++;
    }
    if (ch.finish_reason) finish = ch.finish_reason;
  }
  console.log(`chat (stream): ${chunks} chunks, first after ${first.toFixed(1)} ms, finish ${finish}`);
  console.log(`  text: ${JSON.stringify(text)}`);
  console.log(`  usage: ${JSON.stringify(usage)}`);
  if (chunks !== 12 || !usage || usage.completion_tokens !== 12 || finish !== "length")
    fail(`chat stream: ${chunks} chunks, usage ${JSON.stringify(usage)}, finish ${finish}`);
  // prompt tokens: ceil(37 bytes / 4) + 4 for the message = 14
  if (usage.prompt_tokens !== 14) fail(`chat prompt_tokens ${usage.prompt_tokens}, want 14`);

  const comp = await client.completions.create({
    model,
    prompt: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    max_tokens: 8,
    min_tokens: 8,
    ignore_eos: true,
    stream: true,
    stream_options: { include_usage: true },
  });
  text = "";
  chunks = 0;
  usage = null;
  for await (const c of comp) {
    if (c.usage) usage = c.usage;
    if (c.choices[0]?.text) {
      text += c.choices[0].text;
      chunks++;
    }
  }
  console.log(`completion (stream, 10 token ids): ${chunks} chunks, usage ${JSON.stringify(usage)}`);
  console.log(`  text: ${JSON.stringify(text)}`);
  if (chunks !== 8 || usage.prompt_tokens !== 10 || usage.completion_tokens !== 8)
    fail("completion stream counts");
  const whole = await client.completions.create({ model, prompt: "abcdefghi", max_tokens: 5 });
  console.log(`completion (whole): ${JSON.stringify(whole.choices[0].text)}, usage ${JSON.stringify(whole.usage)}`);
  if (whole.usage.prompt_tokens !== 3 || whole.usage.completion_tokens !== 5) fail("whole counts");
  try {
    await client.completions.create({ model, prompt: "x", max_tokens: 5, bogus: 1 });
    fail("an unknown field was accepted");
  } catch (e) {
    if (!(e instanceof OpenAI.BadRequestError)) throw e;
    console.log(`unknown field: ${e.status} ${e.message}`);
  }
  console.log("client: sdk ok");
}

// The load's request: a 100-token prompt, tok reply tokens, streamed with the usage.
const loadRequest = (model, tok) => ({
  model,
  prompt: "x".repeat(400),
  max_tokens: tok,
  ignore_eos: true,
  stream: true,
  stream_options: { include_usage: true },
});

// The server's record of a request, from its response headers: when it read the request's
// headers and when the request entered the simulation, on this machine's monotonic clock
// (seconds), as this process's performance.now() (ms): process.hrtime reads the same clock.
const monoOffset = Number(process.hrtime.bigint()) / 1e6 - performance.now();
const serverTimes = (rec, get) => {
  rec.received = Number(get("x-servesim-received")) * 1e3 - monoOffset;
  rec.entered = Number(get("x-servesim-entered")) * 1e3 - monoOffset;
};

// One streamed completion through the SDK: the same record as the node:http one.
async function oneSdk(model, tok) {
  const rec = { id: -1, sent: performance.now(), tokens: [], usage: null };
  const { data: stream, response } = await client.completions.create(loadRequest(model, tok)).withResponse();
  serverTimes(rec, (h) => response.headers.get(h));
  for await (const c of stream) {
    const now = performance.now();
    if (rec.id < 0) rec.id = Number(c.id.replace(/^cmpl-/, ""));
    if (c.usage) rec.usage = c.usage;
    if (c.choices[0]?.text) rec.tokens.push(now);
  }
  return rec;
}

async function load(conc, n, tokens, outPath, via) {
  const models = await client.models.list();
  const model = models.data[0].id;
  const recs = [];
  let next = 0, peakWaiting = 0, peakRunning = 0, scrapes = 0, lastWaiting = -1;
  const waitingSeen = [];
  const scrape = async () => {
    const r = await fetch(base.replace(/\/v1$/, "") + "/metrics");
    const s = parseProm(await r.text());
    scrapes++;
    const w = gauge(s, "vllm:num_requests_waiting"), run = gauge(s, "vllm:num_requests_running");
    peakWaiting = Math.max(peakWaiting, w);
    peakRunning = Math.max(peakRunning, run);
    waitingSeen.push(w + run);
    lastWaiting = w + run;
  };
  let scraping = true;
  const scraper = (async () => {
    while (scraping) {
      await scrape();
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  // The streams go through node:http with a keep-alive agent and a plain SSE reader: the
  // SDK's own stream decoder costs the client more CPU than 512 streams leave it here, and
  // what the client measures must be the server's pacing, not its own backlog.
  const url = new URL(base + "/completions");
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const body = (tok) => JSON.stringify(loadRequest(model, tok));
  const one = (tok) => via === "sdk" ? oneSdk(model, tok) :
    new Promise((resolve, reject) => {
      const rec = { id: -1, sent: performance.now(), tokens: [], usage: null };
      const req = http.request(
        url,
        { method: "POST", agent, headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body(tok)) } },
        (res) => {
          if (res.statusCode !== 200) return reject(new Error("status " + res.statusCode));
          serverTimes(rec, (h) => res.headers[h]);
          let buf = "";
          res.setEncoding("utf8");
          res.on("data", (d) => {
            const now = performance.now();
            buf += d;
            let k;
            while ((k = buf.indexOf("\n\n")) >= 0) {
              const ev = buf.slice(0, k);
              buf = buf.slice(k + 2);
              if (!ev.startsWith("data: ") || ev === "data: [DONE]") continue;
              const c = JSON.parse(ev.slice(6));
              if (c.error) return reject(new Error(c.error.message));
              if (rec.id < 0) rec.id = Number(c.id.replace(/^cmpl-/, ""));
              if (c.usage) rec.usage = c.usage;
              if (c.choices[0]?.text) rec.tokens.push(now);
            }
          });
          res.on("end", () => resolve(rec));
          res.on("error", reject);
        }
      );
      req.on("error", reject);
      // sent: when the request's last byte went to the kernel, not when it was queued in
      // this process (512 queued at once leave over a hundred milliseconds apart)
      req.on("finish", () => (rec.sent = performance.now()));
      req.end(body(tok));
    });
  // Warm-up: each worker opens its keep-alive connection with a one-token request (not
  // compared: a burst of CONC new connections measures the client's and the kernel's
  // connection setup, not the server's pacing); the server counts these too.
  const warm = await Promise.all(Array.from({ length: conc }, () => one(1)));
  // The loop ramps up (worker k starts k x RAMP / CONC in), as load generators do: 512
  // requests written in one tick would measure this process's backlog. RAMP: a second,
  // or through the SDK 8 ms a stream (4 s at 512: each create() costs the SDK a
  // millisecond or so of this process's CPU).
  const ramp = via === "sdk" ? Math.max(1000, 8 * conc) : 1000;
  const worker = async (_, k) => {
    await new Promise((r) => setTimeout(r, (ramp * k) / conc));
    while (next < n) {
      next++;
      const rec = await one(tokens);
      if (!rec.usage || rec.usage.completion_tokens !== rec.tokens.length)
        fail(`request ${rec.id}: usage ${JSON.stringify(rec.usage)} for ${rec.tokens.length} tokens`);
      recs.push(rec);
    }
  };
  // How late this process itself runs: what it measures is late by as much (ms).
  const lag = monitorEventLoopDelay({ resolution: 1 });
  lag.enable();
  // And when: a 1-ms timer's runs. A token read at time a may have waited in its socket
  // since this process last looked at the socket: in the loop's turn before the last
  // timer ran (libuv reads the sockets ready, then runs the timers, then looks again), so
  // its arrival lies in [a - stall, a], the stall reaching back to the timer's run before
  // the last (descheduled, or busy with other streams' chunks); compare.py takes that.
  const ticks = [];
  const ticker = setInterval(() => ticks.push(performance.now()), 1);
  const t0 = performance.now();
  await Promise.all(Array.from({ length: conc }, worker));
  lag.disable();
  clearInterval(ticker);
  const stall = (a) => { // a - the tick before the last one before a (ms)
    let lo = 0, hi = ticks.length - 1, at = -1;
    while (lo <= hi) {
      const m = (lo + hi) >> 1;
      if (ticks[m] <= a) { at = m; lo = m + 1; } else hi = m - 1;
    }
    return at < 1 ? 0 : Math.round((a - ticks[at - 1]) * 1000) / 1000;
  };
  for (const r of recs) r.stalls = r.tokens.map(stall);
  scraping = false;
  await scraper;
  await scrape(); // after the load: nothing running or waiting
  const wall = (performance.now() - t0) / 1000;
  const lagP50 = lag.percentile(50) / 1e6, lagP99 = lag.percentile(99) / 1e6, lagMax = lag.max / 1e6;
  // and the server: the 99th percentile of its pacing error, to its bucket's upper bound (ms)
  const after = parseProm(await (await fetch(base.replace(/\/v1$/, "") + "/metrics")).text());
  const pace = after.filter((x) => x.name === "servesim:emit_lateness_seconds_bucket");
  const paceMax = 1e3 * gauge(after, "servesim:emit_lateness_max_seconds");
  const total = pace.find((x) => x.labels.le === "+Inf").value;
  const paceP99 = 1e3 * Number(pace.find((x) => x.value >= 0.99 * total).labels.le);
  const paceP50 = 1e3 * Number(pace.find((x) => x.value >= 0.5 * total).labels.le);
  writeFileSync(outPath, JSON.stringify({ recs, warm: warm.length, scrapes, lagP50, lagP99, lagMax, paceP50, paceP99, paceMax, peakWaiting, peakRunning, lastWaiting, wall }));
  console.log(
    `client: ${recs.length} streams (${via}) at concurrency ${conc} in ${wall.toFixed(2)} s; /metrics parsed ` +
      `${scrapes} times: waiting peaked at ${peakWaiting}, running at ${peakRunning}, ` +
      `${lastWaiting} held after the load; this process ran late by up to ${lagP99.toFixed(1)} ms ` +
      `(p99; max ${lagMax.toFixed(1)} ms), the server's pacing p99 <= ${paceP99} ms (max ${paceMax.toFixed(1)} ms)`
  );
}

if (mode === "sdk") await sdk();
else if (mode === "load") await load(Number(rest[0]), Number(rest[1]), Number(rest[2]), rest[3], rest[4] || "http");
else fail("usage: node client.mjs sdk|load BASE_URL ...");
process.exit(0);
