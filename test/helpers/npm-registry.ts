/**
 * A package registry on 127.0.0.1 for the real npm client, serving only the tarballs it is given
 * (what `npm pack` wrote): each package's document (every version's package.json, with its
 * tarball's address, sha512 integrity and sha1) and the tarballs themselves; anything else is a
 * 404, as the public registry answers for a package that does not exist. npm is pointed at it, and
 * at a dead proxy for every other address, so an install here never leaves the machine.
 */
import { readFileSync } from "node:fs";
import { basename } from "node:path";

export interface Registry {
  url: string;
  /** Requests seen, as `METHOD path` (what npm asked for). */
  seen: string[];
  /** Serve these tarballs too (a newer version, say). */
  add(tarballs: string[]): void;
  /** The npm settings that install from this registry alone, with a cache of their own. */
  npmEnv(cache: string): Record<string, string>;
  stop(): void;
}

interface Entry {
  manifest: Record<string, unknown> & { name: string; version: string };
  file: string;
  integrity: string;
  shasum: string;
}

function packageJsonOf(tarball: string): Entry["manifest"] {
  const p = Bun.spawnSync(["tar", "-xzOf", tarball, "package/package.json"], { stdout: "pipe", stderr: "pipe" });
  if (p.exitCode !== 0) throw new Error(`no package/package.json in ${tarball}: ${p.stderr.toString()}`);
  return JSON.parse(p.stdout.toString());
}

export function startRegistry(tarballs: string[]): Registry {
  const packages = new Map<string, Map<string, Entry>>();
  const seen: string[] = [];
  const add = (files: string[]) => {
    for (const file of files) {
      const bytes = readFileSync(file);
      const manifest = packageJsonOf(file);
      const integrity = `sha512-${new Bun.CryptoHasher("sha512").update(bytes).digest("base64")}`;
      const shasum = new Bun.CryptoHasher("sha1").update(bytes).digest("hex");
      if (!packages.has(manifest.name)) packages.set(manifest.name, new Map());
      packages.get(manifest.name)!.set(manifest.version, { manifest, file, integrity, shasum });
    }
  };
  add(tarballs);
  const newest = (versions: Map<string, Entry>) => [...versions.keys()].sort((a, b) => Bun.semver.order(a, b)).at(-1)!;
  const server: Bun.Server<undefined> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req): Response {
      const path = decodeURIComponent(new URL(req.url).pathname);
      seen.push(`${req.method} ${path}`);
      const tar = /^\/(.+)\/-\/([^/]+\.tgz)$/.exec(path);
      if (tar) {
        const entry = [...(packages.get(tar[1]!)?.values() ?? [])].find((e) => basename(e.file) === tar[2]);
        return entry ? new Response(Bun.file(entry.file), { headers: { "content-type": "application/octet-stream" } }) : new Response("not found", { status: 404 });
      }
      const versions = packages.get(path.slice(1));
      if (!versions) return Response.json({ error: "Not found" }, { status: 404 });
      const origin = `http://127.0.0.1:${server.port}`;
      const doc = {
        name: path.slice(1),
        "dist-tags": { latest: newest(versions) },
        versions: Object.fromEntries(
          [...versions].map(([v, e]) => [v, { ...e.manifest, _id: `${e.manifest.name}@${v}`, dist: { tarball: `${origin}/${e.manifest.name}/-/${basename(e.file)}`, integrity: e.integrity, shasum: e.shasum } }]),
        ),
      };
      return Response.json(doc);
    },
  });
  const url = `http://127.0.0.1:${server.port}/`;
  return {
    url,
    seen,
    add,
    npmEnv: (cache) => ({
      npm_config_registry: url,
      npm_config_cache: cache,
      // Any other address goes to a closed port: nothing leaves the machine.
      npm_config_proxy: "http://127.0.0.1:9",
      npm_config_https_proxy: "http://127.0.0.1:9",
      npm_config_noproxy: "127.0.0.1",
      npm_config_audit: "false",
      npm_config_fund: "false",
      npm_config_update_notifier: "false",
      npm_config_userconfig: `${cache}/npmrc`,
      npm_config_globalconfig: `${cache}/npmrc-global`,
    }),
    stop: () => server.stop(true),
  };
}
