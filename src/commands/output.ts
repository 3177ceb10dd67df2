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

export function printJson(value: unknown): void {
  print(JSON.stringify(value, null, 2));
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
