/**
 * scripts/install.sh against a real host release (built once per test run, test/helpers/release-build.ts):
 * installs the one binary from an archive, a bare binary and an http URL; refuses a checksum
 * mismatch and then changes nothing. The whole path from install.sh to uninstall is in
 * distribution.test.ts. Always HOME=<temp dir>, never the real home. Run with `sh` (dash on
 * Debian) to keep it POSIX.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { requireRelease } from "../helpers/release-build.ts";

const ROOT = resolve(import.meta.dir, "..", "..");
const INSTALL = join(ROOT, "scripts", "install.sh");
const PLATFORMS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"]; // install.sh is for POSIX hosts
const HOST = `${process.platform}-${process.arch}`;
const V = pkg.version;
const ARCHIVE = `memsearch-${V}-${HOST}.tar.gz`;
const BARE = `memsearch-${V}-${HOST}`;

const tmps: string[] = [];
function tmp(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  tmps.push(d);
  return d;
}

type Result = { code: number; stdout: string; stderr: string; all: string };
async function install(args: string[], home: string, extraEnv: Record<string, string> = {}): Promise<Result> {
  const p = Bun.spawn(["sh", INSTALL, ...args], {
    cwd: home,
    env: { ...process.env, HOME: home, ...extraEnv },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr, all: stdout + stderr };
}

function version(bin: string): string {
  const p = Bun.spawnSync([bin, "--version"], { stdout: "pipe", stderr: "pipe" });
  expect(p.exitCode).toBe(0);
  return (p.stdout.toString() + p.stderr.toString()).trim(); // the CLI writes --version to stderr
}

let rel: string;

beforeAll(async () => {
  if (!PLATFORMS.includes(HOST)) return;
  rel = (await requireRelease()).dir;
}, 240_000);

afterAll(() => {
  for (const d of tmps) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!PLATFORMS.includes(HOST))("install.sh", () => {
  test("installs the one binary from a release archive and names the next steps", async () => {
    const home = tmp("memsearch-install-home-");
    const r = await install([join(rel, ARCHIVE)], home, { PATH: "/usr/bin:/bin" });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`checksum OK: ${ARCHIVE}`);

    const bin = join(home, ".local", "bin", "memsearch");
    expect(version(bin)).toBe(`memsearch, version ${V}`);
    for (const step of ["memsearch install claude", "memsearch import", "memsearch hub"]) expect(r.stdout).toContain(`  ${step}`);
    // ~/.local/bin is not on that PATH
    expect(r.stderr).toContain("is not on your PATH");
    // no staging leftovers, no plugin folder, no second copy of the binary: `memsearch install claude` writes the plugin
    expect(readdirSync(join(home, ".local", "bin"))).toEqual(["memsearch"]);
    expect(existsSync(join(home, ".memsearch"))).toBe(false);
  }, 60_000);

  test("honours --prefix; an upgrade replaces the binary in place, and an unknown option is refused", async () => {
    const home = tmp("memsearch-install-home-");
    const prefix = join(home, "opt", "bin");
    mkdirSync(prefix, { recursive: true });
    writeFileSync(join(prefix, "memsearch"), "#!/bin/sh\necho old\n", { mode: 0o755 });
    const r = await install(["--prefix", prefix, join(rel, ARCHIVE)], home, { PATH: `${prefix}:/usr/bin:/bin` });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain("is not on your PATH");
    expect(version(join(prefix, "memsearch"))).toBe(`memsearch, version ${V}`);
    expect(readdirSync(prefix)).toEqual(["memsearch"]);
    const bad = await install(["--plugin-dir", join(home, "x"), join(rel, ARCHIVE)], home);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("unknown option: --plugin-dir");
  }, 60_000);

  test("a tampered archive is refused with a checksum message, and nothing is changed", async () => {
    const home = tmp("memsearch-install-home-");
    const dl = tmp("memsearch-install-dl-");
    copyFileSync(join(rel, ARCHIVE), join(dl, ARCHIVE));
    copyFileSync(join(rel, "SHA256SUMS"), join(dl, "SHA256SUMS"));
    appendFileSync(join(dl, ARCHIVE), "x");
    const prefix = join(home, ".local", "bin");
    mkdirSync(prefix, { recursive: true });
    writeFileSync(join(prefix, "memsearch"), "#!/bin/sh\necho old\n", { mode: 0o755 });

    const r = await install([join(dl, ARCHIVE)], home);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("checksum mismatch");
    expect(r.stderr).toContain("nothing was changed");
    expect(readFileSync(join(prefix, "memsearch"), "utf8")).toBe("#!/bin/sh\necho old\n");
    expect(readdirSync(prefix)).toEqual(["memsearch"]);
    expect(existsSync(join(home, ".memsearch"))).toBe(false);
  });

  test("a wrong or missing SHA256SUMS entry is refused before the prefix exists", async () => {
    const home = tmp("memsearch-install-home-");
    const sums = join(home, "SUMS");
    writeFileSync(sums, `${"0".repeat(64)}  ${ARCHIVE}\n`);
    const wrong = await install(["--sums", sums, join(rel, ARCHIVE)], home);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("checksum mismatch");

    writeFileSync(sums, `${"0".repeat(64)}  some-other-file.tar.gz\n`);
    const missing = await install(["--sums", sums, join(rel, ARCHIVE)], home);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`no checksum entry for ${ARCHIVE}`);

    const dl = tmp("memsearch-install-dl-");
    copyFileSync(join(rel, ARCHIVE), join(dl, ARCHIVE)); // no SHA256SUMS beside it
    const noSums = await install([join(dl, ARCHIVE)], home);
    expect(noSums.code).toBe(1);
    expect(noSums.stderr).toContain("checksum file not found");

    expect(existsSync(join(home, ".local"))).toBe(false);
    expect(existsSync(join(home, ".memsearch"))).toBe(false);
  });

  test("an archive whose binary can't run here (wrong platform) is refused and leaves no trace", async () => {
    const home = tmp("memsearch-install-home-");
    const dl = tmp("memsearch-install-dl-");
    const name = `memsearch-${V}-other-os`;
    mkdirSync(join(dl, name, "plugin", "bin"), { recursive: true });
    writeFileSync(join(dl, name, "memsearch"), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0xff, 0xff, 0xff, 0xff]), { mode: 0o755 });
    expect(Bun.spawnSync(["tar", "-czf", `${name}.tar.gz`, name], { cwd: dl }).exitCode).toBe(0);
    const hasher = new Bun.CryptoHasher("sha256");
    hasher.update(readFileSync(join(dl, `${name}.tar.gz`)));
    writeFileSync(join(dl, "SHA256SUMS"), `${hasher.digest("hex")}  ${name}.tar.gz\n`);

    const r = await install([join(dl, `${name}.tar.gz`)], home);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("checksum OK");
    expect(r.stderr).toContain("does not run on this machine");
    expect(readdirSync(home)).toEqual([]);
  });

  test("installs a bare binary the same way (it carries the plugin too)", async () => {
    const home = tmp("memsearch-install-home-");
    const r = await install([join(rel, BARE)], home);
    expect(r.code).toBe(0);
    expect(version(join(home, ".local", "bin", "memsearch"))).toBe(`memsearch, version ${V}`);
    expect(existsSync(join(home, ".memsearch"))).toBe(false);
    expect(r.stdout).toContain("memsearch install claude");
  }, 60_000);

  test("installs from an http URL, with SHA256SUMS fetched from the same URL folder", async () => {
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(req) {
        const name = new URL(req.url).pathname.replace(/^\/rel\//, "");
        const path = join(rel, name);
        return name && !name.includes("/") && existsSync(path) ? new Response(Bun.file(path)) : new Response("nope", { status: 404 });
      },
    });
    try {
      const home = tmp("memsearch-install-home-");
      const r = await install([`http://127.0.0.1:${server.port}/rel/${ARCHIVE}`], home);
      expect(r.code).toBe(0);
      expect(version(join(home, ".local", "bin", "memsearch"))).toBe(`memsearch, version ${V}`);

      const missing = await install([`http://127.0.0.1:${server.port}/rel/nothing-${ARCHIVE}`], home);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain("download failed");
    } finally {
      server.stop(true);
    }
  }, 60_000);

  test("a missing or absent SOURCE gives a clear error", async () => {
    const home = tmp("memsearch-install-home-");
    const r = await install([join(home, "no-such.tar.gz")], home);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`source not found: ${join(home, "no-such.tar.gz")}`);

    const none = await install([], home);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("no SOURCE given");
    expect(none.stderr).toContain("usage: install.sh");

    const help = await install(["--help"], home);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--prefix DIR");
    expect(readdirSync(home)).toEqual([]);
  });
});
