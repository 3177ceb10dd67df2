import { MemsearchError, oneLine } from "../core/errors.ts";
import { writeErr, writeOut } from "../core/stdio.ts";
import { stripControls } from "../core/text.ts";
import { err } from "./color.ts";

/**
 * stdout belongs to command results only, so `--json-output` stays valid JSON; the embedder
 * keeps the ollama client's stray console.log off stdout while it runs.
 */
export function print(text = ""): void {
  writeOut(text.endsWith("\n") ? text : text + "\n");
}

/**
 * JSON results, with one key casing in every command's output: snake_case, as the reference's
 * (`chunk_hash`, `start_line`). The core's objects are camelCase; their field names are turned
 * here, once, so no command can print the other casing. Only a key written as an identifier with
 * capitals is a field name: a key that is data (a path, a config key `search.top_k`, a session
 * id, a turn kind `local-command`) has none, and is kept as it is.
 */
export function printJson(value: unknown): void {
  print(JSON.stringify(snakeKeys(value), null, 2));
}

/** One JSON object on one line, keys as printJson's: for a command that reports events as they come (`watch --json`). */
export function printJsonLine(value: unknown): void {
  print(JSON.stringify(snakeKeys(value)));
}

const CAMEL = /^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$/;

export function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== "object" || value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[CAMEL.test(k) ? k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : k] = snakeKeys(v);
  return out;
}

/**
 * One-line notice for the user on stderr (never mixed into results). Messages echo what the user
 * or a file gave (a key, a path, a turn id): its escape sequences and control characters would
 * recolour or rewrite the terminal, so they go before our own colour is added.
 */
export function notice(text: string): void {
  writeErr(stripControls(text).replace(/^Error:/, err.red(err.bold("Error:"))).replace(/^Warning:/, err.yellow("Warning:")) + "\n");
}

/** Wrap a command handler: typed errors become `Error: …` on stderr and their exit code. */
export function action<A>(fn: (args: A) => Promise<void> | void): (args: A) => Promise<void> {
  return async (args: A) => {
    try {
      await fn(args);
    } catch (e) {
      process.exitCode = fail(e);
    }
  };
}

export function fail(e: unknown): number {
  if (e instanceof MemsearchError) {
    notice(`Error: ${oneLine(e)}`);
    return e.exitCode;
  }
  notice(`Error: ${oneLine(e)}`);
  if (process.env.MEMSEARCH_DEBUG) notice(String((e as Error)?.stack ?? e));
  return 1;
}
