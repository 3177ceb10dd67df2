import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import {
  chunkHash,
  chunkMarkdown,
  contentHash,
  embeddingText,
  splitLongText,
} from "../../src/index/chunker.ts";
import { UsageError } from "../../src/core/errors.ts";
import type { Chunk } from "../../src/index/types.ts";

const GOLDEN = "# Title\n\nSome intro text.\n\n## Section A\n\nContent A here.\n\n## Section B\n\nContent B here.\n";
const MODEL = "text-embedding-3-small";

/** What a chunk that was not split must equal: its line range, joined and trimmed. */
function linesOf(text: string, c: Chunk): string {
  return text.replace(/\r\n?/g, "\n").split("\n").slice(c.startLine - 1, c.endLine).join("\n").trim();
}

function summary(chunks: Chunk[]) {
  return chunks.map((c) => [c.startLine, c.endLine, c.heading, c.headingLevel]);
}

describe("hashes", () => {
  test("golden chunk ids match the reference", () => {
    const chunks = chunkMarkdown(GOLDEN, "/tmp/test.md");
    expect(chunks.map((c) => [c.startLine, c.endLine, c.contentHash, chunkHash(c, MODEL)])).toEqual([
      [1, 4, "019aa10e0c753e0f", "e73f21351289003b"],
      [5, 8, "aaf797cbb8b30234", "ee433d08b2440547"],
      [9, 12, "ea529ff488d5c88f", "037fd31d1dd639b6"],
    ]);
    expect(summary(chunks)).toEqual([
      [1, 4, "Title", 1],
      [5, 8, "Section A", 2],
      [9, 12, "Section B", 2],
    ]);
    expect(chunks[0]!.content).toBe("# Title\n\nSome intro text.");
    expect(chunks.every((c) => c.source === "/tmp/test.md")).toBe(true);
  });

  test("chunkHash golden", () => {
    expect(chunkHash({ source: "test.md", startLine: 1, endLine: 5, contentHash: "hash" }, "model")).toBe("57f026237c0da79b");
  });

  test("contentHash is sha256 of UTF-8, 16 hex digits, independent of source", () => {
    expect(contentHash("hello")).toBe("2cf24dba5fb0a30e");
    const utf8 = createHash("sha256").update(Buffer.from("héllo 世界", "utf8")).digest("hex").slice(0, 16);
    expect(contentHash("héllo 世界")).toBe(utf8);
    const a = chunkMarkdown(GOLDEN, "/a.md").map((c) => c.contentHash);
    const b = chunkMarkdown(GOLDEN, "/b.md").map((c) => c.contentHash);
    expect(a).toEqual(b);
    const ids = chunkMarkdown(GOLDEN, "/a.md").map((c) => chunkHash(c, MODEL));
    expect(ids.every((id) => /^[0-9a-f]{16}$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(3);
    expect(chunkHash({ source: "a", startLine: 1, endLine: 2, contentHash: "h" }, "m1")).not.toBe(
      chunkHash({ source: "a", startLine: 1, endLine: 2, contentHash: "h" }, "m2"),
    );
  });

  test("embeddingText strips comments and collapses blank runs", () => {
    expect(embeddingText("Header\n<!-- session:a turn:b transcript:/c.jsonl -->\n\n\nBody text  ")).toBe("Header\n\nBody text");
    expect(embeddingText("<!-- multi\nline -->\n\n\n\nx")).toBe("x");
    expect(embeddingText("a\n\nb")).toBe("a\n\nb");
  });
});

describe("sections", () => {
  test("empty and blank text give no chunks", () => {
    expect(chunkMarkdown("", "/x.md")).toEqual([]);
    expect(chunkMarkdown("  \n\n\t\n", "/x.md")).toEqual([]);
  });

  test("text without headings is one preamble chunk", () => {
    const chunks = chunkMarkdown("just text\nmore text\n", "/x.md");
    expect(summary(chunks)).toEqual([[1, 3, "", 0]]);
    expect(chunks[0]!.content).toBe("just text\nmore text");
  });

  test("preamble before the first heading", () => {
    const text = "intro line\n\n# H\nbody\n";
    expect(summary(chunkMarkdown(text, "/x.md"))).toEqual([
      [1, 2, "", 0],
      [3, 5, "H", 1],
    ]);
  });

  test("\\r\\n input gives the same chunks as \\n", () => {
    const crlf = chunkMarkdown(GOLDEN.replace(/\n/g, "\r\n"), "/tmp/test.md");
    expect(crlf).toEqual(chunkMarkdown(GOLDEN, "/tmp/test.md"));
    expect(crlf[0]!.contentHash).toBe("019aa10e0c753e0f");
  });

  test("# lines inside code fences are not headings", () => {
    const text = [
      "# A", // 1
      "", // 2
      "```bash", // 3
      "# not a heading", // 4
      "```", // 5
      "", // 6
      "~~~", // 7
      "## nor this", // 8
      "~~~", // 9
      "", // 10
      "## B", // 11
      "body b", // 12
      "",
    ].join("\n");
    const chunks = chunkMarkdown(text, "/x.md");
    expect(summary(chunks)).toEqual([
      [1, 10, "A", 1],
      [11, 13, "B", 2],
    ]);
    expect(chunks[0]!.content).toContain("# not a heading");
  });

  test("headings nested in lists and blockquotes do not start sections", () => {
    const text = "# Top\n\n- item\n  # inside list\n\n> # quoted\n\nend\n";
    const chunks = chunkMarkdown(text, "/x.md");
    expect(summary(chunks)).toEqual([[1, 9, "Top", 1]]);
  });

  test("an unclosed fence swallows the rest", () => {
    const text = "# A\n\n```\ncode\n# still code\n";
    expect(summary(chunkMarkdown(text, "/x.md"))).toEqual([[1, 6, "A", 1]]);
  });

  test("setext headings count; closing #s are not part of the title", () => {
    const text = "Title\n=====\n\nbody one\n\n## Second ##\n\nbody two\n";
    expect(summary(chunkMarkdown(text, "/x.md"))).toEqual([
      [1, 5, "Title", 1],
      [6, 9, "Second", 2],
    ]);
  });

  test("front matter is skipped and line numbers stay right", () => {
    const text = "---\ntitle: Front\ntags: [a, b]\n---\n\nIntro para.\n\n# Real\n\nBody.\n";
    const chunks = chunkMarkdown(text, "/x.md");
    expect(summary(chunks)).toEqual([
      [5, 7, "", 0],
      [8, 11, "Real", 1],
    ]);
    expect(chunks[0]!.content).toBe("Intro para.");
    for (const c of chunks) expect(c.content).toBe(linesOf(text, c));
    expect(chunks.some((c) => c.content.includes("title:"))).toBe(false);
  });

  test("front matter only gives nothing; a lone --- is not front matter", () => {
    expect(chunkMarkdown("---\ntitle: x\n---\n", "/x.md")).toEqual([]);
    const chunks = chunkMarkdown("---\n\nsome text\n", "/x.md");
    expect(chunks.length).toBe(1);
    expect(chunks[0]!.content).toBe("---\n\nsome text");
  });

  test("heading-only and anchor-only sections are dropped", () => {
    const text = [
      "## Session 03:16", // 1
      "", // 2
      "### 10:00", // 3
      "<!-- session:abc turn:def transcript:/x.jsonl -->", // 4
      "", // 5
      "### 10:05", // 6
      "<!-- session:abc turn:ghi transcript:/x.jsonl -->", // 7
      "- did a thing", // 8
      "",
    ].join("\n");
    const chunks = chunkMarkdown(text, "/x.md");
    expect(summary(chunks)).toEqual([[6, 9, "10:05", 3]]);
    expect(chunks[0]!.content).toContain("<!-- session:abc turn:ghi");
  });

  test("a one-character body is dropped, two characters kept", () => {
    expect(chunkMarkdown("# H\nx\n", "/x.md")).toEqual([]);
    expect(chunkMarkdown("# H\nok\n", "/x.md").length).toBe(1);
    expect(chunkMarkdown("Setext\n---\n", "/x.md")).toEqual([]);
  });

  test("invalid UTF-8 decoded to U+FFFD does not crash", () => {
    const text = Buffer.from([0x23, 0x20, 0x41, 0x0a, 0xff, 0xfe, 0x62, 0x61, 0x64, 0x0a]).toString("utf8");
    const chunks = chunkMarkdown(text, "/x.md");
    expect(chunks.length).toBe(1);
    expect(chunks[0]!.content).toBe("# A\n\uFFFD\uFFFDbad");
    expect(chunks[0]!.contentHash).toMatch(/^[0-9a-f]{16}$/);
  });

  test("line numbers hold across every kind of block", () => {
    const blocks = [
      "| a | b |\n|---|---|\n| 1 | 2 |",
      "- one\n- two\n\n  continued",
      "> quote\n> more",
      "<div>\nhtml\n</div>",
      "```js\nconst x = 1; # no\n```",
      "    indented code\n    # not heading",
      "[ref]: https://example.com",
      "trailing spaces   \nline two\t",
      "1. first\n2. second",
      "***",
      "<!-- session:s turn:t transcript:/p -->",
      "Para with *em* and `code`.",
    ];
    // Deterministic pseudo-random documents built from the blocks above.
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    for (let doc = 0; doc < 40; doc++) {
      const parts: string[] = [];
      const expected: number[] = [];
      let line = 1;
      for (let k = 0; k < 12; k++) {
        const block = rand(4) === 0 ? `${"#".repeat(1 + rand(6))} Heading ${k}` : blocks[rand(blocks.length)]!;
        if (block.startsWith("#")) expected.push(line);
        parts.push(block);
        line += block.split("\n").length;
        // Joined with "\n", an entry of k newlines makes k + 1 blank lines.
        const blanks = 1 + rand(3);
        parts.push("\n".repeat(blanks - 1));
        line += blanks;
      }
      const text = parts.join("\n") + (rand(2) ? "\n" : "");
      const chunks = chunkMarkdown(text, "/x.md");
      for (const c of chunks) {
        expect(c.content).toBe(linesOf(text, c));
        if (c.headingLevel > 0) expect(expected).toContain(c.startLine);
      }
      // Every heading whose section has a body appears, in order.
      const starts = chunks.filter((c) => c.headingLevel > 0).map((c) => c.startLine);
      expect(starts).toEqual([...starts].sort((a, b) => a - b));
    }
  });
});

describe("splitting", () => {
  test("a large section splits on blank lines with overlap", () => {
    const paras = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} ${"lorem ipsum ".repeat(8)}`.trim());
    const text = `# Big\n\n${paras.join("\n\n")}\n`;
    const chunks = chunkMarkdown(text, "/x.md", { maxChunkSize: 500, overlapLines: 2 });
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks[0]!.content.startsWith("# Big")).toBe(true);
    for (const [i, c] of chunks.entries()) {
      expect(c.content.length).toBeLessThanOrEqual(500);
      expect(c.heading).toBe("Big");
      expect(c.headingLevel).toBe(1);
      if (i > 0) {
        expect(c.content.startsWith("# Big")).toBe(false);
        const prev = chunks[i - 1]!;
        // Two lines of overlap: the previous chunk's last paragraph and the blank after it.
        expect(c.startLine).toBe(prev.endLine - 1);
        const lastPara = prev.content.split("\n").at(-1)!;
        expect(c.content.startsWith(lastPara)).toBe(true);
      }
    }
    expect(chunks.at(-1)!.endLine).toBe(text.split("\n").length);
    // Nothing lost.
    const all = chunks.map((c) => c.content).join("\n");
    for (const p of paras) expect(all).toContain(p);
  });

  test("lines without blank lines split before the overflowing line", () => {
    const lines = Array.from({ length: 40 }, (_, i) => `line ${String(i).padStart(2, "0")} ${"x".repeat(90)}`);
    const text = `## Log\n${lines.join("\n")}`;
    const chunks = chunkMarkdown(text, "/x.md", { maxChunkSize: 500, overlapLines: 2 });
    for (const [i, c] of chunks.entries()) {
      expect(c.content.length).toBeLessThanOrEqual(500);
      expect(c.content).toBe(linesOf(text, c));
      if (i > 0) {
        const prevLines = chunks[i - 1]!.content.split("\n");
        expect(c.content.split("\n").slice(0, 2)).toEqual(prevLines.slice(-2));
      }
    }
  });

  test("overlap 0 carries nothing", () => {
    const lines = Array.from({ length: 40 }, (_, i) => `line ${String(i).padStart(2, "0")} ${"x".repeat(90)}`);
    const chunks = chunkMarkdown(`## Log\n${lines.join("\n")}`, "/x.md", { maxChunkSize: 500, overlapLines: 0 });
    const seen = chunks.flatMap((c) => c.content.split("\n")).filter((l) => l.startsWith("line"));
    expect(seen).toEqual(lines);
  });

  test("a long CJK line splits at 。", () => {
    const sentences = Array.from({ length: 300 }, (_, i) => `这是第${i}句话，内容比较长。`);
    const line = sentences.join("");
    const chunks = chunkMarkdown(`# 中文\n\n${line}\n`, "/x.md", { maxChunkSize: 500 });
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) {
      expect(c.content.length).toBeLessThanOrEqual(500);
      expect(c.content.endsWith("。")).toBe(true);
      expect(c.heading).toBe("中文");
    }
    // No bare-heading piece, and the long line is emitted once, not again as overlap.
    expect(chunks.map((c) => c.content).join("").replace("# 中文\n\n", "")).toBe(line);
  });

  test("a 5000-char line with no sentence end is hard cut, nothing lost", () => {
    let line = "";
    for (let i = 0; line.length < 5000; i++) line += String(i);
    line = line.slice(0, 5000);
    const chunks = chunkMarkdown(`${line}\n`, "/x.md");
    expect(chunks.map((c) => c.content.length)).toEqual([1500, 1500, 1500, 500]);
    expect(chunks.map((c) => c.content).join("")).toBe(line);
    expect(chunks.every((c) => c.startLine === 1 && c.endLine === 1)).toBe(true);
  });

  test("identical hard-cut pieces of one line are not emitted twice", () => {
    const chunks = chunkMarkdown("x".repeat(5000), "/x.md");
    expect(chunks.map((c) => c.content.length)).toEqual([1500, 500]);
  });

  test("versions, URLs and e-mail addresses are never split", () => {
    const sentence = (i: number) => `Release v1.2.${i} lives at https://example.com/docs/v1.2.${i}/index.html, write to ops.team@example.org for help. `;
    const line = Array.from({ length: 40 }, (_, i) => sentence(i)).join("");
    const tokens = new Set(line.trim().split(" "));
    const chunks = chunkMarkdown(`# Notes\n\n${line}`, "/x.md", { maxChunkSize: 250 });
    expect(chunks.length).toBeGreaterThan(10);
    for (const c of chunks) {
      expect(c.content.length).toBeLessThanOrEqual(250);
      const words = c.content.replace("# Notes\n\n", "").split(/\s+/);
      for (const w of words) expect(tokens.has(w)).toBe(true);
    }
  });

  test("a dot at the window edge is not taken for a sentence end", () => {
    // "." of v1.2.3 is the last character that fits; the reference would cut "v1.|2.3".
    const text = `Hi. ${"a".repeat(13)}v1.2.3 and more words after it`;
    expect(text.indexOf("v1.") + 2).toBe(19);
    const parts = splitLongText(text, 20);
    expect(parts[0]).toBe("Hi. ");
    expect(parts.join("")).toBe(text);
  });

  test("sentence ends: ellipsis, fullwidth punctuation, ASCII before CJK", () => {
    expect(splitLongText("aaaa……bbbbbbbbbb", 8)).toEqual(["aaaa……", "bbbbbbbbbb".slice(0, 8), "bb"]);
    expect(splitLongText("好的！再见？明天；", 4)[0]).toBe("好的！");
    expect(splitLongText("Done.中文继续写下去", 8)[0]).toBe("Done.");
    expect(splitLongText("short", 10)).toEqual(["short"]);
  });

  test("without a sentence end, a multi-line piece is cut after a line break", () => {
    expect(splitLongText("line one\nline two\nline three", 12)).toEqual(["line one\n", "line two\n", "line three"]);
  });

  test("a hard cut never halves a surrogate pair", () => {
    const text = "a".repeat(9) + "😀".repeat(10);
    for (const p of splitLongText(text, 10)) {
      expect(p.length).toBeLessThanOrEqual(10);
      expect(/[\uD800-\uDBFF]$/.test(p)).toBe(false);
    }
  });

  test("a long line among short ones: every chunk fits", () => {
    let long = "";
    for (let i = 0; long.length < 4000; i++) long += `w${i} `;
    const text = `# Mixed\n\nshort one\nshort two\n${long}\nshort three\n\nend para\n`;
    const chunks = chunkMarkdown(text, "/x.md", { maxChunkSize: 600 });
    expect(chunks.length).toBeGreaterThan(6);
    for (const c of chunks) expect(c.content.length).toBeLessThanOrEqual(600);
    const all = chunks.map((c) => c.content).join(" ");
    expect(all).toContain("short three");
    expect(all).toContain("end para");
    // Overlap never re-carries the long line, so each of its words lands in one chunk.
    expect(chunks.filter((c) => c.content.includes(" w100 ")).length).toBe(1);
  });

  test("a split section never yields a heading-only piece", () => {
    const text = `## Head\n${"z".repeat(2000)}\n`;
    const chunks = chunkMarkdown(text, "/x.md");
    expect(chunks.length).toBe(2);
    expect(chunks.every((c) => c.content !== "## Head")).toBe(true);
    expect(chunks.every((c) => c.heading === "Head" && c.headingLevel === 2)).toBe(true);
  });

  test("rejects nonsense options", () => {
    expect(() => chunkMarkdown("x", "/x.md", { maxChunkSize: 0 })).toThrow(UsageError);
    expect(() => chunkMarkdown("x", "/x.md", { overlapLines: -1 })).toThrow(UsageError);
  });
});

describe("huge runs of text", () => {
  test("a run too big for marked still respects fences and numbers lines", () => {
    const para = Array.from({ length: 6000 }, (_, i) => `log line ${i} with some words`).join("\n");
    const text = `# First\n\n${para}\n\n\`\`\`\n# not a heading\n\`\`\`\n\n## Second\n\nbody\n`;
    expect(para.length).toBeGreaterThan(128 * 1024);
    const chunks = chunkMarkdown(text, "/x.md");
    const second = chunks.filter((c) => c.heading === "Second");
    expect(second.length).toBe(1);
    expect(second[0]!.startLine).toBe(6008);
    expect(second[0]!.content).toBe("## Second\n\nbody");
    expect(chunks.some((c) => c.heading === "not a heading")).toBe(false);
    expect(chunks.filter((c) => c.heading === "First").length).toBeGreaterThan(100);
  });
});

describe("performance", () => {
  test("large inputs stay linear", () => {
    const sections = Array.from({ length: 10000 }, (_, i) => `## Section ${i}\n\nSome text for section ${i}, with a [link](http://x.io).\n\n- a\n- b\n`);
    const many = sections.join("\n");
    const oneBig = Array.from({ length: 50000 }, (_, i) => `line ${i} of a very long section`).join("\n");
    const t0 = performance.now();
    const a = chunkMarkdown(many, "/many.md");
    const b = chunkMarkdown(oneBig, "/big.md");
    const ms = performance.now() - t0;
    expect(a.length).toBe(10000);
    expect(b.length).toBeGreaterThan(500);
    expect(ms).toBeLessThan(3000);
  });
});
