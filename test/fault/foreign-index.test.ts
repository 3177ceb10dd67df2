/**
 * Fault injection: an index file that names another place's files (issue 31). An index names its
 * chunks' files by absolute path; copied with its project (`cp -r A B`) or committed and cloned,
 * it served the old place's notes, `expand` printed whatever markdown it named, and the prompt
 * hook injected another project's note. A chunk is served, and its file opened, only from this
 * project's places (core/places.ts): the project, its memory folder, Claude Code's memory folder
 * of the project, and paths the user named for it on this machine.
 */
import { describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chunkHash, chunkMarkdown } from "../../src/index/chunker.ts";
import { peekIndexFiles } from "../../src/index/disk.ts";
import { Store } from "../../src/index/store.ts";
import { faultKit, ms, tracked, type Project } from "./helpers.ts";

const kit = faultKit("foreign-index");
const OFF = { MEMSEARCH_EMBEDDING_PROVIDER: "none", MEMSEARCH_NO_WATCH: "1" };
const MODEL = "nomic-embed-text";

/** Every `Source:` line of a search's output. */
const sourcesOf = (out: string) => [...out.matchAll(/^(?:Source|Curated): (.+)$/gm)].map((m) => m[1]!.trim());
/** Every chunk hash a search printed. */
const hashesOf = (out: string) => [...out.matchAll(/^Chunk: ([0-9a-f]{16})$/gm)].map((m) => m[1]!);

/** A copy of the project at `to` (the whole tree, its .memsearch included), as `cp -r` makes it. */
function copyProject(p: Project, to: string): Project {
  cpSync(p.root, to, { recursive: true });
  const dataDir = join(to, ".memsearch");
  return { ...p, root: to, dataDir, memory: join(dataDir, "memory"), indexDir: join(dataDir, "index"), pending: join(dataDir, "pending") };
}

/** An index file naming `files` (path → markdown) as they would be indexed, written with the store itself. */
function plantIndex(indexDir: string, files: Record<string, string>): string[] {
  const store = Store.empty(indexDir, MODEL);
  const hashes: string[] = [];
  for (const [path, text] of Object.entries(files)) {
    const chunks = chunkMarkdown(text, path).map((c) => ({ ...c, chunkHash: chunkHash(c, MODEL) }));
    store.replaceFile(path, { mtimeMs: 1, size: text.length }, chunks, () => undefined);
    hashes.push(...chunks.map((c) => c.chunkHash));
  }
  mkdirSync(indexDir, { recursive: true });
  store.save();
  return hashes;
}

describe("cp -r A B: B serves only its own files", () => {
  test(
    "B's search has no hit in A, B's expand cannot print A's text, and B's incremental index drops A's files",
    tracked(kit, async () => {
      const a = kit.project();
      const env = { ...a.env, ...OFF };
      expect((await ms(["index"], { cwd: a.root, env })).code).toBe(0);
      const b = copyProject(a, join(kit.base, "copy-of-a"));
      // A moves on after the copy: what only A holds now must never show in B.
      writeFileSync(join(a.memory, "2026-11-21.md"), `${readFileSync(join(a.memory, "2026-11-21.md"), "utf8")}\n### 18:00\n- Fly.io deploy: ALPHA-ONLY secret rollout plan.\n`);

      const s = await ms(["search", "deploy", "--top-k", "10"], { cwd: b.root, env });
      expect(s.code).toBe(0);
      const sources = sourcesOf(s.stdout);
      expect(sources.length).toBeGreaterThan(0);
      for (const src of sources) expect(src.startsWith(b.root + "/")).toBe(true);
      expect(s.stderr).toContain("outside this project");
      kit.count("copied-searches");

      // A's chunk hashes (A's index names A's files): none opens A's file from B.
      const aHashes = hashesOf((await ms(["search", "deploy", "--top-k", "10"], { cwd: a.root, env })).stdout);
      expect(aHashes.length).toBeGreaterThan(0);
      for (const h of aHashes) {
        const x = await ms(["expand", h], { cwd: b.root, env });
        expect(x.stdout).not.toContain("ALPHA-ONLY");
        expect(x.stdout).not.toContain(a.root);
        if (x.code === 0) expect(x.stdout).toContain(`Source: ${b.root}/`);
      }
      const files = Object.keys(peekIndexFiles(b.indexDir)?.fileRecords ?? {});
      expect(files.length).toBeGreaterThan(0);
      for (const f of files) expect(f.startsWith(b.root + "/")).toBe(true);
      kit.count("copied-expands", aHashes.length);
    }),
    60_000,
  );

  test(
    "B's `memsearch index` (incremental) removes what the copied index named in A",
    tracked(kit, async () => {
      const a = kit.project();
      const env = { ...a.env, ...OFF };
      expect((await ms(["index"], { cwd: a.root, env })).code).toBe(0);
      const b = copyProject(a, join(kit.base, "copy-2-of-a"));
      const r = await ms(["index"], { cwd: b.root, env });
      expect(r.code).toBe(0);
      const files = Object.keys(peekIndexFiles(b.indexDir)?.fileRecords ?? {});
      expect(files.length).toBeGreaterThan(0);
      expect(files.filter((f) => f.startsWith(a.root + "/"))).toEqual([]);
    }),
    60_000,
  );
});

describe("a committed index in a clone", () => {
  test(
    "does not make the prompt hook inject another project's note",
    tracked(kit, async () => {
      const p = kit.project({ memory: "none" });
      const foreign = join(kit.base, "someone-elses-project", ".memsearch", "memory", "2026-10-01.md");
      plantIndex(p.indexDir, {
        [foreign]: "# 2026-10-01\n\n### 09:00\n<!-- session:s-foreign turn:t-foreign transcript:- -->\n- The zebra deploy times out because the nightly backup holds the quokka lock.\n",
      });
      const input = { hook_event_name: "UserPromptSubmit", session_id: "s-1", prompt_id: "p-1", cwd: p.root, prompt: "Why does the nightly zebra deploy time out on the quokka lock?" };
      const r = await ms(["hook", "user-prompt-submit"], { cwd: p.root, env: { ...p.env, ...OFF, MEMSEARCH_NO_TRANSCRIPT_INDEX: "1" }, stdin: JSON.stringify(input), hangMs: 20_000 });
      expect(r.code).toBe(0);
      expect(r.stdout).not.toContain("quokka lock");
      expect(r.stdout).not.toContain("zebra deploy times out");
      kit.count("hook-runs");
    }),
    30_000,
  );

  test(
    "expand refuses a chunk whose file is outside the project, named so or through a link",
    tracked(kit, async () => {
      const p = kit.project();
      const elsewhere = join(kit.base, "private-notes");
      mkdirSync(elsewhere, { recursive: true });
      const secret = "# Private\n\n## Bank\n- PRIVATE-MARKDOWN the account number is 12345.\n";
      writeFileSync(join(elsewhere, "secret.md"), secret);
      // A link inside the project to a folder outside it: its path is the project's, its file is not.
      symlinkSync(elsewhere, join(p.root, "docs"));
      const hashes = plantIndex(p.indexDir, { [join(elsewhere, "secret.md")]: secret, [join(p.root, "docs", "secret.md")]: secret });
      for (const h of new Set(hashes)) {
        const x = await ms(["expand", h], { cwd: p.root, env: { ...p.env, ...OFF } });
        expect(x.code).not.toBe(0);
        expect(x.stdout).not.toContain("PRIVATE-MARKDOWN");
        expect(x.stderr.trim().split("\n").filter((l) => !l.startsWith("memsearch:") && !l.startsWith("Notice:"))).toHaveLength(1);
        kit.count("expands-refused");
      }
    }),
    30_000,
  );
});

describe("paths the user names stay served", () => {
  test(
    "a folder outside the project indexed by hand is searched and expanded after the next load",
    tracked(kit, async () => {
      const p = kit.project();
      const env = { ...p.env, ...OFF };
      const notes = join(kit.base, "my-notes");
      mkdirSync(notes, { recursive: true });
      writeFileSync(join(notes, "ideas.md"), "# Ideas\n\n## Caching\n- Use a wombat cache in front of the pricing service.\n");
      expect((await ms(["index", notes], { cwd: p.root, env })).code).toBe(0);
      const s = await ms(["search", "wombat cache"], { cwd: p.root, env });
      expect(s.stderr).not.toContain("outside this project");
      expect(sourcesOf(s.stdout)).toContain(join(notes, "ideas.md"));
      const h = hashesOf(s.stdout)[0]!;
      const x = await ms(["expand", h], { cwd: p.root, env });
      expect(x.code).toBe(0);
      expect(x.stdout).toContain("wombat cache");
    }),
    60_000,
  );
});

describe("memsearch index refuses a folder that holds the project", () => {
  test(
    "a parent of the project is refused without --above-project, and nothing is indexed",
    tracked(kit, async () => {
      const p = kit.project();
      const env = { ...p.env, ...OFF };
      const r = await ms(["index", kit.base], { cwd: p.root, env, hangMs: 60_000 });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("holds the project");
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(peekIndexFiles(p.indexDir)).toBeUndefined();
      const ok = await ms(["index", kit.base, "--above-project"], { cwd: p.root, env, hangMs: 60_000 });
      expect(ok.code).toBe(0);
    }),
    120_000,
  );
});
