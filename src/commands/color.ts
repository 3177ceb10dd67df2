/**
 * Colour is for a person at a terminal, never for a program reading a pipe (the recall skill,
 * scripts, tests): a stream gets it only when it is a TTY or FORCE_COLOR asks, and never with
 * --no-color, NO_COLOR or FORCE_COLOR=0. chalk is loaded only when some stream gets colour, so
 * piped runs pay nothing for it.
 */
import { isTerminal } from "../core/stdio.ts";

type Style = (text: string) => string;
type Palette = Record<"bold" | "dim" | "red" | "green" | "yellow" | "cyan", Style>;

const plain: Style = (text) => text;
const uncoloured = (): Palette => ({ bold: plain, dim: plain, red: plain, green: plain, yellow: plain, cyan: plain });

/** Styles for stdout and for stderr, plain until `useColor` turns them on. */
export const out: Palette = uncoloured();
export const err: Palette = uncoloured();

/**
 * Whether a stream gets colour. `--no-color` is read from the raw arguments because yargs prints
 * its own usage errors before any handler sees the parsed flag. FORCE_COLOR wins over NO_COLOR,
 * as in Node, except under Claude Code (CLAUDECODE is set for its Bash tool and hooks): it may
 * set FORCE_COLOR for its own children, and escape codes in what Claude reads are noise.
 */
export function colorWanted(argv: readonly string[], env: Record<string, string | undefined>, isTTY: boolean): boolean {
  const end = argv.indexOf("--");
  if ((end < 0 ? argv : argv.slice(0, end)).includes("--no-color")) return false;
  const force = env.FORCE_COLOR;
  if (force === "0" || force === "false") return false;
  if (force !== undefined && !env.CLAUDECODE) return true;
  if (env.NO_COLOR) return false;
  return isTTY && env.TERM !== "dumb";
}

export async function useColor(argv: readonly string[]): Promise<void> {
  const toOut = colorWanted(argv, process.env, isTerminal(1));
  const toErr = colorWanted(argv, process.env, isTerminal(2));
  if (!toOut && !toErr) return;
  const { Chalk } = await import("chalk");
  // Basic colours only, which every colour terminal shows alike.
  const c = new Chalk({ level: 1 });
  const styles: Palette = { bold: c.bold, dim: c.dim, red: c.red, green: c.green, yellow: c.yellow, cyan: c.cyan };
  if (toOut) Object.assign(out, styles);
  if (toErr) Object.assign(err, styles);
}
