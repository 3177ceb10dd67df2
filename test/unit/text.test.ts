import { describe, expect, test } from "bun:test";
import { oneLine as oneLineFromErrors } from "../../src/core/errors.ts";
import { clip, clipMarked, clipMiddle, firstLine, oneLine, seconds } from "../../src/core/text.ts";

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
