/**
 * Each command declares its flags once, as a table. yargs gets its builder from it, the handler
 * its argument type, and `search`'s fast path (cli.ts) its parser, so the three cannot drift
 * apart. Only yargs' types are imported here: the fast path must not load yargs itself.
 */
import type { Argv, CommandModule } from "yargs";
import { UsageError } from "../core/errors.ts";
import { action } from "./output.ts";

/** One flag or positional, in yargs' own words (they are handed to it as they are). */
export interface Flag {
  readonly type: "string" | "number" | "boolean";
  /** Other names: a one-letter one is its short flag (`-k`), a longer one a synonym (`--top-k`). */
  readonly alias?: string | readonly string[];
  readonly describe?: string;
  readonly default?: unknown;
  readonly choices?: readonly string[];
  readonly array?: boolean;
  readonly hidden?: boolean;
  readonly demandOption?: boolean;
  readonly conflicts?: string;
  /** Named in the command string (`search <query>`) instead of given as `--query`. */
  readonly positional?: boolean;
}

export type Flags = Readonly<Record<string, Flag>>;

/** A table, or a fragment to spread into one; `const` keeps the literal types `Args` reads. */
export const flags = <const F extends Flags>(table: F): F => table;

type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;
type One<F> = F extends { choices: readonly (infer C)[] } ? C : F extends { type: "number" } ? number : F extends { type: "boolean" } ? boolean : string;
type Value<F> = F extends { array: true } ? One<F>[] : One<F>;
/** A flag with a default, or one yargs demands, always has a value. */
type Always<F> = F extends { default: unknown } | { demandOption: true } ? true : false;

/** What a handler receives for a table: camelCase keys, as yargs hands them over. */
export type Args<F extends Flags> = {
  -readonly [K in keyof F as Always<F[K]> extends true ? Camel<K & string> : never]: Value<F[K]>;
} & {
  -readonly [K in keyof F as Always<F[K]> extends true ? never : Camel<K & string>]?: Value<F[K]>;
};

/** The yargs options of a table, in its order (which is the order --help lists them in). */
export function applyFlags<T>(y: Argv<T>, table: Flags): Argv<T> {
  for (const [name, { positional, ...options }] of Object.entries(table)) {
    if (positional) y.positional(name, options);
    else y.option(name, options);
  }
  return y;
}

/**
 * A command of the tree as yargs gets it, with the table it was declared from: `completion`
 * writes the shells' completions from it, and main.ts names an unknown command from it.
 */
export type Described = CommandModule & { readonly command: string; readonly describe: string; readonly flags?: Flags; readonly subcommands?: readonly Described[] };

/** The name a command is typed by: the first word of its yargs command string. */
export function nameOf(c: Pick<Described, "command">): string {
  return c.command.split(" ")[0]!;
}

/** A command for yargs' tree; `run`'s errors become `Error: …` and their exit code. */
export function command<const F extends Flags>(spec: { command: string; describe: string; flags: F; run: (args: Args<F>) => Promise<void> | void }): Described & { readonly flags: F } {
  return {
    command: spec.command,
    describe: spec.describe,
    flags: spec.flags,
    builder: (y) => applyFlags(y, spec.flags),
    // yargs has parsed by the table, adding only alias and kebab-case twins of its keys; its
    // types cannot follow a table built at run time.
    handler: action((args) => spec.run(withRest(spec.flags, args as Record<string, unknown>) as unknown as Args<F>)),
  };
}

/**
 * What followed `--` on the line (main.ts has yargs keep it apart, as `--`) given to the
 * positionals: the first missing ones, then the variadic one (`search -- -x` looks for "-x").
 */
export function withRest(table: Flags, args: Record<string, unknown>): Record<string, unknown> {
  const rest = Array.isArray(args["--"]) ? (args["--"] as unknown[]).map(String) : [];
  const out = { ...args };
  delete out["--"];
  for (const name of Object.keys(table).filter((n) => table[n]!.positional)) {
    if (!rest.length) break;
    const key = camel(name);
    if (table[name]!.array) out[key] = [...((out[key] as unknown[] | undefined) ?? []), ...rest.splice(0)];
    else if (out[key] === undefined) out[key] = rest.shift();
  }
  if (rest.length) throw new UsageError(`unexpected argument${rest.length === 1 ? "" : "s"} after --: ${rest.join(" ")}`);
  return out;
}

/** A command that only holds subcommands (`config init|get|set|list`). */
export function group(spec: { command: string; describe: string; subcommands: Described[]; demand: string }): Described {
  return {
    command: spec.command,
    describe: spec.describe,
    subcommands: spec.subcommands,
    builder: (y) => spec.subcommands.reduce((y, c) => y.command(c), y).demandCommand(1, spec.demand),
    handler: () => {},
  };
}

/** A flag's other names, as a list. */
export function aliasesOf(f: Flag): readonly string[] {
  return f.alias === undefined ? [] : typeof f.alias === "string" ? [f.alias] : f.alias;
}

/**
 * The plain forms of a command line, parsed by the table without yargs: its flags (`-k 3`,
 * `--limit=3`, `--no-json`), its positionals in order, and after `--` positionals only (a query
 * may start with `-`). Anything else (help, an unknown,
 * repeated or array flag, a value not plainly of its type or not among its choices, a missing
 * positional) gives undefined, and yargs parses the line instead: validation and its messages
 * stay in one place.
 */
export function parsePlain<F extends Flags>(table: F, argv: readonly string[]): Args<F> | undefined {
  const names = new Map<string, string>();
  for (const [name, f] of Object.entries(table)) {
    if (f.positional) continue;
    for (const n of [name, ...aliasesOf(f)]) {
      names.set(n.length === 1 ? `-${n}` : `--${n}`, name);
      if (f.type === "boolean" && n.length > 1) names.set(`--no-${n}`, name);
    }
  }
  const positionals = Object.keys(table).filter((name) => table[name]!.positional);
  const got: Record<string, unknown> = {};
  let rest = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--" && !rest) {
      rest = true;
      continue;
    }
    if (rest || !arg.startsWith("-")) {
      const name = positionals.find((n) => got[n] === undefined || table[n]!.array);
      const value = name === undefined ? undefined : plainValue(table[name]!, arg);
      if (value === undefined) return undefined;
      got[name!] = table[name!]!.array ? [...((got[name!] as unknown[]) ?? []), value] : value;
      continue;
    }
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const token = eq > 0 ? arg.slice(0, eq) : arg;
    const name = names.get(token);
    if (name === undefined || name in got) return undefined;
    const f = table[name]!;
    if (f.array) return undefined; // yargs gives an array flag every value up to the next flag
    if (f.type === "boolean") {
      // yargs reads `-j false` as a value for the flag, not as a positional.
      if (eq > 0 || argv[i + 1] === "true" || argv[i + 1] === "false") return undefined;
      got[name] = !token.startsWith("--no-");
      continue;
    }
    const raw = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    // A separate value that looks like a flag is one, to yargs.
    const value = raw === undefined || (eq < 0 && raw.startsWith("-")) ? undefined : plainValue(f, raw);
    if (value === undefined) return undefined;
    got[name] = value;
  }
  const out: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(table)) {
    const value = got[name] ?? (Array.isArray(f.default) ? [...f.default] : f.default);
    if (value === undefined && f.demandOption) return undefined;
    if (value !== undefined) out[camel(name)] = value;
  }
  return out as Args<F>;
}

/** A value yargs would read the same way: a whole number for a number, one of the choices if any. */
function plainValue(f: Flag, raw: string): string | number | undefined {
  if (f.choices && !f.choices.includes(raw)) return undefined;
  if (f.type === "number") return /^\d+$/.test(raw) ? Number(raw) : undefined;
  return raw;
}

function camel(name: string): string {
  return name.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
}
