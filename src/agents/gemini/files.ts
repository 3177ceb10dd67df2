/**
 * Which Gemini CLI chats memsearch reads for a project: `.jsonl` files under
 * `<gemini home>/tmp/<project>/chats/`, plain files (a link could point anywhere), of a project
 * folder that is this project (by the rule every agent shares: the git top level). Gemini CLI
 * writes the folder a project slot belongs to in `<slot>/.project_root`; the chat's first line
 * carries the sha256 of it too.
 */
import { sha256Hex } from "../../core/text.ts";
import { readdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { readTextQuiet } from "../../core/fsutil.ts";
import { realOr } from "../../core/project.ts";
import { ForeignTranscriptError, projectOfCwd, sameProject } from "../../transcript/files.ts";
import { firstJsonLine, requirePlainTranscript, transcriptPath } from "../files.ts";

const HEAD_BYTES = 64 * 1024;

/** The folder Gemini CLI keeps its settings and chats in (`GEMINI_CLI_HOME` stands for the home that holds it). */
export function geminiHome(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.GEMINI_CLI_HOME || env.HOME || homedir(), ".gemini");
}


/** The path below Gemini CLI's `tmp` folder, when it lies there. */
function underTmp(path: string, env?: NodeJS.ProcessEnv): string[] | undefined {
  const abs = resolve(path);
  for (const d of new Set([join(geminiHome(env), "tmp"), join(realOr(geminiHome(env)), "tmp")])) {
    const rel = relative(d, abs);
    if (rel && !rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel)) return rel.split(sep);
  }
  return undefined;
}

/** True when the path lies in a project's chats folder of Gemini CLI (whether or not it exists). */
export function isGeminiChatPath(path: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const parts = underTmp(path, env);
  return parts !== undefined && parts.length >= 3 && parts[1] === "chats";
}

/** The chat belongs to the project at `root`: its slot's `.project_root`, else its first line's hash. */
function ofProject(path: string, slot: string, root: string): boolean {
  const recorded = readTextQuiet(join(slot, ".project_root"))?.trim();
  if (recorded && isAbsolute(recorded)) return sameProject(projectOfCwd(recorded), root);
  try {
    const hash = (firstJsonLine(path, HEAD_BYTES) as { projectHash?: unknown } | undefined)?.projectHash;
    return typeof hash === "string" && hash === sha256Hex(root);
  } catch {
    return false;
  }
}

/** Throws unless `path` is a Gemini CLI chat of this project (of any project with `anyProject`). */
export function checkProjectChat(path: string, root: string, o: { env?: NodeJS.ProcessEnv; anyProject?: boolean } = {}): void {
  const abs = transcriptPath(path);
  const parts = underTmp(abs, o.env);
  if (!parts || !isGeminiChatPath(abs, o.env)) throw new ForeignTranscriptError(`refused: ${path} is not a Gemini CLI chat (not under ${join(geminiHome(o.env), "tmp")})`);
  requirePlainTranscript(abs, path);
  if (o.anyProject) return;
  const slot = join(abs.slice(0, abs.length - join(...parts).length), parts[0]!);
  if (!ofProject(abs, slot, root)) throw new ForeignTranscriptError(`refused: ${path} is another project's chat (this project: ${root})`, true);
}

/** Every chat of Gemini CLI's project slots on this machine (`<tmp>/<slot>/chats/*.jsonl`). */
export function allChats(env: NodeJS.ProcessEnv = process.env): string[] {
  const tmp = join(geminiHome(env), "tmp");
  const out: string[] = [];
  let slots: string[];
  try {
    slots = readdirSync(tmp).sort();
  } catch {
    return out;
  }
  for (const slot of slots) {
    let names: string[];
    try {
      names = readdirSync(join(tmp, slot, "chats")).sort();
    } catch {
      continue;
    }
    for (const name of names) if (name.endsWith(".jsonl")) out.push(join(tmp, slot, "chats", name));
  }
  return out;
}

/** The folder Gemini CLI recorded for a chat's project slot (`<slot>/.project_root`), when it did. */
export function chatProjectRoot(path: string): string | undefined {
  const recorded = readTextQuiet(join(dirname(dirname(path)), ".project_root"))?.trim();
  return recorded && isAbsolute(recorded) && !recorded.includes("\0") ? recorded : undefined;
}
