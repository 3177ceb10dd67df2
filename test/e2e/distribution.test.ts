/**
 * memsearch as a new user gets it, both ways, offline, from what `bun scripts/release.ts` builds:
 *
 *   npm:        the packed tarballs served by a registry on 127.0.0.1 (every other address is a
 *               dead proxy), `npm install -g memsearch` into a throw-away prefix
 *   install.sh: the archive and SHA256SUMS, `sh install.sh <archive>`
 *
 * then, with a temporary HOME and the real Claude Code CLI: `memsearch --version`, `memsearch
 * install claude` (the real `claude plugin` commands), a `claude -p` session whose hooks capture
 * the turn, `memsearch search` finding it, an upgrade to a newer packed version that the next
 * session's hooks run, and `memsearch uninstall`. After every step exactly one memsearch binary
 * exists in the prefix and the home (none after uninstall), and project memory survives.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, readSync, closeSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startMockApi, type MockApi } from "../helpers/anthropic-mock.ts";
import { startRegistry, type Registry } from "../helpers/npm-registry.ts";
import { assertRealClaude, CLAUDE_BIN, killLeftovers, runPrint } from "../helpers/real-claude.ts";
import { HOST, requireRelease, ROOT, VERSION, type Built } from "../helpers/release-build.ts";

const NEXT = VERSION.replace(/(\d+)$/, (n) => String(Number(n) + 1));
const tmps: string[] = [];
const tmp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  tmps.push(d);
  return d;
};
const runIds: string[] = [];
let api: MockApi;
let current: Built;
let next: Built;

beforeAll(async () => {
  assertRealClaude();
  // Both versions at once: the second is a copy of the tree that says NEXT.
  [current, next] = await Promise.all([requireRelease(VERSION), requireRelease(NEXT)]);
  api = await startMockApi({ defaultText: "Noted." });
}, 600_000);

afterAll(async () => {
  for (const id of runIds) killLeftovers(id);
  await api?.stop();
  for (const d of tmps) rmSync(d, { recursive: true, force: true });
});

/** Every memsearch binary under these folders: regular files named memsearch that are not scripts. */
function binaries(...roots: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && /^memsearch(\.exe)?$/.test(e.name)) {
        const head = Buffer.alloc(2);
        const fd = openSync(p, "r");
        readSync(fd, head, 0, 2, 0);
        closeSync(fd);
        if (head.toString() !== "#!") out.push(p);
      }
    }
  };
  for (const r of roots) walk(r);
  return out;
}

interface Machine {
  home: string;
  /** Where the install puts things besides the home (npm's prefix, install.sh's bin folder). */
  prefix: string;
  project: string;
  env: Record<string, string>;
}

function machine(): Machine {
  const home = tmp("ms-dist-home-");
  const prefix = tmp("ms-dist-prefix-");
  const project = tmp("ms-dist-proj-");
  mkdirSync(join(project, ".git"));
  // `claude` on PATH is the real client, as a user who installed Claude Code has it.
  const claudeDir = join(home, ".rc-bin");
  mkdirSync(claudeDir, { recursive: true });
  symlinkSync(CLAUDE_BIN, join(claudeDir, "claude"));
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(MEMSEARCH_|CLAUDE|ANTHROPIC_|npm_)/.test(k)) env[k] = v;
  Object.assign(env, {
    HOME: home,
    PATH: `${join(prefix, "bin")}:${claudeDir}:${dirname(process.execPath)}:${dirname(Bun.which("node") ?? "/usr/bin/node")}:/usr/bin:/bin`,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    OLLAMA_HOST: "http://127.0.0.1:9",
  });
  return { home, prefix, project, env };
}

async function sh(cmd: string[], m: Machine, extra: Record<string, string> = {}, cwd = m.project) {
  const p = Bun.spawn(cmd, { cwd, env: { ...m.env, ...extra }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr, all: stdout + stderr };
}

/**
 * A `claude -p` turn in the project, with the plugin `install claude` enabled (no --plugin-dir):
 * its hooks run what the link names. Waits for the turn's note; returns it.
 */
async function sessionNote(m: Machine, codeword: string): Promise<string> {
  const env = { ...m.env, MEMSEARCH_DEBUG: "1", MEMSEARCH_NO_WATCH: "1", MEMSEARCH_SUMMARIZER_PROVIDER: "extract" };
  const r = await runPrint({ api, projectDir: m.project, home: m.home, prompt: `Remember ${codeword}: the release train leaves on Thursdays.`, env, debugFile: false });
  runIds.push(r.runId);
  expect(r.exitCode).toBe(0);
  const memory = join(m.project, ".memsearch", "memory");
  for (let i = 0; i < 200; i++) {
    const text = existsSync(memory) ? readdirSync(memory).map((f) => readFileSync(join(memory, f), "utf8")).join("\n") : "";
    if (text.includes(codeword)) return text;
    await Bun.sleep(100);
  }
  throw new Error(`no note of ${codeword} in ${memory}`);
}

/** What the hooks logged at SessionStart (MEMSEARCH_DEBUG), which names the binary's version. */
function loggedVersions(m: Machine): string[] {
  const logs = join(m.home, ".memsearch", "logs");
  const text = readdirSync(logs).map((f) => readFileSync(join(logs, f), "utf8")).join("");
  return [...text.matchAll(/\[memsearch v([0-9.]+)\]/g)].map((x) => x[1]!);
}

/** Steps both ways share, from `memsearch --version` to uninstall. */
async function lifecycle(m: Machine, o: { binary: string; upgrade: () => Promise<void>; gone: string[] }) {
  const ms = (args: string[], extra: Record<string, string> = {}) => sh(["memsearch", ...args], m, extra);
  const one = () => expect(binaries(m.prefix, m.home)).toEqual([o.binary]);

  const v = await ms(["--version"]);
  expect(v.code).toBe(0);
  expect(v.all.trim()).toBe(`memsearch, version ${VERSION}`);
  one();

  const inst = await ms(["install", "claude"]);
  expect(inst.stderr).toBe("");
  expect(inst.code).toBe(0);
  expect(inst.stdout).toContain(`ran: claude plugin marketplace add ${join(m.home, ".memsearch")}, then claude plugin install memsearch@memsearch`);
  const settings = JSON.parse(readFileSync(join(m.home, ".claude", "settings.json"), "utf8"));
  expect(settings.enabledPlugins["memsearch@memsearch"]).toBe(true);
  expect(readlinkSync(join(m.home, ".memsearch", "bin", "memsearch"))).toBe(o.binary);
  const listed = await sh([join(m.home, ".rc-bin", "claude"), "plugin", "list", "--json"], m);
  expect(JSON.parse(listed.stdout).map((p: { id: string }) => p.id)).toContain("memsearch@memsearch");
  one(); // the plugin, and Claude Code's copy of it, hold the script, not the binary

  // A turn in a real session: the plugin's hooks queue it, the drainer writes its note.
  const note = await sessionNote(m, "zq-first-7");
  expect(note).toContain("zq-first-7");
  expect(loggedVersions(m)).toEqual([VERSION]);
  const found = await ms(["search", "zq-first-7 release train"]);
  expect(found.code).toBe(0);
  expect(found.stdout).toContain("zq-first-7");

  // Upgrade: one file replaced; the next session's hooks run the new one, through the same link.
  await o.upgrade();
  expect((await ms(["--version"])).all.trim()).toBe(`memsearch, version ${NEXT}`);
  one();
  expect(realpathSync(join(m.home, ".memsearch", "bin", "memsearch"))).toBe(o.binary);
  await sessionNote(m, "zq-second-8");
  expect(loggedVersions(m).at(-1)).toBe(NEXT);
  expect(new Set(loggedVersions(m))).toEqual(new Set([VERSION, NEXT]));

  const un = await ms(["uninstall"]);
  expect(un.stderr).toBe("");
  expect(un.code).toBe(0);
  expect(binaries(m.prefix, m.home)).toEqual([]);
  for (const p of o.gone) expect(existsSync(p)).toBe(false);
  for (const p of ["bin", "plugin", ".claude-plugin"]) expect(existsSync(join(m.home, ".memsearch", p))).toBe(false);
  expect(JSON.parse(readFileSync(join(m.home, ".claude", "settings.json"), "utf8")).enabledPlugins).toEqual({});
  // Project memory is never removed; ~/.memsearch's data stays without --purge.
  expect(readdirSync(join(m.project, ".memsearch", "memory")).length).toBeGreaterThan(0);
  expect(existsSync(join(m.home, ".memsearch", "projects.json"))).toBe(true);
  const after = await sh(["sh", "-c", "command -v memsearch || echo none"], m);
  expect(after.stdout.trim()).toBe("none");
}

describe("npm: the main package and the platform package, installed from the packed tarballs", () => {
  let registry: Registry;
  afterAll(() => registry?.stop());

  test("the release writes one main package naming all five platform packages, and the host's", async () => {
    const npm = readdirSync(join(current.dir, "npm")).sort();
    expect(npm).toEqual([`memsearch-${HOST}-${VERSION}.tgz`, `memsearch-${VERSION}.tgz`].sort());
    const manifest = (tgz: string) => JSON.parse(Bun.spawnSync(["tar", "-xzOf", join(current.dir, "npm", tgz), "package/package.json"]).stdout.toString());
    const main = manifest(`memsearch-${VERSION}.tgz`);
    expect(main.bin).toEqual({ memsearch: "bin/memsearch.js" });
    expect(main.optionalDependencies).toEqual(Object.fromEntries(["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "windows-x64"].map((p) => [`memsearch-${p}`, VERSION])));
    const plat = manifest(`memsearch-${HOST}-${VERSION}.tgz`);
    expect(plat.os).toEqual([process.platform]);
    expect(plat.cpu).toEqual([process.arch]);
    expect(plat.bin).toBeUndefined();
    // The binary once in all the npm files; the main package is small.
    const list = (tgz: string) => Bun.spawnSync(["tar", "-tzf", join(current.dir, "npm", tgz)]).stdout.toString().trim().split("\n").sort();
    expect(list(`memsearch-${HOST}-${VERSION}.tgz`)).toEqual(["package/README.md", "package/bin/memsearch", "package/package.json"]);
    expect(list(`memsearch-${VERSION}.tgz`)).toEqual(["package/README.md", "package/bin/memsearch.js", "package/package.json"]);
  });

  test("install -g, --version, install claude, a captured turn, search, upgrade, uninstall: one binary throughout", async () => {
    const npmDir = (b: Built) => [join(b.dir, "npm", `memsearch-${b.version}.tgz`), join(b.dir, "npm", `memsearch-${HOST}-${b.version}.tgz`)];
    registry = startRegistry(npmDir(current));
    const m = machine();
    const cache = tmp("ms-dist-npm-cache-");
    Object.assign(m.env, registry.npmEnv(cache));
    const npm = (args: string[]) => sh(["npm", ...args, "--prefix", m.prefix], m);

    const i = await npm(["install", "-g", "memsearch"]);
    expect(i.all).not.toContain("ERR");
    expect(i.code).toBe(0);
    // Nothing but the loopback registry was asked, and only for memsearch's packages.
    for (const req of registry.seen) expect(req).toMatch(/^GET \/memsearch/);
    const binary = join(m.prefix, "lib", "node_modules", "memsearch", "node_modules", `memsearch-${HOST}`, "bin", "memsearch");
    expect(lstatSync(join(m.prefix, "bin", "memsearch")).isSymbolicLink()).toBe(true);

    await lifecycle(m, {
      binary,
      upgrade: async () => {
        registry.add(npmDir(next));
        const u = await npm(["install", "-g", `memsearch@${NEXT}`]);
        expect(u.code).toBe(0);
      },
      gone: [join(m.prefix, "lib", "node_modules", "memsearch"), join(m.prefix, "bin", "memsearch")],
    });
  }, 300_000);

  test("npm install -g --offline of the two tarballs themselves (before they are on a registry): one binary; uninstall removes both packages", async () => {
    const m = machine();
    const cache = tmp("ms-dist-npm-cache-");
    const env = { npm_config_cache: cache, npm_config_proxy: "http://127.0.0.1:9", npm_config_https_proxy: "http://127.0.0.1:9", npm_config_registry: "http://127.0.0.1:9/", npm_config_update_notifier: "false" };
    const tarballs = [join(current.dir, "npm", `memsearch-${HOST}-${VERSION}.tgz`), join(current.dir, "npm", `memsearch-${VERSION}.tgz`)];
    const i = await sh(["npm", "install", "-g", "--offline", "--no-audit", "--no-fund", "--prefix", m.prefix, ...tarballs], m, env);
    expect(i.code).toBe(0);
    const v = await sh(["memsearch", "--version"], m);
    expect(v.all.trim()).toBe(`memsearch, version ${VERSION}`);
    expect(binaries(m.prefix, m.home)).toEqual([join(m.prefix, "lib", "node_modules", `memsearch-${HOST}`, "bin", "memsearch")]);
    const un = await sh(["memsearch", "uninstall"], m, env);
    expect(un.code).toBe(0);
    expect(un.stdout).toContain(`ran npm uninstall -g --prefix ${m.prefix} memsearch memsearch-${HOST}`);
    expect(binaries(m.prefix, m.home)).toEqual([]);
    expect(readdirSync(join(m.prefix, "lib", "node_modules"))).toEqual([]);
  }, 120_000);

  test("the launcher passes arguments, streams and the exit code through, and says so when the platform package is missing", async () => {
    const m = machine();
    const x = tmp("ms-dist-launcher-");
    expect(Bun.spawnSync(["tar", "-xzf", join(current.dir, "npm", `memsearch-${VERSION}.tgz`), "-C", x]).exitCode).toBe(0);
    const launcher = join(x, "package", "bin", "memsearch.js");
    const missing = await sh(["node", launcher, "--version"], m);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe(`memsearch: the package memsearch-${HOST}, which holds the binary for this machine, is not installed (was npm told to omit optional dependencies?): run npm install -g memsearch again`);
    const plat = join(x, "package", "node_modules", `memsearch-${HOST}`);
    mkdirSync(plat, { recursive: true });
    expect(Bun.spawnSync(["tar", "-xzf", join(current.dir, "npm", `memsearch-${HOST}-${VERSION}.tgz`), "-C", plat, "--strip-components=1"]).exitCode).toBe(0);
    const bad = await sh(["node", launcher, "search"], m);
    expect(bad.code).not.toBe(0);
    const direct = await sh([join(plat, "bin", "memsearch"), "search"], m);
    expect(bad.code).toBe(direct.code);
    expect(bad.stderr).toBe(direct.stderr);
    const ok = await sh(["node", launcher, "search", "nothing here", "--json-output"], m);
    expect(ok.code).toBe(0);
    expect(Array.isArray(JSON.parse(ok.stdout))).toBe(true);
  }, 60_000);
});

describe("install.sh: the archive, for machines without Node", () => {
  test("install.sh, --version, install claude, a captured turn, search, upgrade, uninstall: one binary throughout", async () => {
    const m = machine();
    const bin = join(m.prefix, "bin");
    const archive = (b: Built) => join(b.dir, `memsearch-${b.version}-${HOST}.tar.gz`);
    const i = await sh(["sh", join(current.dir, "install.sh"), "--prefix", bin, archive(current)], m);
    expect(i.stderr).toBe("");
    expect(i.code).toBe(0);
    expect(i.stdout).toContain("memsearch install claude");
    await lifecycle(m, {
      binary: join(bin, "memsearch"),
      upgrade: async () => {
        const u = await sh(["sh", join(next.dir, "install.sh"), "--prefix", bin, archive(next)], m);
        expect(u.code).toBe(0);
        expect(u.stdout).toContain("the Claude Code plugin's hooks run this binary from their next event");
      },
      gone: [join(bin, "memsearch")],
    });
  }, 300_000);
});

test("the README's Upgrade and Uninstall sections name the commands these tests run", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = (title: string) => {
    const at = readme.indexOf(`\n## ${title}\n`);
    expect(at).toBeGreaterThan(0);
    const rest = readme.slice(at + title.length + 5);
    return rest.slice(0, rest.search(/\n## /) === -1 ? undefined : rest.search(/\n## /));
  };
  const upgrade = section("Upgrade");
  expect(upgrade).toContain("npm install -g memsearch@latest");
  expect(upgrade).toContain("sh install.sh memsearch-");
  expect(upgrade).toContain("memsearch install claude");
  const uninstall = section("Uninstall");
  expect(uninstall).toContain("memsearch uninstall");
  expect(uninstall).toContain("--purge");
});
