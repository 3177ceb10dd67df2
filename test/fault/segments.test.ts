/**
 * Fault injection: the index as a base plus segments (src/index/segments.ts), and every way an
 * append or a merge can be cut short or damaged. A base is built by `memsearch index`, then two
 * notes are added by `memsearch remember` with no watch process, each a segment. Then:
 *   - a torn append (the last segment cut short),
 *   - a segment that fails its CRC,
 *   - a manifest naming a segment that is not there,
 *   - a merge killed half way (while writing the base; between the base and the manifest),
 *   - a full disk during an append (the compiled binary under `ulimit -f`: a real EFBIG),
 * each met by a cold `memsearch search`: it answers with every note (the base and every whole
 * segment as they are, what was lost read again from the markdown), says so in exactly one line when
 * something was lost and nothing when nothing was, and leaves an index the next command uses
 * without a word.
 */
import { beforeAll, afterAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { INDEX_FILE, MANIFEST_FILE, readManifest } from "../../src/index/format.ts";
import { checkIndex } from "../../src/index/disk.ts";
import { Store } from "../../src/index/store.ts";
import { startOllamaDouble, type OllamaDouble } from "../helpers/ollama-double.ts";
import { BIN, FACT, FACT_QUERY, faultKit, ms, runCmd, stderrLines, tracked, writeMemory, type Project } from "./helpers.ts";

const kit = faultKit("segments");
let double: OllamaDouble;
const memory = join(kit.base, "memory-src");
writeMemory(memory, kit.rng, 3, 8);

const NOTE_1 = "The quokka billing service retries webhooks eleven times before paging, per runbook QK-7.";
const QUERY_1 = "quokka billing webhooks retries";
const NOTE_2 = "Narwhal ingest nodes pin glibc 2.36 because the vector extension segfaults on 2.37.";
const QUERY_2 = "narwhal ingest glibc segfaults";

interface Indexed {
  p: Project;
  env: Record<string, string | undefined>;
  segments: string[];
}

const segFiles = (dir: string) => readdirSync(dir).filter((n) => /^seg-.*\.bin$/.test(n)).sort();

/** A base and two segments (one note each), with no watch process. */
async function indexed(): Promise<Indexed> {
  const p = kit.project({ memory });
  const env = { ...p.env, OLLAMA_HOST: double.host, MEMSEARCH_NO_WATCH: "1" };
  expect((await ms(["index"], { cwd: p.root, env })).code).toBe(0);
  const base = readFileSync(join(p.indexDir, INDEX_FILE));
  for (const note of [NOTE_1, NOTE_2]) {
    const r = await ms(["remember", note], { cwd: p.root, env });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
  }
  // Each note is a segment after the base; the base itself was not written again.
  expect(readFileSync(join(p.indexDir, INDEX_FILE)).equals(base)).toBe(true);
  const segments = segFiles(p.indexDir);
  expect(segments.length).toBe(2);
  expect(checkIndex(p.indexDir).state).toBe("ok");
  return { p, env, segments };
}

async function search(s: Indexed, query: string) {
  const r = await ms(["search", query, "-j", "-k", "3"], { cwd: s.p.root, env: s.env });
  expect(r.code).toBe(0);
  return { hits: JSON.parse(r.stdout) as { content: string }[], lines: stderrLines(r.stderr) };
}

/** Every note is found, by a search that says nothing. */
async function allAnswered(s: Indexed) {
  for (const [q, fact] of [[FACT_QUERY, FACT], [QUERY_1, NOTE_1], [QUERY_2, NOTE_2]] as const) {
    const { hits, lines } = await search(s, q);
    expect(hits[0]?.content).toContain(fact);
    expect(lines).toEqual([]);
  }
}

/** The first search after the damage: every note found, and one notice naming what was lost. */
async function healsWithOneNotice(s: Indexed, query: string, fact: string, lost: RegExp) {
  const { hits, lines } = await search(s, query);
  expect(hits[0]?.content).toContain(fact);
  expect(lines.length).toBe(1);
  expect(lines[0]).toMatch(/^memsearch: the index was partly unreadable \(/);
  expect(lines[0]).toMatch(lost);
  expect(lines[0]).toMatch(/rebuilt it from the markdown/);
  // Healed: a new base, no segment left, and the next commands say nothing.
  expect(checkIndex(s.p.indexDir).state).toBe("ok");
  expect(segFiles(s.p.indexDir)).toEqual([]);
  await allAnswered(s);
}

beforeAll(async () => {
  double = await startOllamaDouble({ dim: 64 });
});

afterAll(async () => {
  await double?.stop();
});

describe("segments: crash and damage", () => {
  test(
    "a torn append (the last segment cut short): found, read again from the markdown, one notice",
    tracked(kit, async () => {
      const s = await indexed();
      const last = join(s.p.indexDir, s.segments[1]!);
      truncateSync(last, Math.floor(statSync(last).size / 2));
      await healsWithOneNotice(s, QUERY_2, NOTE_2, /segment 2 is \d+ bytes, the manifest says \d+/);
    }),
  );

  test(
    "a segment that fails its CRC: the whole ones still answer, the damaged one is read again, one notice",
    tracked(kit, async () => {
      const s = await indexed();
      const first = join(s.p.indexDir, s.segments[0]!);
      const b = readFileSync(first);
      const at = Math.floor(b.length * 0.6);
      b[at] = b[at]! ^ 0x5a;
      writeFileSync(first, b);
      // What the base and the whole segment hold answers as it is, before any heal.
      const { store, segmentsLost } = Store.open(s.p.indexDir, "nomic-embed-text", { keywordsOnly: true });
      expect(segmentsLost).toMatch(/checksum mismatch in segment 1/);
      expect(store.searchText(["narwhal"], 5).map((h) => h.chunk.content).join(" ")).toContain("Narwhal ingest");
      expect(store.searchText(["zebrafish"], 5).length).toBeGreaterThan(0);
      await healsWithOneNotice(s, QUERY_1, NOTE_1, /checksum mismatch in segment 1/);
    }),
  );

  test(
    "a manifest naming a segment that is missing: one notice, the note read again",
    tracked(kit, async () => {
      const s = await indexed();
      rmSync(join(s.p.indexDir, s.segments[0]!));
      await healsWithOneNotice(s, QUERY_1, NOTE_1, /segment 1 named by the manifest is missing/);
    }),
  );

  test(
    "a merge killed while writing the new base: its temp file is a leftover, nothing is lost, no notice",
    tracked(kit, async () => {
      const s = await indexed();
      // A writer whose PID is dead (1 is alive, so: a number past any PID).
      writeFileSync(join(s.p.indexDir, `${INDEX_FILE}.tmp-4194000-abcdef`), Buffer.alloc(4096, 7));
      await allAnswered(s);
      expect((await ms(["index"], { cwd: s.p.root, env: s.env })).code).toBe(0);
      expect(readdirSync(s.p.indexDir).filter((n) => n.includes(".tmp-"))).toEqual([]);
    }),
  );

  test(
    "a merge killed between the new base and the manifest: the base alone is the index, no notice, the old segments swept",
    tracked(kit, async () => {
      const s = await indexed();
      // The merge, done in a copy: its base holds base and segments; the old manifest stays here.
      const copy = join(kit.base, `merge-${Math.random().toString(36).slice(2)}`);
      cpSync(s.p.indexDir, copy, { recursive: true });
      Store.open(copy, "nomic-embed-text").store.save({ merge: true });
      cpSync(join(copy, INDEX_FILE), join(s.p.indexDir, INDEX_FILE));
      const m = readManifest(s.p.indexDir);
      expect(m && !("damaged" in m) && m.segments.length).toBe(2);
      await allAnswered(s);
      expect(checkIndex(s.p.indexDir).state).toBe("ok");
      // The next writer takes away what nobody reads any more.
      expect((await ms(["index"], { cwd: s.p.root, env: s.env })).code).toBe(0);
      expect(segFiles(s.p.indexDir)).toEqual([]);
      await allAnswered(s);
    }),
  );

  test(
    "a full disk during an append: the note is saved, the append fails, the next search reads it again with one notice",
    tracked(kit, async () => {
      const s = await indexed();
      const note = `Wombat cache shards rebalance nightly at 03:10 UTC; ${"the shard map lists every wombat node and its replica set, ".repeat(6)}ticket WB-88.`;
      // Files may grow to 1 KiB: the day's markdown and the manifest fit, the segment (the note's text, vector and head) does not.
      const limited = await runCmd(["sh", "-c", `trap '' XFSZ; ulimit -f 2; exec "$0" "$@"`, BIN, "remember", note], { cwd: s.p.root, env: s.env });
      expect(limited.code).toBe(0);
      expect(stderrLines(limited.stderr).join("\n")).toMatch(/the note is saved, but the index was not updated/);
      expect(readdirSync(s.p.memory).some((f) => readFileSync(join(s.p.memory, f), "utf8").includes("Wombat cache shards"))).toBe(true);
      expect(existsSync(join(s.p.indexDir, MANIFEST_FILE))).toBe(true);
      await healsWithOneNotice(s, "wombat cache shards rebalance", "Wombat cache shards", /segment 3 named by the manifest is missing/);
    }),
  );
});
