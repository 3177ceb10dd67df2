import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { NotFoundError, UsageError } from "../../src/core/errors.ts";
import { markdownText, matchIgnore, parseIgnore, scanPaths, shouldIndexPath, type ScanOptions } from "../../src/index/scanner.ts";
import { randomBytes } from "node:crypto";

const made: string[] = [];
afterAll(() => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A fresh temp tree; `files` maps relative paths to contents. Returns its real path. */
function tree(files: Record<string, string>): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "memsearch-scan-")));
  made.push(root);
  for (const [rel, body] of Object.entries(files)) {
    const p = join(root, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, body);
  }
  return root;
}

/** Scanned files of one directory root, relative to it. */
function rels(root: string, opts?: ScanOptions): string[] {
  return scanPaths([root], opts).files.map((f) => relative(root, f.path));
}

describe("scanPaths", () => {
  test("markdown extensions in any case, sorted, with stats", () => {
    const root = tree({
      "b.md": "# b",
      "a.MARKDOWN": "# a",
      "sub/c.Md": "# c",
      "d.txt": "no",
      "e.mdx": "no",
      "README": "no",
      "f.md.bak": "no",
    });
    expect(rels(root)).toEqual(["a.MARKDOWN", "b.md", "sub/c.Md"]);
    const res = scanPaths([root]);
    expect(res.roots).toEqual([root]);
    const b = res.files.find((f) => f.path.endsWith("b.md"))!;
    expect(b.size).toBe(3);
    expect(b.mtimeMs).toBeGreaterThan(0);
    expect(b.root).toBe(root);
  });

  test("hidden names below a root are skipped, a hidden root is fine", () => {
    const root = tree({
      "visible.md": "x",
      ".hidden.md": "x",
      ".git/notes.md": "x",
      "sub/.secret/deep.md": "x",
      ".memsearch/memory/2026-01-01.md": "x",
    });
    expect(rels(root)).toEqual(["visible.md"]);
    const mem = join(root, ".memsearch", "memory");
    expect(scanPaths([mem]).files.map((f) => f.path)).toEqual([join(mem, "2026-01-01.md")]);
  });

  test("directory symlinks are not followed (no loop); file symlinks count once by real path", () => {
    const root = tree({ "real.md": "x", "sub/inner.md": "y" });
    const outside = tree({ "far.md": "z" });
    symlinkSync(root, join(root, "sub", "loop"));
    symlinkSync(join(root, "real.md"), join(root, "alias.md"));
    symlinkSync(join(outside, "far.md"), join(root, "far-link.md"));
    symlinkSync(join(root, "missing.md"), join(root, "dangling.md"));
    const files = scanPaths([root]).files;
    const expected = [join(outside, "far.md"), join(root, "real.md"), join(root, "sub", "inner.md")].sort();
    expect(files.map((f) => f.path)).toEqual(expected);
    expect(files.every((f) => f.root === root)).toBe(true);
  });

  test("a symlinked root is resolved to its real path", () => {
    const root = tree({ "a.md": "x" });
    const link = join(tree({}), "link");
    symlinkSync(root, link);
    const res = scanPaths([link]);
    expect(res.roots).toEqual([root]);
    expect(res.files.map((f) => f.path)).toEqual([join(root, "a.md")]);
  });

  test("files named directly bypass ignore and hidden rules but not the extension", () => {
    const root = tree({
      ".gitignore": "*.md\n",
      "ignored.md": "x",
      ".hidden.md": "x",
      "notes.txt": "x",
    });
    const res = scanPaths([join(root, "ignored.md"), join(root, ".hidden.md"), join(root, "notes.txt")], {
      ignoreFiles: [".gitignore"],
    });
    expect(res.files.map((f) => relative(root, f.path))).toEqual([".hidden.md", "ignored.md"]);
    expect(res.files[1]!.root).toBe(join(root, "ignored.md"));
    expect(res.roots.length).toBe(3);
    expect(res.notMarkdown).toEqual([join(root, "notes.txt")]); // said by the caller, never indexed
  });

  test("a file reached from two roots is listed once, under the first", () => {
    const root = tree({ "a.md": "x", "b.md": "y" });
    const res = scanPaths([join(root, "a.md"), root, root]);
    expect(res.files.map((f) => [relative(root, f.path), f.root])).toEqual([
      ["a.md", join(root, "a.md")],
      ["b.md", root],
    ]);
    expect(res.roots).toEqual([join(root, "a.md"), root]);
  });

  test("a missing path throws NotFoundError", () => {
    const root = tree({});
    const missing = join(root, "nope");
    expect(() => scanPaths([missing])).toThrow(NotFoundError);
    expect(() => scanPaths([missing])).toThrow(`path not found: ${missing}`);
  });

  test("ignore files are opt-in", () => {
    const root = tree({ ".gitignore": "*.md\n", "a.md": "x" });
    expect(rels(root)).toEqual(["a.md"]);
    expect(rels(root, { ignoreFiles: [".gitignore"] })).toEqual([]);
  });

  test("ignore file with negation and directory patterns", () => {
    const root = tree({
      ".gitignore": "# comment\n*.md\n!keep.md\nbuild/\nlogs\n",
      "drop.md": "x",
      "keep.md": "x",
      "sub/keep.md": "x",
      "sub/drop.md": "x",
      "build/keep.md": "x",
      "logs/keep.md": "x",
      "docs/build": "a file, not a directory",
      "docs/keep.md": "x",
    });
    // build/ and logs are pruned, so keep.md inside them stays out, as in git.
    expect(rels(root, { ignoreFiles: [".gitignore"] })).toEqual(["docs/keep.md", "keep.md", "sub/keep.md"]);
  });

  test("dir-only pattern does not match a file of that name", () => {
    const root = tree({ ".gitignore": "notes.md/\n", "notes.md": "x" });
    expect(rels(root, { ignoreFiles: [".gitignore"] })).toEqual(["notes.md"]);
  });

  test("a nested ignore file applies to its own directory only and can override its parent", () => {
    const root = tree({
      ".gitignore": "private.md\n",
      "secret.md": "x",
      "private.md": "x",
      "sub/.gitignore": "secret.md\n/only-here.md\n!private.md\n",
      "sub/secret.md": "x",
      "sub/private.md": "x",
      "sub/only-here.md": "x",
      "sub/deeper/secret.md": "x",
      "sub/deeper/only-here.md": "x",
      "other/secret.md": "x",
    });
    expect(rels(root, { ignoreFiles: [".gitignore"] })).toEqual([
      "other/secret.md",
      "secret.md",
      "sub/deeper/only-here.md",
      "sub/private.md",
    ]);
  });

  test("ignore files above the root are never read", () => {
    const parent = tree({ ".gitignore": "*.md\n", "inner/a.md": "x" });
    expect(rels(join(parent, "inner"), { ignoreFiles: [".gitignore"] })).toEqual(["a.md"]);
  });

  test("several ignore file names, each read per directory", () => {
    const root = tree({ ".gitignore": "a.md\n", ".memsearchignore": "b.md\n", "a.md": "", "b.md": "", "c.md": "" });
    expect(rels(root, { ignoreFiles: [".gitignore", ".memsearchignore"] })).toEqual(["c.md"]);
  });

  test("exclude patterns are root-relative and applied last", () => {
    const root = tree({
      ".gitignore": "notes.md\n",
      "notes.md": "x",
      "top.md": "x",
      "sub/top.md": "x",
      "drafts/a.md": "x",
      "sub/drafts/b.md": "x",
      "x.tmp.md": "x",
      "sub/y.tmp.md": "x",
      "keep.md": "x",
    });
    const opts = { ignoreFiles: [".gitignore"], exclude: ["/top.md", "drafts/", "*.tmp.md", "!notes.md"] };
    expect(rels(root, opts)).toEqual(["keep.md", "notes.md", "sub/top.md"]);
    // Two roots: exclude anchors to each root.
    const res = scanPaths([root, join(root, "sub")], { exclude: ["/top.md"] });
    expect(res.files.map((f) => relative(root, f.path))).toContain("sub/top.md");
  });

  test("bad ignore file names are a usage error", () => {
    const root = tree({ "a.md": "" });
    expect(() => scanPaths([root], { ignoreFiles: ["sub/.gitignore"] })).toThrow(UsageError);
    expect(() => scanPaths([root], { ignoreFiles: [".."] })).toThrow(UsageError);
  });

  test("unreadable directories are skipped", () => {
    const root = tree({ "a.md": "", "locked/b.md": "" });
    chmodSync(root, 0o755);
    chmodSync(join(root, "locked"), 0o000);
    try {
      // Root reads everything, so under root the scan runs in a child that keeps root's uid (it
      // must still reach this checkout, which may sit in a folder only root can enter) but loses
      // the capabilities that bypass file permissions.
      if (process.getuid?.() === 0) {
        const script = `const { scanPaths } = await import(${JSON.stringify(join(import.meta.dir, "../../src/index/scanner.ts"))}); console.log(JSON.stringify(scanPaths([${JSON.stringify(root)}]).files.map((f) => f.path)))`;
        const noBypass = ["setpriv", "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search", "--"];
        const r = spawnSync(noBypass[0]!, [...noBypass.slice(1), process.execPath, "-e", script], { encoding: "utf8", cwd: tmpdir() });
        expect(r.error).toBeUndefined();
        expect(r.stderr).toBe("");
        expect(JSON.parse(r.stdout)).toEqual([join(realpathSync(root), "a.md")]);
      } else {
        expect(rels(root)).toEqual(["a.md"]);
      }
    } finally {
      chmodSync(join(root, "locked"), 0o755);
    }
  });
});

describe("gitignore patterns", () => {
  const m = (patterns: string, rel: string, isDir = false) => matchIgnore(parseIgnore(patterns), rel, isDir);

  test("blank lines and comments are not rules; escapes keep # and !", () => {
    expect(parseIgnore("\n# c\n   \n").length).toBe(0);
    expect(m("\\#a.md", "#a.md")).toBe(true);
    expect(m("\\!b.md", "!b.md")).toBe(true);
    expect(m("!b.md", "b.md")).toBe(false);
  });

  test("trailing spaces are trimmed unless escaped", () => {
    expect(m("a.md   ", "a.md")).toBe(true);
    expect(m("a.md\\ ", "a.md ")).toBe(true);
    expect(m("a.md\\ ", "a.md")).toBeUndefined();
  });

  test("unanchored names match at any depth; a slash anchors", () => {
    expect(m("x.md", "a/b/x.md")).toBe(true);
    expect(m("/x.md", "x.md")).toBe(true);
    expect(m("/x.md", "a/x.md")).toBeUndefined();
    expect(m("a/x.md", "a/x.md")).toBe(true);
    expect(m("a/x.md", "z/a/x.md")).toBeUndefined();
  });

  test("* and ? stay within a segment", () => {
    expect(m("*.md", "deep/dir/file.md")).toBe(true);
    expect(m("a/*.md", "a/b/c.md")).toBeUndefined();
    expect(m("a/*.md", "a/c.md")).toBe(true);
    expect(m("?.md", "x.md")).toBe(true);
    expect(m("?.md", "xy.md")).toBeUndefined();
    expect(m("a?b", "a/b")).toBeUndefined();
  });

  test("** forms", () => {
    expect(m("**/x.md", "x.md")).toBe(true);
    expect(m("**/x.md", "a/b/x.md")).toBe(true);
    expect(m("a/**/x.md", "a/x.md")).toBe(true);
    expect(m("a/**/x.md", "a/b/c/x.md")).toBe(true);
    expect(m("a/**/x.md", "ab/x.md")).toBeUndefined();
    expect(m("a/**", "a/b/c.md")).toBe(true);
    expect(m("a/**", "a", true)).toBeUndefined();
    expect(m("**", "anything/at/all")).toBe(true);
  });

  test("character classes", () => {
    expect(m("[abc].md", "b.md")).toBe(true);
    expect(m("[abc].md", "d.md")).toBeUndefined();
    expect(m("[a-c].md", "c.md")).toBe(true);
    expect(m("[!a-c].md", "d.md")).toBe(true);
    expect(m("[^a-c].md", "a.md")).toBeUndefined();
    expect(m("[]x].md", "].md")).toBe(true);
    expect(m("[[:digit:]].md", "7.md")).toBe(true);
    expect(m("[[:digit:]].md", "x.md")).toBeUndefined();
    expect(m("[[:nope:]].md", "x.md")).toBeUndefined();
    expect(m("[unclosed.md", "[unclosed.md")).toBe(true);
    expect(m("a[/]b", "a/b")).toBeUndefined();
  });

  test("dir-only rules need a directory; the last matching rule wins", () => {
    expect(m("logs/", "logs")).toBeUndefined();
    expect(m("logs/", "logs", true)).toBe(true);
    expect(m("*.md\n!keep.md", "keep.md")).toBe(false);
    expect(m("!keep.md\n*.md", "keep.md")).toBe(true);
  });

  test("regex metacharacters are literal", () => {
    expect(m("a+b(1).md", "a+b(1).md")).toBe(true);
    expect(m("a.md", "aXmd")).toBeUndefined();
  });
});

describe("shouldIndexPath", () => {
  test("agrees with scanPaths on every file of a tree", () => {
    const root = tree({
      ".gitignore": "*.md\n!keep.md\nbuild/\n",
      "keep.md": "",
      "drop.md": "",
      "build/keep.md": "",
      "sub/.gitignore": "!drop.md\n",
      "sub/drop.md": "",
      "sub/keep.md": "",
      ".hidden/keep.md": "",
      "drafts/keep.md": "",
      "notes.txt": "",
    });
    const opts = { ignoreFiles: [".gitignore"], exclude: ["drafts/"] };
    const scanned = new Set(rels(root, opts));
    const all = [
      "keep.md",
      "drop.md",
      "build/keep.md",
      "sub/drop.md",
      "sub/keep.md",
      ".hidden/keep.md",
      "drafts/keep.md",
      "notes.txt",
    ];
    expect([...scanned].sort()).toEqual(["keep.md", "sub/drop.md", "sub/keep.md"]);
    for (const rel of all) expect(shouldIndexPath(join(root, rel), [root], opts)).toBe(scanned.has(rel));
  });

  test("works for a deleted file and for file roots", () => {
    const root = tree({ "a.md": "" });
    expect(shouldIndexPath(join(root, "gone.md"), [root])).toBe(true);
    expect(shouldIndexPath(join(root, "a.md"), [join(root, "a.md")])).toBe(true);
    expect(shouldIndexPath(join(root, "b.md"), [join(root, "a.md")])).toBe(false);
    expect(shouldIndexPath("/elsewhere/x.md", [root])).toBe(false);
  });
});

describe("markdownText: what the index reads of a file someone else wrote", () => {
  const bytes = (...parts: (string | number[] | Uint8Array)[]) => Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))));
  const day = (bad: string | number[] | Uint8Array) =>
    bytes("# 2026-11-20\n\n## Session 09:00\n\n### 09:00\n- chose redis for the cache\n\n### 09:10\n- ", bad, "\n\n### 09:20\n- kubernetes rollout fixed\n");

  test("clean text is returned as it is, a U+FFFD written as text included", () => {
    const text = "# Title\n\ncafé\ttabs\r\nand CRLF 😀, a pasted caf\ufffd\n";
    expect(markdownText(Buffer.from(text))).toEqual({ text, cleaned: 0, dropped: 0 });
  });

  test("a NUL, an escape sequence or a bad byte in one section: that section is cleaned and kept, the others are untouched", () => {
    for (const bad of ["nul\0here", "esc \x1b[31mred\x1b[0m here", "bell\x07 del\x7f c1\u0085 here", [0x6c, 0x61, 0x74, 0x69, 0x6e, 0x31, 0x20, 0xe9, 0x20, 0x68, 0x65, 0x72, 0x65]]) {
      const got = markdownText(day(bad))!;
      expect(got.cleaned).toBe(1);
      expect(got.dropped).toBe(0);
      expect(got.text).toContain("- chose redis for the cache\n");
      expect(got.text).toContain("- kubernetes rollout fixed\n");
      expect(got.text).toMatch(/### 09:10\n- [a-z0-9 \ufffd]+ here\n/);
      expect(got.text).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    }
  });

  test("a section that is mostly unreadable is left out, its lines kept blank so the others keep their line numbers", () => {
    const input = day(randomBytes(600));
    const got = markdownText(input)!;
    expect(got.dropped).toBe(1);
    expect(got.text).toContain("- chose redis for the cache\n");
    expect(got.text).not.toContain("### 09:10");
    const lineOf = (text: string, needle: string) => text.slice(0, text.indexOf(needle)).split(/\r\n|\r|\n/).length;
    const raw = input.toString("latin1");
    expect(lineOf(got.text, "- kubernetes rollout fixed")).toBe(lineOf(raw, "- kubernetes rollout fixed"));
  });

  test("a file with no section of text is not text: random bytes, UTF-16, a PNG header and binary", () => {
    for (let i = 0; i < 20; i++) expect(markdownText(randomBytes(64 * 1024))).toBeUndefined();
    expect(markdownText(Buffer.from("\ufeff# Notes\n\nsome text in UTF-16\n", "utf16le"))).toBeUndefined();
    expect(markdownText(bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52], randomBytes(4096)))).toBeUndefined();
    expect(markdownText(bytes([0x23, 0x20, 0x00, 0x01, 0x02, 0x0a]))).toBeUndefined();
  });
});
