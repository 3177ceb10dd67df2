import { existsSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import { loadContext } from "../core/context.ts";
import { InputError, NotFoundError, UsageError } from "../core/errors.ts";
import { holdsProject, nameOutsidePaths, projectPlaces } from "../core/places.ts";
import type { IndexReport } from "../index/indexer.ts";
import type { OllamaEmbedder } from "../index/embedder.ts";
import { curatedFiles } from "../agents/curated.ts";
import { checkFlag, embeddingFlags, embeddingOverrides, jsonFlag } from "./common.ts";
import { command } from "./declare.ts";
import { noteProject } from "./projects.ts";
import { cleanedNotice, rebuiltNotice, skippedNotice } from "./notices.ts";
import { notice, print, printJson } from "./output.ts";

export const indexCommand = command({
  command: "index [paths..]",
  describe: "Index markdown files or folders (default: the project's memory folder)",
  flags: {
    ...embeddingFlags,
    ...jsonFlag,
    paths: { positional: true, type: "string", array: true, default: [] },
    force: { type: "boolean", default: false, describe: "Rebuild the index from scratch" },
    "ignore-file": { type: "string", array: true, describe: "Ignore file to honour in each folder (repeatable), e.g. .gitignore" },
    exclude: { type: "string", array: true, describe: "Root-relative gitignore pattern to skip (repeatable)" },
    "max-chunk-size": { type: "number", describe: "Largest chunk in characters" },
    "above-project": { type: "boolean", default: false, describe: "Allow a folder that holds the project (your home, /): every markdown file below it is indexed" },
  },
  run: async (a) => {
    const ctx = loadContext({ ...embeddingOverrides(a), "chunking.max_chunk_size": checkFlag("--max-chunk-size", "chunking.max_chunk_size", a.maxChunkSize) });
    // With no paths: the memory folder and Claude Code's curated files (none when turned off, so
    // those indexed before leave the index).
    const curated = a.paths.length ? undefined : ctx.config["indexing.curated"] ? curatedFiles(ctx.project.root).files.map((f) => f.path) : [];
    const paths = a.paths.length ? a.paths.map((p) => resolve(p)) : existsSync(ctx.project.memoryDir) ? [ctx.project.memoryDir] : [];
    if (!a.paths.length && !existsSync(ctx.project.memoryDir) && !curated?.length) {
      // A project without memory yet is not an error: the Stop hook writes the first notes.
      notice(`Notice: no memory yet in ${ctx.project.memoryDir}; notes appear there after Claude Code turns`);
      return a.jsonOutput ? printJson({ indexed_chunks: 0, total_chunks: 0 }) : print("Indexed 0 chunks.");
    }
    for (const p of paths) if (!existsSync(p)) throw new NotFoundError(`path not found: ${p}`);
    const above = paths.find((p) => holdsProject(p, ctx.project.root));
    if (above && !a.aboveProject) throw new UsageError(`${asGiven(above)} holds the project ${ctx.project.root}: every markdown file below it would be indexed into this project's memory; give a folder inside it, or --above-project if that is what you want`);
    // A path outside the project is the user's to name: recorded on this machine, so the index keeps what it holds.
    if (a.paths.length) await nameOutsidePaths(ctx.project, paths);
    const [{ embedderFor }, { indexPaths }, { withIndexLock }] = await Promise.all([import("../index/embedder.ts"), import("../index/indexer.ts"), import("../core/lock.ts")]);
    const embedder = embedderFor(ctx.config);
    const run = (force: boolean) =>
      withIndexLock(ctx.project.indexDir, () =>
        indexPaths({
          paths,
          indexDir: ctx.project.indexDir,
          config: ctx.config,
          embedder,
          force,
          ignoreFiles: a.ignoreFile,
          exclude: a.exclude,
          places: projectPlaces(ctx.project, ctx.env),
          // The user's own command: it merges the segments when a merge is due.
          merge: "due",
          ...(curated ? { curated } : {}),
        }),
      );
    let report = await run(a.force);
    if (report.everyPathSkipped) {
      // Only why: the state of vectors elsewhere in the index is beside the point here.
      for (const f of report.skippedFiles) notice(skippedNotice(asGiven(f.path), f.reason));
      throw new InputError("nothing to index: every path given was skipped");
    }
    const drift = embedder ? await dimensionDrift(report, embedder.model, () => embedderFor(ctx.config)!, { show: ctx.config["embedding.query_timeout_ms"], embed: ctx.config["embedding.timeout_ms"] }) : undefined;
    // A rebuild starts empty and indexes what this run scans: with paths named, the memory
    // folder's notes would leave the index, so the whole run is the user's to ask for.
    if (drift?.confirmed === false) notice(`Warning: ${drift.reason}, but no vector could be had to confirm it: vector search may be off; 'memsearch index --force' rebuilds the index`);
    else if (drift && a.paths.length) notice(`Warning: ${drift.reason}: vector search is off until 'memsearch index' rebuilds the index`);
    else if (drift) report = { ...(await run(true)), rebuilt: drift.reason };
    for (const line of indexNotices(report, ctx.config["embedding.model"])) notice(line);
    await noteProject(ctx.project);
    if (a.jsonOutput) printJson(report);
    else print(`Indexed ${report.indexedChunks} chunks.`);
  },
});

/** One line each: a rebuilt index, files skipped, cleaned or failed, vectors missing and why. */
export function indexNotices(r: IndexReport, model: string): string[] {
  const out: string[] = [];
  if (r.rebuilt) out.push(rebuiltNotice(r.rebuilt, r.totalChunks));
  for (const f of r.skippedFiles ?? []) out.push(skippedNotice(f.named ? asGiven(f.path) : f.path, f.reason));
  for (const f of r.cleanedFiles ?? []) out.push(cleanedNotice(f.path, f.cleaned, f.dropped));
  for (const f of r.forgottenBack ?? []) out.push(forgottenBackNotice(f.path, f.turns));
  for (const f of r.failedFiles) out.push(`Warning: could not index ${f.path}: ${f.error}`);
  if (r.vectors === "off") out.push("Notice: embeddings are off (embedding.provider = none); search uses BM25 only");
  else if (r.embedderWarning) out.push(`Warning: ${r.embedderWarning}; ${r.missingVectors} of the index's ${r.totalChunks} chunks have no vector yet (keyword search only until an index run adds them)`);
  else if (r.missingVectors > 0) out.push(`Warning: ${r.missingVectors} chunks have no '${model}' vector yet`);
  return out;
}

/**
 * Why the index must be rebuilt though no file changed: the model now gives vectors of another
 * size. A run with nothing to embed never asks Ollama, so without this the index would keep
 * vectors no query can be compared with (vector search off) while the README promises that a
 * model switch rebuilds on the next `memsearch index`. A run that embedded met the size already
 * (and rebuilt); an Ollama that cannot answer changes nothing, as before.
 */
async function dimensionDrift(r: IndexReport, model: string, fresh: () => OllamaEmbedder, timeoutMs: { show: number; embed: number }): Promise<{ reason: string; confirmed: boolean } | undefined> {
  if (r.vectors !== "on" || r.dimension === undefined || r.embedded > 0 || r.embedderWarning) return undefined;
  // Each question on an embedder of its own: an embedder keeps the first size it meets and
  // refuses any other, and the rebuild's must meet the vectors as they come.
  const shown = await fresh().probe(timeoutMs.show);
  if (!shown.ok || shown.dim === r.dimension) return undefined;
  // The size the server reports is confirmed by a vector: one whose metadata contradicts its
  // vectors would otherwise rebuild the index, without vectors, on every other run. A model just
  // pulled loads on this first embedding, so it is given an indexing request's time.
  let real: number;
  try {
    real = (await fresh().embedQuery("memsearch", timeoutMs.embed)).length;
  } catch {
    return { reason: `'${model}' reports ${shown.dim}-d vectors and the index holds ${r.dimension}-d ones`, confirmed: false };
  }
  if (real !== shown.dim || real === r.dimension) return undefined;
  return { reason: `'${model}' now gives ${real}-d vectors and the index held ${r.dimension}-d ones`, confirmed: true };
}

/** Forgotten notes a pull or a checkout brought back into a daily file: left out, and how to keep one. */
function forgottenBackNotice(path: string, turns: string[]): string {
  const n = turns.length;
  return `memsearch: ${n === 1 ? "1 forgotten note is" : `${n} forgotten notes are`} back in ${path} (a pull or a checkout brought ${n === 1 ? "it" : "them"}): left out of the index ('memsearch forget --undo ${n === 1 ? turns[0] : "<turn>"}' keeps ${n === 1 ? "it" : "one"})`;
}

/** A path the user named, shown relative to the working directory when it lies inside it. */
function asGiven(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}
