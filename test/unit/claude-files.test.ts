/**
 * Where Claude Code keeps its files (src/agents/claude/files.ts): the projects folder, which
 * entries are transcripts (regular files only, never opened otherwise), and which project a
 * transcript belongs to, as a note's anchor is checked against it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NotFoundError } from "../../src/core/errors.ts";
import { checkProjectTranscript, claudeProjectsDir, isProjectTranscript, listTranscripts, projectSlug } from "../../src/agents/claude/files.ts";
import { openRegularFile, ForeignTranscriptError } from "../../src/transcript/files.ts";

const base = mkdtempSync(join(tmpdir(), "ms-claude-files-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const home = join(base, "home");
const env = { HOME: home };
const projects = join(home, ".claude", "projects");
const root = join(base, "proj");
const other = join(base, "other");
mkdirSync(join(root, ".git"), { recursive: true });
mkdirSync(join(root, "src"));
mkdirSync(join(other, ".git"), { recursive: true });
const session = (cwd: string | undefined) => JSON.stringify({ type: "user", uuid: "u1", sessionId: "s", ...(cwd ? { cwd } : {}), message: { role: "user", content: "hello" } }) + "\n";
const put = (path: string, text: string) => {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
  return path;
};

describe("the projects folder", () => {
  test("~/.claude/projects, or $CLAUDE_CONFIG_DIR/projects", () => {
    expect(claudeProjectsDir({ HOME: "/h" })).toBe("/h/.claude/projects");
    expect(claudeProjectsDir({ HOME: "/h", CLAUDE_CONFIG_DIR: "/cfg" })).toBe("/cfg/projects");
    expect(projectSlug("/home/dev/my.proj")).toBe("-home-dev-my-proj");
  });

  test("only regular *.jsonl files are listed; FIFOs, folders and links out are reported, links inside followed", () => {
    const dir = join(projects, "-listing");
    const real = put(join(dir, "a.jsonl"), session(root));
    put(join(dir, "notes.txt"), "x");
    expect(Bun.spawnSync(["mkfifo", join(dir, "fifo.jsonl")]).exitCode).toBe(0);
    mkdirSync(join(dir, "folder.jsonl"));
    symlinkSync(put(join(base, "outside.jsonl"), session(root)), join(dir, "out.jsonl"));
    symlinkSync(real, join(dir, "in.jsonl"));
    symlinkSync(join(base, "nowhere.jsonl"), join(dir, "broken.jsonl"));
    const l = listTranscripts(dir, projects);
    expect(l.files).toEqual([real, join(dir, "in.jsonl")]);
    expect(l.skipped).toEqual([
      { path: join(dir, "broken.jsonl"), reason: "a broken symbolic link" },
      { path: join(dir, "fifo.jsonl"), reason: "a FIFO" },
      { path: join(dir, "folder.jsonl"), reason: "a directory" },
      { path: join(dir, "out.jsonl"), reason: "a symbolic link out of Claude Code's projects folder" },
    ]);
    // Opening one for reading never waits for a writer.
    expect(() => openRegularFile(join(dir, "fifo.jsonl"))).toThrow("transcript is not a regular file (a FIFO)");
  });
});

describe("a transcript named by a note's anchor", () => {
  const own = put(join(projects, projectSlug(root), "own.jsonl"), session(root));
  const sub = put(join(projects, projectSlug(root), "own", "subagents", "agent-a1.jsonl"), session(join(root, "src")));
  const noCwd = put(join(projects, projectSlug(root), "nocwd.jsonl"), session(undefined));
  const theirs = put(join(projects, projectSlug(other), "theirs.jsonl"), session(other));
  const filedUnderUs = put(join(projects, projectSlug(root), "filed.jsonl"), session(other));
  const evil = put(join(base, "evil.jsonl"), session(root));
  const beside = put(join(home, ".claude", "projects-evil", "x.jsonl"), session(root));

  test("this project's sessions, its subfolders' and its subagents' are accepted", () => {
    for (const p of [own, sub, noCwd]) expect(isProjectTranscript(p, root, { env })).toBe(true);
  });

  test("a file outside the projects folder (or in a folder whose name only starts like it) is refused", () => {
    for (const p of [evil, beside]) {
      expect(() => checkProjectTranscript(p, root, { env })).toThrow(ForeignTranscriptError);
      expect(() => checkProjectTranscript(p, root, { env })).toThrow(`refused: ${p} is not a Claude Code transcript (not under ${projects})`);
    }
    expect(() => checkProjectTranscript(join(projects, "x.md"), root, { env })).toThrow("not a transcript (.jsonl)");
  });

  test("another project's session is refused, even filed under this project's folder; accepted with anyProject", () => {
    for (const p of [theirs, filedUnderUs]) {
      let err: unknown;
      try {
        checkProjectTranscript(p, root, { env });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ForeignTranscriptError);
      expect((err as ForeignTranscriptError).anotherProject).toBe(true);
      expect(isProjectTranscript(p, root, { env, anyProject: true })).toBe(true);
    }
  });

  test("a link that leads out of the projects folder is refused; a missing file is not found", () => {
    const link = join(projects, projectSlug(root), "link.jsonl");
    symlinkSync(evil, link);
    expect(() => checkProjectTranscript(link, root, { env })).toThrow(ForeignTranscriptError);
    expect(() => checkProjectTranscript(join(projects, projectSlug(root), "gone.jsonl"), root, { env })).toThrow(NotFoundError);
  });
});
