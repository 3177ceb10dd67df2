/**
 * The plugin and its marketplace through the real validator: `claude plugin validate` (the Claude
 * Code CLI from the agents' cache, a throw-away HOME, no network) must pass with nothing to report,
 * plain, --strict, and with the plugin directory's own checks (--profile directory --strict).
 * The CLI is pinned in scripts/agents/: the test command installs it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inflateSync } from "node:zlib";
import { REPO } from "../helpers/cli.ts";
import { assertRealClaude, CLAUDE_BIN } from "../helpers/real-claude.ts";

const CLAUDE = CLAUDE_BIN;
assertRealClaude();

const tmps: string[] = [];
afterAll(() => {
  for (const d of tmps) rmSync(d, { recursive: true, force: true });
});
function tmp(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  tmps.push(d);
  return d;
}

interface Validation {
  code: number;
  out: string;
  /** Lines that report a warning or an error: "⚠ Found 1 warning:", "✘ …", or any line naming a warning. */
  problems: string[];
}

async function validate(target: string, ...flags: string[]): Promise<Validation> {
  // A HOME of its own: what one run of the client writes there must not change what the next reads.
  const home = tmp("ms-claude-home-");
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("CLAUDE") && !k.startsWith("ANTHROPIC")) env[k] = v;
  Object.assign(env, { HOME: home, CLAUDE_CONFIG_DIR: join(home, ".claude"), CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1", NO_COLOR: "1" });
  const proc = Bun.spawn([CLAUDE, "plugin", "validate", target, ...flags], { cwd: REPO, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => proc.kill(9), 60_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  const out = (stdout + stderr).replace(/\x1b\[[0-9;]*m/g, "");
  const problems = out.split("\n").filter((l) => /⚠|✘|\bwarnings?\b|\berrors?\b|\bfailed\b/i.test(l));
  return { code, out, problems };
}

describe("claude plugin validate", () => {
  test("plugin/: passes with nothing to report, plain and --strict", async () => {
    for (const flags of [[], ["--strict"]]) {
      const r = await validate("plugin", ...flags);
      expect({ flags, code: r.code, problems: r.problems }).toEqual({ flags, code: 0, problems: [] });
      expect(r.out).toContain("Validating plugin manifest:");
      expect(r.out).toContain("✔ These checks found nothing to report");
      expect(r.out).toContain("✔ Validation passed");
      // What the plugin provides is what the validator read.
      for (const event of ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"]) expect(r.out).toContain(`hooks: ${event} command`);
      expect(r.out).toContain("skills: memsearch:memory-recall");
    }
  }, 60_000);

  test("plugin/: the plugin directory's checks pass too (--profile directory --strict fails on their warnings)", async () => {
    const r = await validate("plugin", "--profile", "directory", "--strict");
    expect({ code: r.code, problems: r.problems }).toEqual({ code: 0, problems: [] });
    expect(r.out).toContain("✔ Validation passed");
  }, 60_000);

  test("the marketplace at the repository root passes, plain and --strict", async () => {
    for (const flags of [[], ["--strict"]]) {
      const r = await validate(".", ...flags);
      expect({ flags, code: r.code, problems: r.problems }).toEqual({ flags, code: 0, problems: [] });
      expect(r.out).toContain("Validating marketplace manifest:");
      expect(r.out).toContain("✔ Validation passed");
    }
  }, 60_000);

  test("the icon is what keeps it clean: a copy without it gets a warning and fails the directory profile", async () => {
    // A copy of what the validator reads: the plugin, the repository's README (it takes it from the
    // nearest folder with .git when the plugin has none) and a .git marker.
    const scratch = tmp("ms-plugin-copy-");
    mkdirSync(join(scratch, ".git"));
    cpSync(join(REPO, "README.md"), join(scratch, "README.md"));
    cpSync(join(REPO, "plugin"), join(scratch, "plugin"), { recursive: true, filter: (src) => !/[\\/]bin[\\/]memsearch/.test(src) });
    const plugin = join(scratch, "plugin");
    expect(await validate(plugin, "--profile", "directory", "--strict")).toMatchObject({ code: 0, problems: [] });

    // The file gone, the manifest still naming it.
    const icon = join(plugin, ".claude-plugin", "icon.png");
    renameSync(icon, join(scratch, "icon.png"));
    const dangling = await validate(plugin);
    expect(dangling.code).toBe(0);
    expect(dangling.problems.some((l) => l.includes("⚠"))).toBe(true);
    expect(dangling.out).toContain("ICON_INVALID");
    expect((await validate(plugin, "--profile", "directory", "--strict")).code).toBe(1);

    // No icon at all (nor one at a path the validator looks at by default, such as assets/icon.svg):
    // the warning the validator gave before the icon was added.
    expect(existsSync(join(plugin, "assets"))).toBe(false);
    const manifestPath = join(plugin, ".claude-plugin", "plugin.json");
    const { icon: _icon, ...manifest } = JSON.parse(readFileSync(manifestPath, "utf8"));
    writeFileSync(manifestPath, JSON.stringify(manifest, null, 2));
    const missing = await validate(plugin);
    expect(missing.code).toBe(0);
    expect(missing.out).toContain("ICON_MISSING");
    expect(missing.problems.length).toBeGreaterThan(0);
  }, 60_000);
});

test("plugin.json names a square PNG of 512 to 2048 px, under 2 MB, inside the plugin (what the directory asks for)", () => {
  const manifest = JSON.parse(readFileSync(join(REPO, "plugin", ".claude-plugin", "plugin.json"), "utf8"));
  expect(manifest.icon).toBe(".claude-plugin/icon.png");
  const png = readFileSync(join(REPO, "plugin", manifest.icon));
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  expect(png.subarray(12, 16).toString("latin1")).toBe("IHDR");
  const [width, height] = [png.readUInt32BE(16), png.readUInt32BE(20)];
  expect(width).toBe(height);
  expect(width).toBeGreaterThanOrEqual(512);
  expect(width).toBeLessThanOrEqual(2048);
  expect(png.length).toBeLessThan(2 * 1024 * 1024);
});

test("the icon files are what scripts/plugin-icon.ts draws (edit the shapes there, then run it)", async () => {
  const { rasterise, svg, PNG_PATH, SIZE, SVG_PATH } = await import("../../scripts/plugin-icon.ts");
  expect(readFileSync(SVG_PATH, "utf8")).toBe(svg());
  // Pixels, not bytes: another zlib may deflate the same pixels differently.
  const png = readFileSync(PNG_PATH);
  const idat: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    if (png.subarray(at + 4, at + 8).toString("latin1") === "IDAT") idat.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const row = SIZE * 4 + 1;
  expect(raw.length).toBe(SIZE * row);
  const pixels = Buffer.concat(Array.from({ length: SIZE }, (_, y) => {
    expect(raw[y * row]).toBe(0); // filter type none, as the script writes it
    return raw.subarray(y * row + 1, (y + 1) * row);
  }));
  expect(pixels.equals(Buffer.from(rasterise()))).toBe(true);
}, 30_000);
