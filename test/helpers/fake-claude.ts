/**
 * A stand-in `claude` executable for summariser and hook tests: a POSIX shell script that records
 * each invocation (argv one per line, environment, stdin, its pid) and answers according to
 * environment variables, so one script serves unit tests (via `claudeBin`) and e2e runs (on PATH).
 *
 *   FAKE_CLAUDE_LOG    directory to record into: `<pid>.argv`, `<pid>.env`, `<pid>.stdin`, `<pid>.child`
 *   FAKE_CLAUDE_MODE   ok (default) | echo (bullets naming the turn's first [User] line) | many | empty | fail | slow | stubborn
 *   FAKE_CLAUDE_REPLY  what `ok` prints instead of the default bullets
 */
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const FAKE_CLAUDE_DEFAULT_REPLY = "- User asked the fake claude for a summary\n- Fake claude answered with two bullets\n";

const SCRIPT = `#!/bin/sh
log="\${FAKE_CLAUDE_LOG:-}"
if [ -n "$log" ]; then
  mkdir -p "$log"
  : > "$log/$$.argv"
  for a in "$@"; do printf '%s\\n' "$a" >> "$log/$$.argv"; done
  env > "$log/$$.env"
fi
input=$(cat)
[ -n "$log" ] && printf '%s' "$input" > "$log/$$.stdin"
case "\${FAKE_CLAUDE_MODE:-ok}" in
  ok)
    if [ -n "\${FAKE_CLAUDE_REPLY:-}" ]; then printf '%s\\n' "$FAKE_CLAUDE_REPLY"
    else printf '%s' "${FAKE_CLAUDE_DEFAULT_REPLY}"; fi ;;
  echo)
    printf -- '- Summary of: %s\\n- Noted by the fake claude\\n' "$(printf '%s\\n' "$input" | grep -m1 '^\\[User\\]:' | cut -c9-200)" ;;
  many)
    printf 'Notes:\\n'
    for i in 1 2 3 4 5 6 7 8; do printf -- '- bullet %s\\n' "$i"; done ;;
  empty) : ;;
  fail) echo "Invalid API key · Please run /login" >&2; exit 1 ;;
  slow)
    sleep 30 &
    [ -n "$log" ] && echo $! > "$log/$$.child"
    wait ;;
  stubborn)
    trap '' TERM
    sleep 30 &
    [ -n "$log" ] && echo $! > "$log/$$.child"
    wait; wait ;;
esac
`;

/** Writes the script as `<dir>/<name>` (default `claude`), executable, and returns its path. */
export function writeFakeClaude(dir: string, name = "claude"): string {
  const path = join(dir, name);
  writeFileSync(path, SCRIPT);
  chmodSync(path, 0o755);
  return path;
}

export interface FakeClaudeCall {
  pid: number;
  argv: string[];
  env: Record<string, string>;
  stdin: string;
  /** pid of the background child of the slow modes. */
  childPid?: number;
}

/** The invocations recorded in a FAKE_CLAUDE_LOG directory. */
export function fakeClaudeCalls(logDir: string): FakeClaudeCall[] {
  if (!existsSync(logDir)) return [];
  const pids = readdirSync(logDir)
    .filter((f) => f.endsWith(".argv"))
    .map((f) => Number(f.slice(0, -5)));
  return pids.map((pid) => {
    const read = (ext: string) => (existsSync(join(logDir, `${pid}.${ext}`)) ? readFileSync(join(logDir, `${pid}.${ext}`), "utf8") : "");
    const argv = read("argv").split("\n");
    argv.pop(); // the final newline
    const env: Record<string, string> = {};
    for (const line of read("env").split("\n")) {
      const eq = line.indexOf("=");
      if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1);
    }
    const child = read("child").trim();
    return { pid, argv, env, stdin: read("stdin"), childPid: child ? Number(child) : undefined };
  });
}

/** Alive and not a zombie (an orphan nobody reaped yet counts as gone). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return true;
  }
}
