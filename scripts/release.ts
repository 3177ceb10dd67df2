/**
 * `bun run release`: cross-compile memsearch for every supported platform into dist/release/.
 *
 * Per platform it writes the bare binary `memsearch-<version>-<platform>[.exe]`, an archive
 * `memsearch-<version>-<platform>.tar.gz` (`.zip` for Windows when `zip` is installed) holding
 * `memsearch-<version>-<platform>/{memsearch[.exe], README.md, LICENSE, install.sh}`, and the npm
 * package of that platform, `npm/memsearch-<platform>-<version>.tgz` (the binary in its bin/, `os`
 * and `cpu` set). The npm main package, `npm/memsearch-<version>.tgz`, holds the launcher
 * (scripts/npm/memsearch.js) and names every platform package as an optional dependency, the way
 * esbuild, biome and @openai/codex ship native binaries: npm installs only the one that fits.
 * The tarballs are what `npm pack` writes (and what `npm publish <tarball>` publishes). The Claude
 * Code plugin is in the binary itself (`memsearch install claude` writes it), so nothing ships a
 * second copy of the binary. `install.sh` and a `SHA256SUMS` (sha256sum format) covering every
 * file are written beside them.
 *
 *   bun scripts/release.ts [--targets linux-x64,darwin-arm64] [--host] [--out DIR]
 *
 * Cross targets fetch their Bun runtime from the npm registry (cached in ~/.bun/install/cache);
 * a target whose runtime can't be fetched fails with a one-line message, the others are still
 * built, and the exit code is 1.
 */
import { chmodSync, copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import pkg from "../package.json" with { type: "json" };
import { build } from "./build.ts";

const ROOT = resolve(import.meta.dir, "..");

export const PLATFORMS = {
  "linux-x64": { target: "bun-linux-x64", exe: "", os: "linux", cpu: "x64", label: "Linux x64" },
  "linux-arm64": { target: "bun-linux-arm64", exe: "", os: "linux", cpu: "arm64", label: "Linux arm64" },
  "darwin-x64": { target: "bun-darwin-x64", exe: "", os: "darwin", cpu: "x64", label: "macOS x64" },
  "darwin-arm64": { target: "bun-darwin-arm64", exe: "", os: "darwin", cpu: "arm64", label: "macOS arm64" },
  "windows-x64": { target: "bun-windows-x64", exe: ".exe", os: "win32", cpu: "x64", label: "Windows x64" },
} as const;

/** The npm main package's name: `memsearch` is free on the registry, and it is what people type. */
export const NPM_NAME = "memsearch";
/** A platform package's name: unscoped like the main one, so publishing needs no npm organisation. */
export const npmPlatformName = (platform: Platform) => `${NPM_NAME}-${platform}`;
export type Platform = keyof typeof PLATFORMS;

export function hostPlatform(): string {
  const os = process.platform === "win32" ? "windows" : process.platform;
  return `${os}-${process.arch}`;
}

/**
 * Bytecode on cross targets: Bun 1.4.5 accepts it and embeds bytecode (+~1.9 MB), but that
 * bytecode is produced by the *host* JavaScriptCore and is not portable across OS/arch/libc:
 * cross-compiled bytecode executables segfault on launch on the target (oven-sh/bun#18416,
 * #24144, crash in JSC CachedTypes decode). We cannot run the foreign binaries here to prove
 * otherwise, so cross targets are built as the host is but without bytecode (start-up ~45 ms
 * instead of ~20 ms); the host target is exactly `bun run build`.
 */
async function compile(platform: Platform, outfile: string): Promise<string | null> {
  const { target } = PLATFORMS[platform];
  const host = platform === hostPlatform();
  try {
    await build(outfile, host ? undefined : target, { bytecode: host });
  } catch (err) {
    const msg = firstError(String((err as Error).message ?? err)) ?? "bun build failed";
    if (/Failed to download|download/i.test(msg)) return `cannot fetch the Bun runtime for ${target} from the npm registry (${msg.replace(/^error:\s*/i, "")})`;
    return msg;
  }
  return existsSync(outfile) ? null : "bun build wrote no executable";
}

function firstError(text: string): string | null {
  const lines = text.split("\n").map((l) => l.trim()).filter(Boolean);
  return lines.find((l) => /error|fail/i.test(l)) ?? lines.at(-1) ?? null;
}

function hardlinkOrCopy(src: string, dest: string): void {
  try {
    linkSync(src, dest); // tar stores the second name as a link: the archive holds the binary once
  } catch {
    copyFileSync(src, dest);
  }
  chmodSync(dest, 0o755);
}

function hasCommand(cmd: string): boolean {
  return Bun.which(cmd) !== null;
}

async function run(cmd: string[], cwd: string): Promise<void> {
  const proc = Bun.spawn(cmd, { cwd, stdout: "pipe", stderr: "pipe" });
  const [errText, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${cmd[0]} failed (${code}): ${errText.trim()}`);
}

let gnuTar: boolean | undefined;
async function tarFlags(): Promise<string[]> {
  if (gnuTar === undefined) {
    const p = Bun.spawnSync(["tar", "--version"]);
    gnuTar = p.stdout.toString().includes("GNU tar");
  }
  // Normalised owners and order, so archives don't leak the builder's user and are stable.
  return gnuTar ? ["--owner=0", "--group=0", "--numeric-owner", "--sort=name"] : [];
}

/** Stage the archive tree for one platform and pack it; returns the archive file name. */
async function archive(platform: Platform, binary: string, outDir: string, version: string): Promise<string> {
  const { exe } = PLATFORMS[platform];
  const top = `memsearch-${version}-${platform}`;
  const stage = join(outDir, `.stage-${platform}`);
  rmSync(stage, { recursive: true, force: true });
  const dir = join(stage, top);
  mkdirSync(dir, { recursive: true });

  // The binary once: it carries the Claude Code plugin (memsearch install claude writes it).
  hardlinkOrCopy(binary, join(dir, `memsearch${exe}`));

  const readme = join(ROOT, "README.md");
  if (existsSync(readme)) copyFileSync(readme, join(dir, "README.md"));
  else writeFileSync(join(dir, "README.md"), fallbackReadme(version, platform));
  for (const name of ["LICENSE", "LICENSE.md", "LICENSE.txt"]) {
    if (existsSync(join(ROOT, name))) copyFileSync(join(ROOT, name), join(dir, name));
  }
  copyFileSync(join(import.meta.dir, "install.sh"), join(dir, "install.sh"));
  chmodSync(join(dir, "install.sh"), 0o755);

  let name: string;
  if (platform.startsWith("windows") && hasCommand("zip")) {
    name = `${top}.zip`;
    await run(["zip", "-q", "-r", "-X", join(outDir, name), top], stage);
  } else {
    name = `${top}.tar.gz`;
    await run(["tar", ...(await tarFlags()), "-czf", join(outDir, name), top], stage);
  }
  rmSync(stage, { recursive: true, force: true });
  return name;
}

function fallbackReadme(version: string, platform: string): string {
  return `# memsearch ${version} (${platform})

Persistent, searchable, fully offline memory for Claude Code.

Install (verifies the archive against SHA256SUMS, installs the binary into ~/.local/bin), then
wire it into Claude Code:

    ./install.sh /path/to/memsearch-${version}-${platform}.tar.gz
    memsearch install claude

Run \`./install.sh --help\` for options.
`;
}

export async function sha256File(path: string): Promise<string> {
  const hasher = new Bun.CryptoHasher("sha256");
  const reader = Bun.file(path).stream().getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    hasher.update(value);
  }
  return hasher.digest("hex");
}

function fmtSize(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
}

const RELEASE_FILE = /^(memsearch-.+|SHA256SUMS|install\.sh|\.stage-.+|npm)$/;

/** `npm pack` in `dir`, the tarball written into `dest`; returns its file name. */
async function npmPack(dir: string, dest: string): Promise<string> {
  const npm = Bun.which("npm");
  if (!npm) throw new Error("npm is not on PATH: the npm packages need `npm pack`");
  const proc = Bun.spawn([npm, "pack", "--json", "--pack-destination", dest], { cwd: dir, stdout: "pipe", stderr: "pipe", env: { ...process.env, npm_config_update_notifier: "false" } });
  const [out, errText, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`npm pack failed (${code}): ${firstError(errText) ?? ""}`);
  const packed = JSON.parse(out) as { filename: string }[];
  return basename(packed[0]!.filename);
}

function writeJson(path: string, value: unknown): void {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

const npmCommon = (version: string) => ({ version, license: pkg.license, ...("repository" in pkg ? { repository: (pkg as { repository: unknown }).repository } : {}) });

/** The npm package of one platform: the binary in bin/, `os` and `cpu` so npm installs it only there. */
async function npmPlatformPackage(platform: Platform, binary: string, npmDir: string, version: string): Promise<string> {
  const { exe, os, cpu, label } = PLATFORMS[platform];
  const stage = join(npmDir, `.stage-${platform}`);
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(join(stage, "bin"), { recursive: true });
  hardlinkOrCopy(binary, join(stage, "bin", `memsearch${exe}`));
  writeJson(join(stage, "package.json"), {
    name: npmPlatformName(platform),
    ...npmCommon(version),
    description: `The memsearch binary for ${label}; installed by the ${NPM_NAME} package, which runs it`,
    os: [os],
    cpu: [cpu],
    files: ["bin/"],
    preferUnplugged: true,
  });
  writeFileSync(join(stage, "README.md"), `# ${npmPlatformName(platform)}\n\nThe memsearch ${version} binary for ${label}. Install \`${NPM_NAME}\` instead: \`npm install -g ${NPM_NAME}\` picks this package on this platform.\n`);
  try {
    return await npmPack(stage, npmDir);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** The npm main package: the launcher as \`memsearch\`, every platform package as an optional dependency. */
async function npmMainPackage(npmDir: string, version: string): Promise<string> {
  const stage = join(npmDir, ".stage-main");
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(join(stage, "bin"), { recursive: true });
  copyFileSync(join(import.meta.dir, "npm", "memsearch.js"), join(stage, "bin", "memsearch.js"));
  chmodSync(join(stage, "bin", "memsearch.js"), 0o755);
  writeJson(join(stage, "package.json"), {
    name: NPM_NAME,
    ...npmCommon(version),
    description: pkg.description,
    keywords: ["claude-code", "memory", "codex", "gemini-cli", "opencode", "copilot", "offline", "search"],
    bin: { memsearch: "bin/memsearch.js" },
    files: ["bin/"],
    engines: { node: ">=18" },
    optionalDependencies: Object.fromEntries((Object.keys(PLATFORMS) as Platform[]).map((p) => [npmPlatformName(p), version])),
  });
  const readme = join(ROOT, "README.md");
  if (existsSync(readme)) copyFileSync(readme, join(stage, "README.md"));
  for (const name of ["LICENSE", "LICENSE.md", "LICENSE.txt"]) if (existsSync(join(ROOT, name))) copyFileSync(join(ROOT, name), join(stage, name));
  try {
    return await npmPack(stage, npmDir);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

export async function release(opts: { platforms: Platform[]; outDir: string; version?: string }): Promise<{ files: string[]; failed: string[] }> {
  const version = opts.version ?? pkg.version;
  const outDir = resolve(opts.outDir);
  const npmDir = join(outDir, "npm");
  mkdirSync(outDir, { recursive: true });
  // A release directory describes one run: drop our own files from earlier runs (nothing else).
  for (const f of readdirSync(outDir)) if (RELEASE_FILE.test(f)) rmSync(join(outDir, f), { recursive: true, force: true });

  const files: string[] = [];
  const failed: string[] = [];
  for (const platform of opts.platforms) {
    const t0 = performance.now();
    const bin = join(outDir, `memsearch-${version}-${platform}${PLATFORMS[platform].exe}`);
    const err = await compile(platform, bin);
    if (err) {
      console.error(`✗ ${platform}: ${err}`);
      failed.push(platform);
      rmSync(bin, { force: true });
      continue;
    }
    files.push(basename(bin));
    try {
      files.push(await archive(platform, bin, outDir, version));
    } catch (e) {
      console.error(`✗ ${platform}: packing the archive failed: ${(e as Error).message}`);
      failed.push(platform);
      continue;
    }
    try {
      mkdirSync(npmDir, { recursive: true });
      files.push(`npm/${await npmPlatformPackage(platform, bin, npmDir, version)}`);
    } catch (e) {
      console.error(`✗ ${platform}: packing the npm package failed: ${(e as Error).message}`);
      failed.push(platform);
      continue;
    }
    console.error(`✓ ${platform} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  }
  try {
    mkdirSync(npmDir, { recursive: true });
    files.push(`npm/${await npmMainPackage(npmDir, version)}`);
  } catch (e) {
    console.error(`✗ npm: packing the main package failed: ${(e as Error).message}`);
    failed.push("npm");
  }

  copyFileSync(join(import.meta.dir, "install.sh"), join(outDir, "install.sh"));
  chmodSync(join(outDir, "install.sh"), 0o755);
  files.push("install.sh");

  files.sort();
  const lines: string[] = [];
  for (const f of files) lines.push(`${await sha256File(join(outDir, f))}  ${f}`);
  writeFileSync(join(outDir, "SHA256SUMS"), lines.join("\n") + "\n");
  files.push("SHA256SUMS");
  return { files, failed };
}

function parsePlatforms(targets: string | undefined, host: boolean): Platform[] {
  if (host) {
    const h = hostPlatform();
    if (!(h in PLATFORMS)) throw new Error(`host platform ${h} is not a release platform (${Object.keys(PLATFORMS).join(", ")})`);
    return [h as Platform];
  }
  if (!targets) return Object.keys(PLATFORMS) as Platform[];
  const list = targets.split(",").map((t) => t.trim()).filter(Boolean);
  const bad = list.filter((t) => !(t in PLATFORMS));
  if (bad.length) throw new Error(`unknown target ${bad.join(", ")} (choose from ${Object.keys(PLATFORMS).join(", ")})`);
  return [...new Set(list)] as Platform[];
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      targets: { type: "string" },
      host: { type: "boolean", default: false },
      out: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(`usage: bun scripts/release.ts [--targets ${Object.keys(PLATFORMS).join(",")}] [--host] [--out DIR]`);
    process.exit(0);
  }
  let platforms: Platform[];
  try {
    platforms = parsePlatforms(values.targets, values.host);
  } catch (e) {
    console.error(`release: ${(e as Error).message}`);
    process.exit(2);
  }
  const outDir = resolve(values.out ?? join(ROOT, "dist", "release"));
  const t0 = performance.now();
  console.error(`memsearch ${pkg.version}: building ${platforms.join(", ")} into ${relative(process.cwd(), outDir) || "."}`);
  const { files, failed } = await release({ platforms, outDir });

  const width = Math.max(...files.map((f) => f.length), 4);
  console.log(`${"file".padEnd(width)}  ${"size".padStart(9)}`);
  for (const f of files) console.log(`${f.padEnd(width)}  ${fmtSize(statSync(join(outDir, f)).size).padStart(9)}`);
  const secs = ((performance.now() - t0) / 1000).toFixed(1);
  if (failed.length) {
    console.error(`release: ${failed.length} target(s) failed: ${failed.join(", ")} (${secs} s)`);
    process.exit(1);
  }
  console.error(`release: ${platforms.length} target(s) in ${secs} s → ${outDir}`);
  console.log(`\nWhat people download: npm install -g ${NPM_NAME} (npm/: publish each platform's tarball, then the main one), or the archive of their platform with install.sh and SHA256SUMS (sh install.sh memsearch-${pkg.version}-<platform>.tar.gz).`);
}
