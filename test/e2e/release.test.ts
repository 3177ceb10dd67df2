/**
 * scripts/release.ts: a host-only release (no download needed) yields runnable archives, bare
 * binaries, the npm packages and a correct SHA256SUMS; a cross target whose runtime can't be
 * fetched fails cleanly. Installing what it builds: distribution.test.ts and install.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { hostRelease } from "../helpers/release-build.ts";

const ROOT = resolve(import.meta.dir, "..", "..");
const RELEASE = join(ROOT, "scripts", "release.ts");
const PLATFORMS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "windows-x64"];
const HOST = `${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;
const EXE = HOST.startsWith("windows") ? ".exe" : "";
const V = pkg.version;

const tmps: string[] = [];
function tmp(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  tmps.push(d);
  return d;
}

function run(cmd: string[], opts: { cwd?: string; env?: Record<string, string | undefined> } = {}) {
  const p = Bun.spawnSync(cmd, { cwd: opts.cwd ?? ROOT, env: { ...process.env, ...opts.env }, stdout: "pipe", stderr: "pipe" });
  const stdout = p.stdout.toString();
  const stderr = p.stderr.toString();
  // `all`: src/cli.ts routes console.log (and so yargs' --version) to stderr.
  return { code: p.exitCode, stdout, stderr, all: stdout + stderr };
}

async function sha256(path: string): Promise<string> {
  const h = new Bun.CryptoHasher("sha256");
  h.update(await Bun.file(path).arrayBuffer());
  return h.digest("hex");
}

afterAll(() => {
  for (const d of tmps) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!PLATFORMS.includes(HOST))("release --host", () => {
  let out: string;
  let result: { code: number | null; stdout: string; stderr: string };

  beforeAll(async () => {
    const b = await hostRelease();
    out = b.dir;
    result = b;
  }, 240_000);

  test("exits 0 and prints a summary table of every file", () => {
    expect(result.stderr).not.toContain("✗");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^file\s+size$/m);
    for (const f of [`memsearch-${V}-${HOST}${EXE}`, `memsearch-${V}-${HOST}.tar.gz`, "install.sh", "SHA256SUMS", `npm/memsearch-${V}.tgz`, `npm/memsearch-${HOST}-${V}.tgz`]) {
      expect(result.stdout).toContain(f);
      expect(existsSync(join(out, f))).toBe(true);
    }
    // What a person downloads is said, install.sh among it.
    expect(result.stdout).toContain("npm install -g memsearch");
    expect(result.stdout).toContain("install.sh and SHA256SUMS");
  });

  test("SHA256SUMS lists every archive and binary with its correct hash", async () => {
    const text = await Bun.file(join(out, "SHA256SUMS")).text();
    const lines = text.trimEnd().split("\n");
    const listed = new Map<string, string>();
    for (const line of lines) {
      const m = /^([0-9a-f]{64}) {2}(\S+)$/.exec(line);
      expect(m).not.toBeNull();
      listed.set(m![2], m![1]);
    }
    const present = [...readdirSync(out).filter((f) => f !== "SHA256SUMS" && f !== "npm"), ...readdirSync(join(out, "npm")).map((f) => `npm/${f}`)];
    expect([...listed.keys()].sort()).toEqual(present.sort());
    for (const [file, hash] of listed) expect(await sha256(join(out, file))).toBe(hash);
    // and sha256sum itself agrees, where it exists
    if (Bun.which("sha256sum")) expect(run(["sha256sum", "-c", "SHA256SUMS"], { cwd: out }).code).toBe(0);
  });

  test("the bare binary runs", () => {
    const r = run([join(out, `memsearch-${V}-${HOST}${EXE}`), "--version"], { cwd: tmpdir() });
    expect(r.code).toBe(0);
    expect(r.all.trim()).toBe(`memsearch, version ${V}`);
  });

  test("the extracted archive holds the binary once, README and install.sh", () => {
    const x = tmp("memsearch-extract-");
    expect(run(["tar", "-xzf", join(out, `memsearch-${V}-${HOST}.tar.gz`), "-C", x]).code).toBe(0);
    expect(readdirSync(x)).toEqual([`memsearch-${V}-${HOST}`]);
    const top = join(x, `memsearch-${V}-${HOST}`);
    expect(readdirSync(top).sort()).toEqual(["README.md", "install.sh", `memsearch${EXE}`, ...(existsSync(join(ROOT, "LICENSE")) ? ["LICENSE"] : [])].sort());
    expect(statSync(join(top, "install.sh")).mode & 0o111).not.toBe(0);
    if (existsSync(join(ROOT, "LICENSE"))) expect(existsSync(join(top, "LICENSE"))).toBe(true);

    // Run from an unrelated cwd: the version must not come from a package.json nearby.
    const r = run([join(top, `memsearch${EXE}`), "--version"], { cwd: x });
    expect(r.code).toBe(0);
    expect(r.all.trim()).toBe(`memsearch, version ${V}`);
  });
});

describe("release failures", () => {
  test("an unknown target is refused before building anything", () => {
    const out = tmp("memsearch-release-bad-");
    const r = run([process.execPath, RELEASE, "--targets", "linux-x64,amiga-m68k", "--out", out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown target amiga-m68k");
    expect(readdirSync(out)).toEqual([]);
  });

  test("a cross target whose runtime can't be fetched fails with one clear line; the others are still built; exit 1", async () => {
    const cross = PLATFORMS.find((p) => p !== HOST)!;
    const targets = PLATFORMS.includes(HOST) ? [cross, HOST] : [cross];
    const out = tmp("memsearch-release-offline-");
    const cache = tmp("memsearch-bun-cache-");
    // An empty runtime cache and a dead proxy: exactly what a machine without network sees.
    const dead = "http://127.0.0.1:9";
    const r = run([process.execPath, RELEASE, "--targets", targets.join(","), "--out", out], {
      env: { BUN_INSTALL_CACHE_DIR: cache, HTTPS_PROXY: dead, HTTP_PROXY: dead, https_proxy: dead, http_proxy: dead, NO_PROXY: "", no_proxy: "" },
    });
    expect(r.code).toBe(1);
    const line = r.stderr.split("\n").find((l) => l.startsWith(`✗ ${cross}:`));
    expect(line).toBeDefined();
    expect(line).toContain("cannot fetch the Bun runtime");
    expect(r.stderr).toContain(`1 target(s) failed: ${cross}`);
    expect(existsSync(join(out, `memsearch-${V}-${cross}.tar.gz`))).toBe(false);
    const sums = await Bun.file(join(out, "SHA256SUMS")).text();
    expect(sums).not.toContain(cross);
    if (targets.includes(HOST)) {
      // built after the failed one, and checksummed
      expect(sums).toContain(`  memsearch-${V}-${HOST}.tar.gz\n`);
      expect(sums).toContain(`  memsearch-${V}-${HOST}${EXE}\n`);
    }
  }, 240_000);
});
