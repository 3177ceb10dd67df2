import { expect, test } from "bun:test";
import { loadConfig } from "../../src/core/config.ts";
test("defaults load", () => {
  expect(loadConfig({ projectRoot: "/nonexistent" }).values["chunking.max_chunk_size"]).toBe(1500);
});
