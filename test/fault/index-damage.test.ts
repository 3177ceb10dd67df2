/**
 * Fault injection 4: every kind of damage to index.bin, with seeded random parameters —
 * truncated at a random length, bytes flipped at a random offset past the header, replaced by
 * random garbage (with or without the magic), a directory in its place, an older format version,
 * bytes flipped inside the header, figures changed in the header — met by `search`, `stats` and
 * `expand` in turn.
 * Each rebuilds from the markdown, says so in exactly one line, answers correctly, and leaves a
 * healthy index that the next command uses without a word. (test/e2e/index-heal.test.ts holds
 * the fixed, named cases; this is their randomized sweep.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { INDEX_FILE, MAGIC, openIndexFile, tailOf } from "../../src/index/format.ts";
import { checkIndex } from "../../src/index/disk.ts";
import { startOllamaDouble, type OllamaDouble } from "../helpers/ollama-double.ts";
import { FACT, FACT_QUERY, faultKit, ms, stderrLines, tracked, writeMemory, type Project, type Rng } from "./helpers.ts";

const kit = faultKit("index-damage");

const FILES = 4;
const NOTES = 12;
const VARIANTS = 12;

// Stateless (the tests never read its request log), so one serves every test.
let double: OllamaDouble;
/** The generated memory every project copies: written once, only read. */
const memory = join(kit.base, "memory-src");
writeMemory(memory, kit.rng, FILES, NOTES);

/** A project of one test's own, indexed with vectors; what its healthy index looks like. */
interface Indexed {
  p: Project;
  env: Record<string, string | undefined>;
  indexFile: string;
  pristine: Buffer;
  layoutAt: number;
  chunks: number;
  factHash: string;
}

async function indexed(): Promise<Indexed> {
  const p = kit.project({ memory });
  const env = { ...p.env, OLLAMA_HOST: double.host, MEMSEARCH_NO_WATCH: "1" };
  const r = await ms(["index"], { cwd: p.root, env });
  expect(r.code).toBe(0);
  const stats = JSON.parse((await ms(["stats", "-j"], { cwd: p.root, env })).stdout);
  expect(stats.vectors).toBe(stats.total_chunks);
  const factHash = JSON.parse((await ms(["search", FACT_QUERY, "-j", "-k", "1"], { cwd: p.root, env })).stdout)[0].chunk_hash;
  const indexFile = join(p.indexDir, INDEX_FILE);
  const pristine = readFileSync(indexFile);
  kit.set("chunks", stats.total_chunks);
  return { p, env, indexFile, pristine, layoutAt: MAGIC.length + 4 + pristine.readUInt32LE(MAGIC.length), chunks: stats.total_chunks, factHash };
}
const rebuiltLine = /^memsearch: .*; rebuilt it from the markdown \((\d+) chunks?[;)]/;

/** The head JSON edited in place and not sealed again (its `headCrc` stays): damage, for a current-version head. */
function patchHead(bytes: Buffer, edit: (head: Record<string, any>) => void): Buffer {
  const out = Buffer.from(bytes);
  const len = out.readUInt32LE(MAGIC.length);
  const head = JSON.parse(out.subarray(MAGIC.length + 4, MAGIC.length + 4 + len).toString());
  edit(head);
  const text = Buffer.from(JSON.stringify(head).padEnd(len, " "));
  text.copy(out, MAGIC.length + 4);
  return out;
}

interface Damage {
  kind: string;
  /** Damages the index file of `s` (starting from its pristine bytes); says how. */
  apply: (s: Indexed, rng: Rng) => string;
}

const DAMAGES: Damage[] = [
  {
    kind: "truncated",
    apply: ({ indexFile, pristine }, rng) => {
      const size = rng.int(0, pristine.length);
      writeFileSync(indexFile, pristine.subarray(0, size));
      return `to ${size} of ${pristine.length} bytes`;
    },
  },
  {
    kind: "bytes flipped",
    apply: ({ indexFile, pristine, layoutAt }, rng) => {
      const b = Buffer.from(pristine);
      const at = rng.int(layoutAt, b.length);
      const n = Math.min(rng.int(1, 17), b.length - at);
      for (let i = at; i < at + n; i++) b[i] = b[i]! ^ rng.int(1, 256);
      writeFileSync(indexFile, b);
      return `${n} at offset ${at}`;
    },
  },
  {
    kind: "garbage",
    apply: ({ indexFile }, rng) => {
      const n = rng.int(0, 8192);
      const withMagic = rng.chance(0.5);
      const body = Buffer.from(rng.bytes(n));
      writeFileSync(indexFile, withMagic ? Buffer.concat([Buffer.from(MAGIC, "latin1"), body]) : body);
      return `${n} random bytes${withMagic ? " after the magic" : ""}`;
    },
  },
  {
    kind: "a directory",
    apply: ({ indexFile }, rng) => {
      rmSync(indexFile, { recursive: true, force: true });
      const depth = rng.int(1, 4);
      let d = indexFile;
      for (let i = 0; i < depth; i++) d = join(d, rng.string(6));
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, "x.md"), "# not memory\n");
      return `depth ${depth}`;
    },
  },
  {
    kind: "an older version",
    apply: ({ indexFile, pristine }, rng) => {
      const v = rng.int(1, 6);
      writeFileSync(indexFile, patchHead(pristine, (h) => (h.meta.schemaVersion = v)));
      return `v${v}`;
    },
  },
  {
    kind: "header bytes flipped",
    apply: ({ indexFile, pristine, layoutAt }, rng) => {
      const b = Buffer.from(pristine);
      const at = rng.int(0, layoutAt);
      // A byte with its high bit set: it breaks the magic, the length, the JSON or its padding, or
      // fails the header's own checksum. (An ASCII change may turn padding into other white space,
      // which changes nothing: the changed figures below are the ASCII case that matters.)
      b[at] = b[at]! ^ rng.int(0x80, 0x100);
      writeFileSync(indexFile, b);
      return `offset ${at}`;
    },
  },
  {
    kind: "a header figure changed",
    apply: ({ indexFile, pristine, layoutAt }, rng) => {
      // One digit of the head JSON changed into another: the JSON still reads, only the header's
      // own checksum (or its version, when that is the digit) tells.
      const b = Buffer.from(pristine);
      const digits: number[] = [];
      for (let i = MAGIC.length + 4; i < layoutAt; i++) if (b[i]! >= 0x30 && b[i]! <= 0x39) digits.push(i);
      const at = digits[rng.int(0, digits.length)]!;
      const was = String.fromCharCode(b[at]!);
      b[at] = 0x30 + ((b[at]! - 0x30 + rng.int(1, 10)) % 10);
      writeFileSync(indexFile, b);
      return `offset ${at}: ${was} → ${String.fromCharCode(b[at]!)}`;
    },
  },
];

const COMMANDS: { name: string; args: (s: Indexed) => string[]; check: (stdout: string, s: Indexed) => void }[] = [
  {
    name: "search",
    args: () => ["search", FACT_QUERY, "-j", "-k", "3"],
    check: (out) => expect(JSON.parse(out)[0].content).toContain(FACT),
  },
  {
    name: "stats",
    args: () => ["stats", "-j"],
    check: (out, { chunks }) => expect(JSON.parse(out)).toMatchObject({ total_chunks: chunks, files: FILES }),
  },
  {
    name: "expand",
    args: ({ factHash }) => ["expand", factHash, "-j"],
    check: (out) => expect(JSON.parse(out).content).toContain(FACT),
  },
];

beforeAll(async () => {
  double = await startOllamaDouble({ dim: 64 });
});

afterAll(async () => {
  await double?.stop();
});

describe("randomized index damage", () => {
  for (const d of DAMAGES) {
    test(
      `${d.kind}: search, stats and expand each rebuild with one notice and answer correctly`,
      tracked(kit, async () => {
        const s = await indexed();
        const { p, env, indexFile, pristine, chunks } = s;
        const rng = kit.rngFor(d.kind);
        for (let v = 0; v < VARIANTS; v++) {
          const c = COMMANDS[v % COMMANDS.length]!;
          rmSync(indexFile, { recursive: true, force: true });
          writeFileSync(indexFile, pristine);
          const what = d.apply(s, rng);
          const label = `${d.kind} (${what}) → ${c.name}`;
          const r = await ms(c.args(s), { cwd: p.root, env });
          kit.count("damaged-indexes");
          try {
            expect(r.code).toBe(0);
            c.check(r.stdout, s);
            const lines = stderrLines(r.stderr);
            expect(lines.length).toBe(1);
            expect(lines[0]).toMatch(rebuiltLine);
            expect(Number(rebuiltLine.exec(lines[0]!)![1])).toBe(chunks);
            // Healed: a whole current index, and the next command says nothing about it.
            const check = checkIndex(p.indexDir);
            expect(check.state).toBe("ok");
            if (check.state === "ok") expect(check.file.chunks).toBe(chunks);
            expect(statSync(indexFile).isFile()).toBe(true);
            const again = await ms(["search", FACT_QUERY, "-j", "-k", "1"], { cwd: p.root, env });
            expect(stderrLines(again.stderr)).toEqual([]);
            expect(JSON.parse(again.stdout)[0].content).toContain(FACT);
          } catch (e) {
            throw new Error(`${label}: ${(e as Error).message}\nstderr: ${r.stderr}`);
          }
          kit.count(`cmd-${c.name}`);
        }
      }),
      120_000,
    );
  }
});

/**
 * The header checks itself (format v7: its own CRC-32, `headCrc`). It once did not: the CRCs
 * covered only the parts after it, so a changed digit in its chunk or file count was read as the
 * truth: `stats` and the SessionStart status line reported it with no notice, and a wrong file
 * count even survived `memsearch index` (the no-op check trusts the header).
 */
describe("the header's own checksum", () => {
  const withCounts = ({ pristine, chunks }: Indexed) =>
    patchHead(pristine, (h) => {
      h.count = chunks + 7;
      h.fileCount = FILES + 5;
    });

  test(
    "a changed digit in the header's file and chunk counts is caught: stats rebuilds and reports the real figures",
    tracked(kit, async () => {
      const s = await indexed();
      const { p, env, indexFile, chunks } = s;
      rmSync(indexFile, { recursive: true, force: true });
      writeFileSync(indexFile, withCounts(s));
      const r = await ms(["stats", "-j"], { cwd: p.root, env });
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ total_chunks: chunks, files: FILES });
      expect(stderrLines(r.stderr)).toEqual([expect.stringMatching(rebuiltLine)]);
    }),
  );

  test(
    "the SessionStart status line does not report a changed count, and `memsearch index` rebuilds instead of keeping it",
    tracked(kit, async () => {
      const s = await indexed();
      const { p, env, indexFile, chunks } = s;
      rmSync(indexFile, { recursive: true, force: true });
      writeFileSync(indexFile, withCounts(s));
      const start = await ms(["hook", "session-start"], { cwd: p.root, env, stdin: JSON.stringify({ session_id: "hdr", cwd: p.root, source: "startup" }) });
      expect(start.code).toBe(0);
      const status = JSON.parse(start.stdout).systemMessage as string;
      expect(status).not.toContain(`${chunks + 7} chunks`);
      const idx = await ms(["index"], { cwd: p.root, env });
      expect(idx.code).toBe(0);
      expect(stderrLines(idx.stderr)).toEqual([expect.stringMatching(rebuiltLine)]);
      const check = checkIndex(p.indexDir);
      expect(check.state === "ok" && [check.file.chunks, check.file.files]).toEqual([chunks, FILES]);
      const again = await ms(["hook", "session-start"], { cwd: p.root, env, stdin: JSON.stringify({ session_id: "hdr2", cwd: p.root, source: "startup" }) });
      expect(JSON.parse(again.stdout).systemMessage).toContain(`memory: ${chunks} chunks`);
    }),
  );
});

/**
 * A command's search over an index past the float kernel's size scans the file's int8 codes (their
 * CRC-32 checked in that scan) and reads the floats of the rows the codes cannot rule out, each
 * checked against its own CRC-32 (Store.open's deferVectorCheck). Damage found there must rank
 * nothing: the search heals the index as damage found at load, with the same one notice and a
 * correct answer.
 */
describe("a large index's vectors damaged, found by the search's own scan", () => {
  for (const part of ["codes", "floats"] as const) {
    test(
      `search rebuilds with one notice and answers correctly (damaged ${part === "codes" ? "codes" : "floats in every row"})`,
      tracked(kit, async () => {
        const big = join(kit.base, `memory-big-${part}`);
        writeMemory(big, kit.rngFor("big"), 30, 100);
        const p = kit.project({ memory: big });
        // 768-d vectors, as a real model's: the suite's double serves 64-d ones, below the kernel's size.
        const wide = await startOllamaDouble({ dim: 768 });
        const env = { ...p.env, OLLAMA_HOST: wide.host, MEMSEARCH_NO_WATCH: "1" };
        try {
          expect((await ms(["index"], { cwd: p.root, env })).code).toBe(0);
          const chunks = JSON.parse((await ms(["stats", "-j"], { cwd: p.root, env })).stdout).total_chunks as number;
          // Past KERNEL_MIN_FLOATS (2^21 floats at 768-d): the lazy, scanning search.
          expect(chunks * 768).toBeGreaterThan(1 << 21);
          const indexFile = join(p.indexDir, INDEX_FILE);
          const bytes = readFileSync(indexFile);
          const f = openIndexFile(indexFile);
          closeSync(f.fd);
          const t = tailOf(f);
          const rng = kit.rngFor(`big-damage-${part}`);
          if (part === "codes") {
            const at = t.codesAt + rng.int(0, t.end - t.codesAt - 1);
            bytes[at] = bytes[at]! ^ 0x08;
          } else for (let r = 0; r < f.head.vectorCount; r++) bytes[t.vectorsAt + r * 768 * 4 + rng.int(0, 768 * 4 - 1)] ^= 0x08;
          writeFileSync(indexFile, bytes);
          const r = await ms(["search", FACT_QUERY, "-j", "-k", "1"], { cwd: p.root, env });
          expect(r.code).toBe(0);
          const lines = stderrLines(r.stderr);
          expect(lines.length).toBe(1);
          expect(lines[0]).toMatch(rebuiltLine);
          expect(lines[0]).toContain("checksum mismatch in the vectors");
          expect(JSON.parse(r.stdout)[0].content).toContain(FACT);
          expect(checkIndex(p.indexDir).state).toBe("ok");
          const again = await ms(["search", FACT_QUERY, "-j", "-k", "1"], { cwd: p.root, env });
          expect(stderrLines(again.stderr)).toEqual([]);
          expect(JSON.parse(again.stdout)[0].content).toContain(FACT);
        } finally {
          await wide.stop();
        }
      }),
      120_000,
    );
  }
});
