/**
 * Fault injection: hostile bytes in a turn and in the markdown (issue 20, defect 2). A NUL, the
 * other C0 controls, a lone CR, DEL and C1 controls, ANSI escape sequences and a lone surrogate,
 * put in the prompt, the reply, the tool call and its output, and the session id of turns driven
 * through the real hooks: every note is written, none of those characters reaches the markdown,
 * and every note of the day is still found by `memsearch search`. Then a committed day file with
 * a NUL in one section, another with escape sequences, a third with a binary blob pasted in one
 * section and a PNG named .md: each other section stays searchable, `memsearch index` names
 * each damaged file in one line, and neither search nor expand prints an escape sequence.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { anchorsOf, drained, faultKit, HANG_SLACK_MS, HOOK_BUDGET_MS, hookOutputProblem, ms, queued, readMemory, tracked, type Project, liveLockContent } from "./helpers.ts";
import { appendTurn, type TurnSpec } from "./transcript.ts";

const kit = faultKit("control-chars");

/** What a note must never hold: a control character but tab and newline, a C1 control, a lone surrogate. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const HOSTILE: [label: string, text: string][] = [
  ["NUL", "\0"],
  ["C0 controls", "\x01\x02\x07\x08\x0b\x0c\x0e\x1f"],
  ["lone CR", "\r"],
  ["DEL and C1", "\x7f\x85\x9b"],
  ["colour sequence", "\x1b[1;31m"],
  ["title sequence", "\x1b]0;owned\x07"],
  ["cursor sequence", "\x1b[2K\x1b[1G"],
  ["lone surrogate", "\ud83d"],
];
/** One word per turn, found by search afterwards (nothing else in the notes holds it). */
const WORDS = ["walrus", "pelican", "narwhal", "ocelot", "tapir", "gecko", "lemur", "ibis", "marmot", "dingo", "bison", "egret", "koala", "okapi", "puffin", "quetzal", "wombat", "axolotl"];

async function hook(p: Project, event: string, input: unknown): Promise<void> {
  const r = await ms(["hook", event], { cwd: p.root, env: p.env, stdin: JSON.stringify(input), hangMs: HOOK_BUDGET_MS[event]! + HANG_SLACK_MS });
  kit.count("hook-runs");
  expect(hookOutputProblem(r)).toBeUndefined();
}

async function driveTurn(p: Project, t: TurnSpec, transcript: string): Promise<void> {
  t.cwd = p.root;
  const base = { session_id: t.sessionId, transcript_path: transcript, cwd: p.root, prompt_id: t.promptId };
  appendTurn(transcript, t, "user");
  await hook(p, "user-prompt-submit", { ...base, hook_event_name: "UserPromptSubmit", prompt: t.prompt });
  appendTurn(transcript, t, "reply");
  await hook(p, "stop", { ...base, hook_event_name: "Stop", stop_hook_active: false, last_assistant_message: t.reply });
}

/** Search hits (JSON) for a word. */
async function hits(p: Project, word: string): Promise<{ content: string; source: string }[]> {
  const r = await ms(["search", word, "-j", "-k", "20"], { cwd: p.root, env: p.env });
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

describe("control characters in a turn", () => {
  test(
    "in the prompt, the reply, the tool call and the session id: every note is written without them, and the whole day stays searchable",
    tracked(kit, async () => {
      const p = kit.project({ memory: "none" });
      const transcripts = join(p.home, ".claude", "projects", p.root.replace(/[^A-Za-z0-9]/g, "-"));
      mkdirSync(transcripts, { recursive: true });
      // Hold the queue: the turns are written by one drain at the end, as after a busy session.
      mkdirSync(p.pending, { recursive: true });
      writeFileSync(join(p.pending, ".drain.lock"), liveLockContent());
      const turns: TurnSpec[] = [];
      const clean = (i: number): TurnSpec => ({ sessionId: "calm-session", uuid: `calm-u-${i}`, promptId: `calm-p-${i}`, prompt: `Why does the ${WORDS[i]} build fail?`, command: "bun test", output: "1 fail", reply: `The ${WORDS[i]} fixture was stale; refreshed it.` });
      // Clean turns before and after the hostile ones, all the same day.
      for (let i = 0; i < 5; i++) turns.push(clean(i));
      HOSTILE.forEach(([, bad], h) => {
        const w = WORDS[5 + h]!;
        turns.push({
          sessionId: `hostile-${h}-${bad}-session`,
          uuid: `hostile-u-${h}`,
          promptId: `hostile-p-${h}`,
          prompt: `Why does the ${w}${bad} build fail with${bad}this?`,
          command: `echo '${bad}' && bun test ${w}`,
          output: `${bad}error${bad} in ${w}.ts\n`,
          reply: `The ${w} fixture${bad} was stale; refreshed${bad} it.`,
        });
      });
      for (let i = 13; i < 18; i++) turns.push(clean(i));
      for (const [n, t] of turns.entries()) await driveTurn(p, t, join(transcripts, `t-${n}.jsonl`));
      kit.count("hostile-turns", HOSTILE.length);
      kit.set("fields-per-hostile-turn", 5);
      expect(queued(p).length).toBe(turns.length);

      rmSync(join(p.pending, ".drain.lock"));
      const drain = await ms(["hook", "drain"], { cwd: p.root, env: p.env, hangMs: 120_000 });
      expect(drain.code).toBe(0);
      expect(await drained(kit, p, 60_000)).toBe(true);

      // Every turn has its one note: none lost, none twice.
      const anchors = anchorsOf(p.memory);
      const lost = turns.filter((t) => anchors.filter((a) => a.turn === t.uuid || a.turn === t.promptId).length !== 1);
      kit.set("notes-lost", lost.length);
      expect(lost.map((t) => t.uuid)).toEqual([]);
      // None of the characters reached the markdown, bytes or text.
      const files = readMemory(p.memory);
      expect(files.size).toBe(1);
      for (const [name, text] of files) {
        expect(readFileSync(join(p.memory, name)).includes(0)).toBe(false);
        expect(text.split("\n").filter((l) => CONTROL.test(l))).toEqual([]);
      }
      // The day is indexed whole, without a notice, and every turn's word is found in its note.
      const idx = await ms(["index"], { cwd: p.root, env: p.env });
      expect(idx.code).toBe(0);
      expect(idx.stderr).not.toMatch(/memsearch: (skipped|cleaned)/);
      for (const [i, t] of turns.entries()) {
        const w = WORDS[i]!;
        const found = await hits(p, w);
        kit.count("searches");
        expect({ turn: t.uuid, found: found.some((h) => h.content.includes(w)) }).toEqual({ turn: t.uuid, found: true });
      }
    }),
    180_000,
  );
});

describe("control characters and bad bytes in committed markdown", () => {
  const note = (i: number, word: string, extra = "") => `### 09:${String(i).padStart(2, "0")}\n<!-- session:s1 turn:u${i} transcript:- -->\n- Chose the ${word} approach for the cache${extra}\n- Claude Code edited src/${word}.ts\n\n`;
  const day = (title: string, notes: string[]) => `# ${title}\n\n## Session 09:00\n\n${notes.join("")}`;

  test(
    "a NUL, escape sequences or a binary blob in one section cost that section at most; each file is named in one line; a PNG named .md is skipped",
    tracked(kit, async () => {
      const p = kit.project({ memory: "none" });
      mkdirSync(p.memory, { recursive: true });
      const words = (prefix: string) => Array.from({ length: 12 }, (_, i) => `${prefix}${String.fromCharCode(97 + i)}word`);
      // A day with a NUL in one note (what a turn wrote before the fix), one with colour and title
      // sequences in one note (a pasted log), one with a binary blob pasted in one note.
      const nulWords = words("nul");
      const nulDay = day("2026-11-20", nulWords.map((w, i) => note(i, w, i === 5 ? " \0 with a NUL" : "")));
      const escWords = words("esc");
      const escDay = day("2026-11-21", escWords.map((w, i) => note(i, w, i === 3 ? " \x1b[31mred\x1b[0m \x1b]0;owned\x07 title" : "")));
      const blobWords = words("blob");
      const blob = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7919 + 13) % 256));
      const blobNotes = blobWords.map((w, i) => note(i, w));
      const blobDay = Buffer.concat([Buffer.from(day("2026-11-22", blobNotes.slice(0, 6))), Buffer.from("### 10:00\n- pasted: "), blob, Buffer.from("\n\n"), Buffer.from(blobNotes.slice(6).join(""))]);
      writeFileSync(join(p.memory, "2026-11-20.md"), nulDay);
      writeFileSync(join(p.memory, "2026-11-21.md"), escDay);
      writeFileSync(join(p.memory, "2026-11-22.md"), blobDay);
      writeFileSync(join(p.memory, "image.md"), Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), blob]));

      const idx = await ms(["index"], { cwd: p.root, env: p.env });
      expect(idx.code).toBe(0);
      const said = idx.stderr.split("\n").filter((l) => l.startsWith("memsearch: "));
      const bad = "control characters or bytes that are not UTF-8";
      expect(said).toEqual([
        `memsearch: skipped ${join(p.memory, "image.md")}: not UTF-8 text`,
        `memsearch: cleaned ${join(p.memory, "2026-11-20.md")}: 1 section held ${bad} (indexed without them)`,
        `memsearch: cleaned ${join(p.memory, "2026-11-21.md")}: 1 section held ${bad} (indexed without them)`,
        `memsearch: cleaned ${join(p.memory, "2026-11-22.md")}: 1 section of ${bad} left out`,
      ]);
      // Every note of every day is found, the damaged ones included (the blob was in a section of its own).
      const missing: string[] = [];
      for (const w of [...nulWords, ...escWords, ...blobWords]) {
        kit.count("searches");
        if (!(await hits(p, w)).some((h) => h.content.includes(w))) missing.push(w);
      }
      kit.set("committed-notes-lost", missing.length);
      expect(missing).toEqual([]);
      // What search and expand print holds no escape sequence (it would recolour the terminal).
      const shown = await ms(["search", escWords[3]!], { cwd: p.root, env: p.env });
      expect(shown.code).toBe(0);
      expect(shown.stdout).toContain(escWords[3]!);
      expect(shown.stdout).not.toMatch(CONTROL);
      for (const w of [escWords[3]!, nulWords[5]!]) {
        const hit = (await hits(p, w)).find((h) => h.content.includes(w)) as unknown as { chunk_hash: string };
        const expanded = await ms(["expand", hit.chunk_hash], { cwd: p.root, env: p.env });
        expect(expanded.code).toBe(0);
        expect(expanded.stdout).toContain(w);
        expect(expanded.stdout).not.toMatch(CONTROL);
      }
      // The files themselves are left as they were.
      expect(readFileSync(join(p.memory, "2026-11-20.md"), "utf8")).toBe(nulDay);
      // Said again on the next run, which has nothing to do.
      const again = await ms(["index"], { cwd: p.root, env: p.env });
      expect(again.stdout.trim()).toBe("Indexed 0 chunks.");
      expect(again.stderr.split("\n").filter((l) => l.startsWith("memsearch: "))).toEqual(said);
    }),
    120_000,
  );
});
