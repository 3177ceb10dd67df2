/**
 * Colour is for a person at a terminal, never for a program reading a pipe (the recall skill,
 * scripts, tests): a stream gets it only when it is a TTY or FORCE_COLOR asks, and never with
 * --color=never (--no-color), NO_COLOR or FORCE_COLOR=0; --color=always gives it everywhere.
 * chalk is loaded only when some stream gets colour, so piped runs pay nothing for it.
 */
import { UsageError } from "../core/errors.ts";
import { isTerminal } from "../core/stdio.ts";

export const COLOR_MODES = ["auto", "always", "never"] as const;
export type ColorMode = (typeof COLOR_MODES)[number];

const isMode = (s: string | undefined): s is ColorMode => (COLOR_MODES as readonly string[]).includes(s ?? "");

/**
 * The line with its colour flag in one form, `--color=WHEN`, as ls and grep read it: a bare
 * `--color` means always (yargs would take the next word, a command or a query, for its value),
 * `--color never` is `--color=never`. Nothing after `--` is touched: it is a query.
 */
export function colorArgs(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") return [...out, ...argv.slice(i)];
    if (a !== "--color") out.push(a);
    else if (isMode(argv[i + 1])) out.push(`--color=${argv[++i]}`);
    else out.push("--color=always");
  }
  return out;
}

/** What the line asks (the last colour flag before `--`): auto without one. UsageError for a value that is no mode. */
export function colorMode(argv: readonly string[]): ColorMode {
  let mode: ColorMode = "auto";
  for (const a of colorArgs(argv)) {
    if (a === "--") break;
    if (a === "--no-color") mode = "never";
    else if (a.startsWith("--color=")) {
      const v = a.slice("--color=".length);
      if (!isMode(v)) throw new UsageError(`--color must be auto, always or never (got ${JSON.stringify(v)})`);
      mode = v;
    }
  }
  return mode;
}

type Style = (text: string) => string;
type Palette = Record<"bold" | "dim" | "red" | "green" | "yellow" | "cyan", Style>;

const plain: Style = (text) => text;
const uncoloured = (): Palette => ({ bold: plain, dim: plain, red: plain, green: plain, yellow: plain, cyan: plain });

/** Styles for stdout and for stderr, plain until `useColor` turns them on. */
export const out: Palette = uncoloured();
export const err: Palette = uncoloured();

/**
 * Whether a stream gets colour. `--color` is read from the raw arguments because yargs prints
 * its own usage errors before any handler sees the parsed flag; it wins over the environment. FORCE_COLOR wins over NO_COLOR,
 * as in Node, except under Claude Code (CLAUDECODE is set for its Bash tool and hooks): it may
 * set FORCE_COLOR for its own children, and escape codes in what Claude reads are noise.
 */
export function colorWanted(argv: readonly string[], env: Record<string, string | undefined>, isTTY: boolean): boolean {
  const mode = colorMode(argv);
  if (mode !== "auto") return mode === "always";
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
