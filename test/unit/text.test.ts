import { describe, expect, test } from "bun:test";
import { oneLine as oneLineFromErrors } from "../../src/core/errors.ts";
import { clip, clipMarked, clipMiddle, firstLine, oneLine, seconds, stripControls } from "../../src/core/text.ts";

const EMOJI = "😀"; // a surrogate pair
const wellFormed = (s: string) => !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);

describe("oneLine", () => {
  test("every run of white space becomes one space, ends trimmed", () => {
    expect(oneLine("  a\n\n  b\t\tc \u00a0 d\r\n")).toBe("a b c d");
    expect(oneLine("")).toBe("");
  });

  test("takes the message of anything thrown", () => {
    expect(oneLine(new Error("cannot write\n  /x: disk full"))).toBe("cannot write /x: disk full");
    expect(oneLine(42)).toBe("42");
    expect(oneLine(undefined)).toBe("undefined");
  });

  test("errors.ts hands out the same function", () => {
    expect(oneLineFromErrors).toBe(oneLine);
  });
});

describe("firstLine", () => {
  test("the first line with something on it, trimmed", () => {
    expect(firstLine("\n  \n  Invalid API key  \nsecond")).toBe("Invalid API key");
    expect(firstLine(" \n\t\n")).toBe("");
  });
});

describe("clip", () => {
  test("leaves text that fits alone", () => {
    expect(clip("abc", 3)).toBe("abc");
    expect(clip("", 0)).toBe("");
  });

  test("cuts to exactly max, the last being the ellipsis", () => {
    expect(clip("abcdef", 4)).toBe("abc…");
    expect(clip("abcdef", 4, "...")).toBe("a...");
    expect(clip("x".repeat(300), 200)).toHaveLength(200);
  });

  test("never leaves half of a surrogate pair", () => {
    for (let at = 0; at < 6; at++) {
      const text = "a".repeat(at) + EMOJI.repeat(5);
      for (let max = 2; max < text.length; max++) {
        const out = clip(text, max);
        expect(out.length).toBeLessThanOrEqual(max);
        expect(out.endsWith("…")).toBe(true);
        expect(wellFormed(out)).toBe(true);
      }
    }
  });
});

describe("clipMarked", () => {
  test("says how long the whole was", () => {
    expect(clipMarked("abcdef", 3)).toBe("abc …[truncated, 6 chars total]");
    expect(clipMarked("abc", 3)).toBe("abc");
  });

  test("marks a text an earlier cut already shortened", () => {
    expect(clipMarked("abc", 10, 500)).toBe("abc …[truncated, 500 chars total]");
  });

  test("never leaves half of a surrogate pair", () => {
    const out = clipMarked("ab" + EMOJI + "cd", 3);
    expect(out).toBe("ab …[truncated, 6 chars total]");
  });
});

describe("clipMiddle", () => {
  test("keeps the start and the end and says how much was left out", () => {
    const text = "START " + "m".repeat(1_000) + " END";
    const out = clipMiddle(text, 90);
    expect(out).toStartWith("START ");
    expect(out).toEndWith(" END");
    expect(out).toContain(`[… ${text.length - 90} characters omitted …]`);
    expect(clipMiddle("short", 90)).toBe("short");
  });

  test("never leaves half of a surrogate pair at either cut", () => {
    const text = EMOJI.repeat(100);
    for (let max = 10; max < 40; max++) expect(wellFormed(clipMiddle(text, max))).toBe(true);
  });
});

test("seconds", () => {
  expect(seconds(200)).toBe("0.2s");
  expect(seconds(90_000)).toBe("90s");
  expect(seconds(1_250)).toBe("1.3s");
});

describe("stripControls", () => {
  test("every C0 control but tab and newline, DEL and every C1 control becomes a space", () => {
    for (let c = 0; c < 0xa0; c++) {
      if (c >= 0x20 && c < 0x7f) continue;
      const ch = String.fromCharCode(c);
      const want = c === 9 || c === 10 ? `a${ch}b` : c === 13 ? "a\nb" : c === 27 ? "ab" : "a b";
      expect(stripControls(`a${ch}b`)).toBe(want);
    }
  });

  test("escape sequences go whole: colours, cursor moves, titles, hyperlinks, charsets", () => {
    expect(stripControls("\x1b[1;31mred\x1b[0m and \x1b[2K\x1b[1Gline")).toBe("red and line");
    expect(stripControls("a\x1b]0;new title\x07b")).toBe("ab");
    expect(stripControls("\x1b]8;;https://evil.test\x1b\\click\x1b]8;;\x1b\\")).toBe("click");
    expect(stripControls("\x1b(Bplain\x1bM")).toBe("plain");
    // An unfinished one loses its ESC only: the text after it is not swallowed.
    expect(stripControls("cut \x1b[12;\nhere")).toBe("cut [12;\nhere");
    expect(stripControls("cut \x1b]0;title with no end")).toBe("cut ]0;title with no end");
  });

  test("CR and CRLF become a newline: a lone CR can no longer hide the start of a line", () => {
    expect(stripControls("safe text\rrm -rf ~\r\nnext")).toBe("safe text\nrm -rf ~\nnext");
  });

  test("lone surrogates become U+FFFD; pairs, tabs, newlines and ordinary text are kept as they are", () => {
    expect(stripControls(`a\ud800b\udc00c${EMOJI}`)).toBe(`a\ufffdb\ufffdc${EMOJI}`);
    const plain = "naïve café\tx\n  \u00a0 — 日本語 ∑";
    expect(stripControls(plain)).toBe(plain);
    expect(wellFormed(stripControls("x\udbff"))).toBe(true);
  });

  test("a megabyte of unfinished sequences is cleaned in one pass", () => {
    for (const unit of ["\x1b[", "\x1b]", "\x1b[0;", "\x1b] \x1b", "\0\r"]) {
      const out = stripControls(unit.repeat((1 << 20) / unit.length));
      expect(out).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    }
  });
});
