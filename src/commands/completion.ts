/**
 * `memsearch completion bash|zsh|fish`: a completion script for the shell, written from the same
 * command table yargs parses (each command's flags, aliases and choices, declare.ts), so a new
 * command or flag completes without anyone listing it twice. The scripts are static: a Tab never
 * starts the binary.
 */
import { globalFlags } from "./common.ts";
import { aliasesOf, command, nameOf, type Described, type Flag, type Flags } from "./declare.ts";
import { print } from "./output.ts";

export const SHELLS = ["bash", "zsh", "fish"] as const;
type Shell = (typeof SHELLS)[number];

/** One flag as a shell offers it: every spelling, and what may follow it. */
interface Option {
  names: string[];
  describe: string;
  /** Takes a value (`--limit 5`); `choices` when the value is one of a few words. */
  value: boolean;
  choices?: readonly string[];
}

/** A command as the scripts need it: its words from the top, its subcommands, options and positional choices. */
interface Node {
  path: string[];
  describe: string;
  subs: Node[];
  options: Option[];
  /** Words a positional takes, when it takes one of a few (`hook <event>`, `install <agent>`). */
  words: readonly string[];
}

function optionsOf(table: Flags): Option[] {
  const out: Option[] = [];
  for (const [name, f] of Object.entries(table)) {
    if (f.positional || f.hidden) continue;
    const names = [name, ...aliasesOf(f)].map((n) => (n.length === 1 ? `-${n}` : `--${n}`));
    // A switch on by default is turned off by its --no- form (`hub --no-open`).
    if (f.type === "boolean" && f.default === true) names.push(`--no-${name}`);
    out.push({ names, describe: f.describe ?? "", value: f.type !== "boolean", ...(f.choices ? { choices: f.choices } : {}) });
  }
  return out;
}

const GLOBAL: Option[] = [
  ...optionsOf(globalFlags).map((o) => (o.names[0] === "--color" ? { ...o, names: ["--color"], choices: ["auto", "always", "never"] } : o)),
  { names: ["--no-color"], describe: "Never colour", value: false },
  { names: ["--help", "-h"], describe: "Show help", value: false },
];

function nodeOf(c: Described, parent: string[]): Node {
  const path = [...parent, nameOf(c)];
  const table: Flags = c.flags ?? {};
  const words = Object.values(table).flatMap((f: Flag) => (f.positional && f.choices ? f.choices : []));
  return { path, describe: c.describe, subs: (c.subcommands ?? []).map((s) => nodeOf(s, path)), options: [...optionsOf(table), ...GLOBAL], words };
}

function treeOf(table: readonly Described[]): Node {
  return { path: [], describe: "memsearch", subs: table.map((c) => nodeOf(c, [])), options: [...GLOBAL, { names: ["--version", "-V"], describe: "Show the version", value: false }], words: [] };
}

function walk(n: Node): Node[] {
  return [n, ...n.subs.flatMap(walk)];
}

/** A shell word in single quotes. */
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
/** A description on one short line. */
const short = (s: string) => s.replace(/\s+/g, " ").trim().slice(0, 90);

export function bashScript(root: Node): string {
  const nodes = walk(root);
  const key = (n: Node) => n.path.join(" ");
  const lines = [
    "# memsearch completion for bash. Load it with:",
    '#   eval "$(memsearch completion bash)"   (in ~/.bashrc)',
    "# or save it as ~/.local/share/bash-completion/completions/memsearch",
    "_memsearch() {",
    '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" key="" cand w i',
    "  for ((i = 1; i < COMP_CWORD; i++)); do",
    '    w="${COMP_WORDS[i]}"',
    '    [[ $w == -* ]] && continue',
    '    cand="${key:+$key }$w"',
    '    case "$cand" in',
    `      ${nodes.filter((n) => n.path.length).map((n) => q(key(n))).join("|")}) key="$cand" ;;`,
    "    esac",
    "  done",
    '  case "$cur" in',
    "    --color=*)",
    '      COMPREPLY=($(compgen -P --color= -W "auto always never" -- "${cur#--color=}"))',
    "      return ;;",
    "  esac",
    '  case "$key|$prev" in',
  ];
  for (const n of nodes) {
    for (const o of n.options) {
      if (!o.value) continue;
      const pats = o.names.map((name) => q(`${key(n)}|${name}`)).join("|");
      lines.push(`    ${pats})`, o.choices ? `      COMPREPLY=($(compgen -W ${q(o.choices.join(" "))} -- "$cur"))` : "      COMPREPLY=()", "      return ;;");
    }
  }
  lines.push("  esac", "  local words", '  case "$key" in');
  for (const n of nodes) {
    const flagWords = n.options.flatMap((o) => o.names).join(" ");
    const plain = [...n.subs.map((s) => s.path.at(-1)!), ...n.words].join(" ");
    lines.push(`    ${q(key(n))})`, `      if [[ $cur == -* ]]; then words=${q(flagWords)}; else words=${q(plain)}; fi ;;`);
  }
  lines.push(
    "  esac",
    '  COMPREPLY=($(compgen -W "$words" -- "$cur"))',
    "}",
    // -o default: where no word fits (a path, a query), the shell completes file names.
    "complete -o default -F _memsearch memsearch",
  );
  return lines.join("\n") + "\n";
}

export function zshScript(root: Node): string {
  const nodes = walk(root);
  const key = (n: Node) => n.path.join(" ");
  const lines = [
    "#compdef memsearch",
    "# memsearch completion for zsh. Load it with:",
    "#   eval \"$(memsearch completion zsh)\"   (in ~/.zshrc, after compinit)",
    "# or save it as _memsearch in a folder of your $fpath",
    "_memsearch() {",
    '  local key="" cand w i cur="${words[CURRENT]}" prev="${words[CURRENT-1]}"',
    "  local -a described choices",
    "  for ((i = 2; i < CURRENT; i++)); do",
    '    w="${words[i]}"',
    '    [[ $w == -* ]] && continue',
    '    cand="${key:+$key }$w"',
    '    case "$cand" in',
    `      ${nodes.filter((n) => n.path.length).map((n) => q(key(n))).join("|")}) key="$cand" ;;`,
    "    esac",
    "  done",
    '  if [[ $cur == --color=* ]]; then compadd -P --color= auto always never; return; fi',
    '  case "$key|$prev" in',
  ];
  for (const n of nodes) {
    for (const o of n.options) {
      if (!o.value) continue;
      const pats = o.names.map((name) => q(`${key(n)}|${name}`)).join("|");
      lines.push(`    ${pats})`, o.choices ? `      compadd -- ${o.choices.map(q).join(" ")}` : "      _files", "      return ;;");
    }
  }
  lines.push("  esac", '  case "$key" in');
  for (const n of nodes) {
    const flags = n.options.flatMap((o) => o.names.map((name) => q(`${name.replace(/:/g, "\\:")}:${short(o.describe)}`)));
    const subs = n.subs.map((s) => q(`${s.path.at(-1)}:${short(s.describe)}`));
    lines.push(
      `    ${q(key(n))})`,
      `      if [[ $cur == -* ]]; then described=(${flags.join(" ")}); _describe option described; return; fi`,
      subs.length ? `      described=(${subs.join(" ")}); _describe command described; return ;;` : n.words.length ? `      compadd -- ${n.words.map(q).join(" ")}; return ;;` : "      _files; return ;;",
    );
  }
  lines.push("  esac", "}", 'if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _memsearch "$@"; else compdef _memsearch memsearch; fi');
  return lines.join("\n") + "\n";
}

export function fishScript(root: Node): string {
  const lines = ["# memsearch completion for fish. Load it with:", "#   memsearch completion fish > ~/.config/fish/completions/memsearch.fish", "complete -c memsearch -e"];
  const all = walk(root);
  // True while the line names exactly this command path (its last word seen, none of its subcommands yet).
  const at = (n: Node) => {
    if (!n.path.length) return "__fish_use_subcommand";
    const parts = n.path.map((w) => `__fish_seen_subcommand_from ${w}`);
    if (n.subs.length) parts.push(`not __fish_seen_subcommand_from ${n.subs.map((s) => s.path.at(-1)).join(" ")}`);
    return parts.join("; and ");
  };
  for (const n of all) {
    for (const s of n.subs) lines.push(`complete -c memsearch -f -n ${q(at(n))} -a ${q(s.path.at(-1)!)} -d ${q(short(s.describe))}`);
    if (n.words.length) lines.push(`complete -c memsearch -f -n ${q(at(n))} -a ${q(n.words.join(" "))}`);
    for (const o of n.options) {
      const spell = o.names.map((name) => (name.startsWith("--") ? `-l ${name.slice(2)}` : `-s ${name.slice(1)}`)).join(" ");
      const value = o.choices ? ` -x -a ${q(o.choices.join(" "))}` : o.value ? " -r" : "";
      lines.push(`complete -c memsearch -n ${q(at(n))} ${spell}${value} -d ${q(short(o.describe))}`);
    }
  }
  return lines.join("\n") + "\n";
}

/** The script for one shell, from a command table. */
export function completionScript(shell: Shell, table: readonly Described[]): string {
  const root = treeOf(table);
  return shell === "bash" ? bashScript(root) : shell === "zsh" ? zshScript(root) : fishScript(root);
}

/** The command, given the table it completes (its own entry included, so it is read when run). */
export function completionCommand(table: () => readonly Described[]): Described {
  return command({
    command: "completion <shell>",
    describe: "Print a completion script for bash, zsh or fish (eval \"$(memsearch completion bash)\")",
    flags: { shell: { positional: true, type: "string", choices: SHELLS, demandOption: true } },
    run: (a) => print(completionScript(a.shell, table()).trimEnd()),
  });
}
