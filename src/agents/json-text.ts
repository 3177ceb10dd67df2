/**
 * Editing an agent's JSON settings as text: memsearch's entries go in, and come out, without
 * rewriting a byte of the user's (a parse and stringify loses the layout and rounds integers
 * beyond 2^53). The text has been checked to be JSON (it parsed) before it gets here.
 *
 * Install and uninstall are each other's inverse. What install creates (a list for an event, the
 * `hooks` object, the whole file) it lays out with each child on a line of its own; what it adds
 * to a container of the user's that was empty it puts right against the opening bracket. So when
 * uninstall takes out the last child of a container, the space before that child says who made
 * the container: none, the user's (it stays, emptied as it was); some, install's (it goes too, and
 * the file when that container is the whole document).
 */

/** A value of the document, with where it stands in the text. */
export interface JNode {
  kind: "object" | "array" | "scalar";
  /** Offsets of its first character and just after its last. */
  start: number;
  end: number;
  children: JChild[];
  /** Where its opening bracket's line starts (for the indentation of what goes inside). */
  lineStart: number;
}

/** A member of an object (with its key) or an item of an array. */
export interface JChild {
  key?: string;
  /** The key's opening quote (a member), else the value's start. */
  start: number;
  end: number;
  value: JNode;
}

const WS = new Set([" ", "\t", "\n", "\r", "\ufeff"]);

/** The document's tree; throws on text that is not JSON (a caller checked it already). */
export function scanJson(text: string): JNode {
  let i = 0;
  const skip = () => {
    while (i < text.length && WS.has(text[i]!)) i++;
  };
  const lineStartOf = (at: number) => text.lastIndexOf("\n", at - 1) + 1;
  const string = (): string => {
    const s = i;
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    i++;
    return JSON.parse(text.slice(s, i)) as string;
  };
  const value = (): JNode => {
    skip();
    const start = i;
    const c = text[i];
    if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]";
      const node: JNode = { kind: c === "{" ? "object" : "array", start, end: start, children: [], lineStart: lineStartOf(start) };
      i++;
      skip();
      if (text[i] === close) {
        i++;
        node.end = i;
        return node;
      }
      for (;;) {
        skip();
        const childStart = i;
        let key: string | undefined;
        if (node.kind === "object") {
          key = string();
          skip();
          i++; // the colon
        }
        const v = value();
        node.children.push({ ...(key !== undefined ? { key } : {}), start: childStart, end: v.end, value: v });
        skip();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] !== close) throw new Error(`unexpected ${JSON.stringify(text[i] ?? "end")} at ${i}`);
        i++;
        node.end = i;
        return node;
      }
    }
    if (c === '"') {
      string();
      return { kind: "scalar", start, end: i, children: [], lineStart: lineStartOf(start) };
    }
    while (i < text.length && !WS.has(text[i]!) && !",]}".includes(text[i]!)) i++;
    if (i === start) throw new Error(`unexpected ${JSON.stringify(text[i] ?? "end")} at ${i}`);
    return { kind: "scalar", start, end: i, children: [], lineStart: lineStartOf(start) };
  };
  return value();
}

/** The child of an object by key. */
export function member(node: JNode, key: string): JChild | undefined {
  return node.kind === "object" ? node.children.find((c) => c.key === key) : undefined;
}

/** The indentation unit the file uses (its first indented line's: one level in), else two spaces. */
export function indentUnit(text: string): string {
  const m = /\n([ \t]+)\S/.exec(text);
  if (!m) return "  ";
  return m[1]!.startsWith("\t") ? "\t" : " ".repeat(Math.min(m[1]!.length, 8));
}

/** A value laid out the way install creates one: each child on a line of its own, continued lines at `indent`. */
export function render(v: unknown, unit: string, indent: string): string {
  return JSON.stringify(v, null, unit).split("\n").join(`\n${indent}`);
}

/** The leading white space of the line at `lineStart`. */
function indentAt(text: string, lineStart: number): string {
  return /^[ \t]*/.exec(text.slice(lineStart))![0];
}

/**
 * `text` with a child added at the end of `container`: after the last child, with the same
 * separation as before it; into an empty container, against its opening bracket (on its line, so
 * continued at that line's indentation). `key` for an object's member, `value` laid out as
 * install creates values, one level being `unit`.
 */
export function appendChild(text: string, container: JNode, value: unknown, key: string | undefined, unit: string): string {
  const head = key === undefined ? "" : `${JSON.stringify(key)}: `;
  const last = container.children.at(-1);
  if (!last) return text.slice(0, container.start + 1) + head + render(value, unit, indentAt(text, container.lineStart)) + text.slice(container.start + 1);
  const before = container.children.length > 1 ? container.children.at(-2)!.end : container.start + 1;
  // From after the separator before the last child to it: the space each child is given.
  const gap = text.slice(before, last.start).replace(/^\s*,/, "");
  const indent = gap.includes("\n") ? gap.slice(gap.lastIndexOf("\n") + 1) : indentAt(text, last.value.lineStart);
  return text.slice(0, last.end) + "," + gap + head + render(value, unit, indent) + text.slice(last.end);
}

/** `text` with one child's value replaced where it stands (laid out at its line's indentation). */
export function replaceValue(text: string, child: JChild, value: unknown, unit: string): string {
  return text.slice(0, child.value.start) + render(value, unit, indentAt(text, child.value.lineStart)) + text.slice(child.value.end);
}

/**
 * `text` without the child at `path` (indices into each level's children, from the root). When it
 * was the last child of a container install created, the container goes too, up to the whole
 * document: then undefined (the file is to be removed).
 */
export function removeChild(text: string, path: number[]): string | undefined {
  const root = scanJson(text);
  const chain: JNode[] = [root];
  for (const k of path.slice(0, -1)) chain.push(chain.at(-1)!.children[k]!.value);
  for (let level = path.length - 1; level >= 0; level--) {
    const container = chain[level]!;
    const at = path[level]!;
    const kids = container.children;
    const child = kids[at]!;
    if (kids.length > 1) {
      // The last: from the end of the one before it. Any other: up to the start of the next.
      if (at === kids.length - 1) return text.slice(0, kids[at - 1]!.end) + text.slice(child.end);
      return text.slice(0, child.start) + text.slice(kids[at + 1]!.start);
    }
    const lead = text.slice(container.start + 1, child.start);
    // Against the bracket: the user's container, which install added to; it stays as it was.
    if (lead === "") return text.slice(0, child.start) + text.slice(child.end);
    // Install made this container: it goes with its last child.
  }
  return undefined;
}
