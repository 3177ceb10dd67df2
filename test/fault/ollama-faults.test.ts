/**
 * Fault injection 6: Ollama slow, down, flapping (errors, dropped connections and stalls at
 * seeded requests) and answering with another vector size in the middle of a run. A scripted
 * proxy in front of two Ollama doubles (768-d and 384-d) decides each request's fate. The hooks
 * keep their budgets; `index` and `search` answer with one clear line or fall back to BM25 with
 * one warning; and the index never holds vectors of two sizes (checked by reading every vector
 * of index.bin: one dimension, each of unit length as the doubles make them).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { appendFileSync, closeSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { blockStart, INDEX_FILE, openIndexFile, readExactly } from "../../src/index/format.ts";
import { readRowsTable } from "../../src/index/index-file.ts";
import { checkIndex } from "../../src/index/disk.ts";
import { startOllamaDouble, type OllamaDouble } from "../helpers/ollama-double.ts";
import { FACT, FACT_QUERY, faultKit, HANG_SLACK_MS, HOOK_BUDGET_MS, HOOKS, hookOutputProblem, ms, rngFor, stderrLines, tracked, writeMemory, type Project, type RunResult } from "./helpers.ts";
import { appendTurn } from "./transcript.ts";

const kit = faultKit("ollama-faults");

// ---------------------------------------------------------------------------------------------
// A scripted Ollama

type Action = { kind: "ok" } | { kind: "small" } | { kind: "http-500" } | { kind: "cut" } | { kind: "stall"; ms: number };
type Plan = (n: number, path: string) => Action;

const DOWN = "http://127.0.0.1:9";

/** A proxy in front of a 768-d and a 384-d double; `plan` (set by the test) decides each request's fate. */
interface ScriptedOllama {
  host: string;
  plan: Plan;
  stop(): Promise<void>;
}

async function forward(req: Request, to: OllamaDouble, path: string): Promise<Response> {
  const res = await fetch(to.host + path, { method: req.method, headers: { "content-type": "application/json" }, body: req.method === "GET" ? undefined : await req.arrayBuffer() });
  return new Response(await res.arrayBuffer(), { status: res.status, headers: { "content-type": res.headers.get("content-type") ?? "application/json" } });
}

// One per test, stopped after it: a plan left behind by a failed test cannot reach the next.
const started: ScriptedOllama[] = [];
afterEach(async () => {
  for (const o of started.splice(0)) await o.stop();
});

async function scriptedOllama(): Promise<ScriptedOllama> {
  const big = await startOllamaDouble({ dim: 768 });
  const small = await startOllamaDouble({ dim: 384 });
  let served = 0;
  const o: ScriptedOllama = {
    host: "",
    plan: () => ({ kind: "ok" }),
    async stop() {
      proxy.stop(true);
      await big.stop();
      await small.stop();
    },
  };
  const proxy = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname;
      const a = o.plan(served++, path);
      kit.count("ollama-requests");
      if (a.kind === "stall") await Bun.sleep(a.ms);
      if (a.kind === "http-500") return Response.json({ error: "boom" }, { status: 500 });
      // An answer cut off in the middle (a connection that died mid-body).
      if (a.kind === "cut") return new Response('{"model":"nomic-embed-text","embeddings":[[0.0123,-0.04', { headers: { "content-type": "application/json" } });
      return forward(req, a.kind === "small" ? small : big, path);
    },
  });
  o.host = `http://127.0.0.1:${proxy.port}`;
  started.push(o);
  return o;
}

const ok: Plan = () => ({ kind: "ok" });
/** Every request stalls longer than any budget or timeout. */
const slow: Plan = () => ({ kind: "stall", ms: 20_000 });
/** Seeded fates per request: ok, HTTP 500, an answer cut off, a stall. */
function flapping(failShare: number, stallMs = 4_000): Plan {
  const r = rngFor(`flap-${failShare}-${stallMs}`);
  return () => {
    if (!r.chance(failShare)) return { kind: "ok" };
    return r.pick([{ kind: "http-500" }, { kind: "cut" }, { kind: "stall", ms: stallMs }] as Action[]);
  };
}
/** Embeddings turn 384-d after `after` embed requests; /api/show keeps saying 768 unless `metadataToo`. */
function dimSwitch(after: number, metadataToo: boolean): Plan {
  let embeds = 0;
  return (_n, path) => {
    if (path === "/api/embed" || path === "/api/embeddings") return embeds++ >= after ? { kind: "small" } : { kind: "ok" };
    if (path === "/api/show" && metadataToo && embeds >= after) return { kind: "small" };
    return { kind: "ok" };
  };
}

// ---------------------------------------------------------------------------------------------
// The index's vectors, read back

/** One dimension for every vector of index.bin, each of unit length (the doubles normalise). */
function vectorsOf(p: Project): { dim: number | null; vectors: number; chunks: number } {
  const check = checkIndex(p.indexDir);
  expect(check.state).toBe("ok");
  const file = openIndexFile(join(p.indexDir, INDEX_FILE));
  try {
    const { head } = file;
    const dim = head.meta.dim;
    const rows = readRowsTable(file);
    expect(rows.ids.length).toBe(head.vectorCount);
    expect(rows.magnitudes.length).toBe(head.vectorCount);
    if (head.vectorCount > 0) {
      expect(dim === 768 || dim === 384).toBe(true);
      const at = blockStart(file);
      const bytes = new Uint8Array(head.vectorCount * dim! * 4);
      readExactly(file.fd, bytes, at);
      const floats = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
      for (let k = 0; k < head.vectorCount; k++) {
        let sum = 0;
        for (let i = k * dim!; i < (k + 1) * dim!; i++) sum += floats[i]! * floats[i]!;
        expect(Math.abs(Math.sqrt(sum) - 1)).toBeLessThan(1e-3);
        expect(Math.abs(rows.magnitudes[k]! - 1)).toBeLessThan(1e-3);
      }
      kit.count("vectors-read", head.vectorCount);
    }
    // The base's own block is checked above; the counts are the index's, segments included.
    if (check.state !== "ok") throw new Error("unreachable");
    return { dim, vectors: check.file.vectors, chunks: check.file.chunks };
  } finally {
    closeSync(file.fd);
  }
}

/** A command's stderr is at most one line, in the shapes memsearch uses, never a stack trace. */
function oneClearLine(r: RunResult): string | undefined {
  const lines = stderrLines(r.stderr);
  expect(lines.length).toBeLessThanOrEqual(1);
  for (const l of lines) expect(l).toMatch(/^(Warning|Error|Notice|memsearch): \S/);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  return lines[0];
}

function project(o: ScriptedOllama, memory: "sample" | string = "sample"): { p: Project; env: Record<string, string | undefined> } {
  const p = kit.project({ memory });
  return { p, env: { ...p.env, OLLAMA_HOST: o.host, MEMSEARCH_NO_WATCH: "1", MEMSEARCH_SUMMARIZER_PROVIDER: "extract" } };
}

/** Index with a healthy Ollama first: 768-d vectors for every chunk. */
async function indexedProject(o: ScriptedOllama, memory: "sample" | string = "sample") {
  const { p, env } = project(o, memory);
  o.plan = ok;
  const r = await ms(["index"], { cwd: p.root, env });
  expect(r.code).toBe(0);
  expect(r.stderr).toBe("");
  const v = vectorsOf(p);
  expect(v.vectors).toBe(v.chunks);
  return { p, env };
}

const CONDITIONS: { name: string; plan: () => Plan; host?: string }[] = [
  { name: "slow (every request stalls 20 s)", plan: () => slow },
  { name: "down (connection refused)", plan: () => ok, host: DOWN },
  { name: "flapping (half the requests fail or stall)", plan: () => flapping(0.5) },
  { name: "answering 384-d vectors to a 768-d index", plan: () => dimSwitch(0, false) },
];

describe("Ollama faults: hooks", () => {
  for (const c of CONDITIONS) {
    for (const warm of [false, true]) {
      test(
        `${c.name}${warm ? ", watch process running" : ""}: every hook exits 0 with one JSON object inside its budget`,
        tracked(kit, async () => {
          const o = await scriptedOllama();
          const { p, env: base } = await indexedProject(o);
          const env = { ...base, OLLAMA_HOST: c.host ?? o.host, MEMSEARCH_NO_WATCH: warm ? undefined : "1" };
          const transcript = join(p.root, "t.jsonl");
          const turn = { sessionId: "oll-s", uuid: "oll-u", promptId: "oll-p", prompt: "what did we decide about the redis connection pool?", command: "grep -rn redis", output: "config/redis.yml", reply: "We sized the Redis connection pool at 20." };
          appendTurn(transcript, turn, "all");
          o.plan = c.plan();
          const input = { session_id: turn.sessionId, prompt_id: turn.promptId, transcript_path: transcript, cwd: p.root };
          const inputs: Record<string, unknown> = {
            "session-start": { ...input, source: "startup" },
            "user-prompt-submit": { ...input, prompt: turn.prompt },
            stop: { ...input, last_assistant_message: turn.reply },
            "session-end": { ...input, reason: "prompt_input_exit" },
          };
          for (const event of HOOKS) {
            // With a watch process, the prompt hook asks it (after it has loaded the index).
            if (event === "user-prompt-submit" && warm) for (let i = 0; i < 50 && !existsSync(join(p.dataDir, "watch.pid")); i++) await Bun.sleep(100);
            const r = await ms(["hook", event], { cwd: p.root, env, stdin: JSON.stringify(inputs[event]), hangMs: HOOK_BUDGET_MS[event]! + HANG_SLACK_MS });
            kit.count("hook-runs");
            expect({ event, problem: hookOutputProblem(r) }).toEqual({ event, problem: undefined });
            if (event === "session-start" && c.host === DOWN) expect(JSON.parse(r.stdout).systemMessage).toContain("Ollama is not reachable");
          }
        }),
        60_000,
      );
    }
  }
});

describe("Ollama faults: search and index", () => {
  for (const c of CONDITIONS) {
    test(
      `${c.name}: search falls back to BM25 with one warning, index says so in one line, vectors never mixed`,
      tracked(kit, async () => {
        const o = await scriptedOllama();
        const { p, env: base } = await indexedProject(o);
        const env = { ...base, OLLAMA_HOST: c.host ?? o.host, MEMSEARCH_EMBEDDING_TIMEOUT_MS: "1500", MEMSEARCH_EMBEDDING_QUERY_TIMEOUT_MS: "1000" };
        o.plan = c.plan();
        for (let i = 0; i < 3; i++) {
          const s = await ms(["search", "redis connection pool", "-j"], { cwd: p.root, env });
          kit.count("searches");
          expect(s.code).toBe(0);
          const line = oneClearLine(s);
          const hits = JSON.parse(s.stdout);
          expect(hits[0].content).toContain("Redis connection pool");
          if (hits[0].mode === "bm25") expect(line).toMatch(/^Warning: .*; results use BM25 only$/);
          else expect(line).toBeUndefined();
        }
        // New notes to embed while Ollama misbehaves.
        appendFileSync(join(p.memory, "2026-11-21.md"), `\n### 18:00\n- ${FACT}\n`);
        const r = await ms(["index"], { cwd: p.root, env });
        kit.count("index-runs");
        const line = oneClearLine(r);
        if (r.code === 0) {
          expect(r.stdout).toMatch(/^Indexed \d+ chunks\.\n$/);
          if (line) expect(line).toMatch(/^Warning: /);
        } else expect(line).toMatch(/^Error: /);
        const v = vectorsOf(p);
        expect(v.dim).toBe(768);
        // Ollama back: the missing vectors are added, still one size.
        o.plan = ok;
        const again = await ms(["index"], { cwd: p.root, env: { ...env, OLLAMA_HOST: o.host } });
        expect(again.code).toBe(0);
        const after = vectorsOf(p);
        expect(after.vectors).toBe(after.chunks);
        expect(after.dim).toBe(768);
        const found = JSON.parse((await ms(["search", FACT_QUERY, "-j"], { cwd: p.root, env: { ...env, OLLAMA_HOST: o.host } })).stdout);
        expect(found[0].content).toContain(FACT);
        expect(found[0].mode).toBe("hybrid");
      }),
      90_000,
    );
  }
});

describe("Ollama faults: mid-run", () => {
  /** A generated memory (with FACT in it), written the first time a test asks; the projects copy it. */
  let generatedAt: string | undefined;
  const generated = () => {
    if (!generatedAt) {
      generatedAt = join(kit.base, "generated");
      writeMemory(generatedAt, kit.rngFor("generated memory"), 4, 20);
    }
    return generatedAt;
  };

  test(
    "vectors change size in the middle of one index run: one line, nothing of the other size kept, then a clean 768-d index",
    tracked(kit, async () => {
      const o = await scriptedOllama();
      const rng = kit.rngFor("vectors change size mid-run");
      for (let round = 0; round < 3; round++) {
        const { p, env: base } = project(o, generated());
        const env = { ...base, MEMSEARCH_EMBEDDING_BATCH_SIZE: "8" };
        const fresh = round === 0;
        if (!fresh) {
          o.plan = ok;
          expect((await ms(["index"], { cwd: p.root, env })).code).toBe(0);
          appendFileSync(join(p.memory, "2026-10-01.md"), Array.from({ length: 20 }, (_, i) => `\n### 20:${String(i).padStart(2, "0")}\n- added note ${i} ${rng.string(8)}\n`).join(""));
        }
        const before = existsSync(join(p.indexDir, INDEX_FILE)) ? readFileSync(join(p.indexDir, INDEX_FILE)) : undefined;
        o.plan = dimSwitch(rng.int(1, 3), false);
        const r = await ms(["index"], { cwd: p.root, env });
        kit.count("index-runs");
        const line = oneClearLine(r);
        // Either the run stops (the index as it was) or it keeps its chunks for keywords only, and says which.
        if (r.code !== 0) {
          expect(line).toMatch(/^Error: .*(sizes|dimension|\d+-d)/);
          if (before) expect(readFileSync(join(p.indexDir, INDEX_FILE)).equals(before)).toBe(true);
          else expect(existsSync(join(p.indexDir, INDEX_FILE))).toBe(false);
        } else {
          expect(line).toMatch(/^Warning: .*(sizes|dimension|\d+-d)/);
          const v = vectorsOf(p);
          if (v.vectors > 0) expect(v.dim).toBe(768);
        }
        o.plan = ok;
        expect((await ms(["index"], { cwd: p.root, env })).code).toBe(0);
        const v = vectorsOf(p);
        expect(v).toMatchObject({ dim: 768, vectors: v.chunks });
      }
    }),
    90_000,
  );

  test(
    "the model is replaced between runs (its metadata says 384 too): the index is rebuilt at 384-d, never mixed",
    tracked(kit, async () => {
      const o = await scriptedOllama();
      const { p, env } = await indexedProject(o, generated());
      o.plan = dimSwitch(0, true);
      appendFileSync(join(p.memory, "2026-10-02.md"), "\n### 21:00\n- a note written after the model changed\n");
      const r = await ms(["index"], { cwd: p.root, env });
      kit.count("index-runs");
      expect(r.code).toBe(0);
      expect(oneClearLine(r)).toMatch(/384-d/);
      const v = vectorsOf(p);
      expect(v).toMatchObject({ dim: 384, vectors: v.chunks });
      const s = await ms(["search", FACT_QUERY, "-j"], { cwd: p.root, env });
      expect(JSON.parse(s.stdout)[0]).toMatchObject({ mode: "hybrid" });
      expect(JSON.parse(s.stdout)[0].content).toContain(FACT);
    }),
    60_000,
  );

  test(
    "a server whose vectors contradict its own metadata: new vectors left out with one warning, the index stays 768-d",
    tracked(kit, async () => {
      const o = await scriptedOllama();
      const { p, env } = await indexedProject(o, generated());
      o.plan = dimSwitch(0, false);
      appendFileSync(join(p.memory, "2026-10-03.md"), "\n### 21:00\n- a note the broken server cannot embed\n");
      const r = await ms(["index"], { cwd: p.root, env });
      kit.count("index-runs");
      expect(r.code).toBe(0);
      expect(oneClearLine(r)).toMatch(/^Warning: /);
      const v = vectorsOf(p);
      expect(v.dim).toBe(768);
      expect(v.vectors).toBe(v.chunks - 1);
    }),
    60_000,
  );

  test(
    "flapping across runs (a seeded third of the requests fail): each run is one line at most, never mixed, complete once Ollama is back",
    tracked(kit, async () => {
      const o = await scriptedOllama();
      const { p, env: base } = project(o, generated());
      const env = { ...base, MEMSEARCH_EMBEDDING_TIMEOUT_MS: "1000" };
      o.plan = flapping(0.33, 2_500);
      let runs = 0;
      for (; runs < 10; runs++) {
        const r = await ms(["index"], { cwd: p.root, env });
        kit.count("index-runs");
        const line = oneClearLine(r);
        if (r.code !== 0) expect(line).toMatch(/^Error: /);
        if (!existsSync(join(p.indexDir, INDEX_FILE))) continue;
        const v = vectorsOf(p);
        if (v.vectors === v.chunks && v.chunks > 0) break;
      }
      kit.set("flapping-runs-to-complete", runs + 1);
      o.plan = ok;
      expect((await ms(["index"], { cwd: p.root, env })).code).toBe(0);
      const v = vectorsOf(p);
      expect(v).toMatchObject({ dim: 768, vectors: v.chunks });
    }),
    120_000,
  );
});
