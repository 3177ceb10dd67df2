import { projectsFile, readRegistry, recordProject, summarizeProject, type ProjectSummary } from "../memory/projects.ts";
import type { ProjectPaths } from "../core/project.ts";
import { oneLine } from "../core/errors.ts";
import { localMinute, timeAgo } from "../core/text.ts";
import { jsonFlag } from "./common.ts";
import { command } from "./declare.ts";
import { notice, print, printJson } from "./output.ts";

export const projectsCommand = command({
  command: "projects",
  describe: "List the projects memsearch has been used in (sessions, import, remember, index, hub), with their notes and last activity",
  flags: jsonFlag,
  run: (a) => {
    const file = projectsFile();
    const reg = readRegistry(file);
    if (reg.invalid.length) notice(`memsearch: ${reg.invalid.length} entr${reg.invalid.length === 1 ? "y" : "ies"} of ${file} could not be read and ${reg.invalid.length === 1 ? "is" : "are"} left out`);
    // Most recently active first: the one the user is most likely looking for.
    const list = reg.projects.map(summarizeProject).sort((x, y) => y.lastActive.localeCompare(x.lastActive) || x.path.localeCompare(y.path));
    if (a.jsonOutput) return printJson(list.map(toJson));
    if (!list.length) return print(`No projects recorded yet: a project is recorded in ${file} when memsearch import, remember, index or hub runs in it, or a session starts there.`);
    print(formatProjects(list));
  },
});

function toJson(p: ProjectSummary) {
  return {
    name: p.name,
    path: p.path,
    data_dir: p.dataDir,
    exists: p.exists,
    notes: p.notes,
    last_note: p.lastNote ?? null,
    last_active: p.lastActive,
    first_seen: p.firstSeen,
    last_seen: p.lastSeen,
  };
}

export function formatProjects(list: ProjectSummary[], now = new Date()): string {
  const nameW = Math.max(...list.map((p) => p.name.length));
  const pathW = Math.max(...list.map((p) => p.path.length));
  const notesW = Math.max(...list.map((p) => String(p.notes).length));
  return list
    .map((p) => {
      const ago = timeAgo(new Date(p.lastActive), now);
      const active = `last active ${localMinute(new Date(p.lastActive))}${ago ? ` (${ago})` : ""}`;
      const notes = `${String(p.notes).padStart(notesW)} note${p.notes === 1 ? " " : "s"}`;
      return `${p.name.padEnd(nameW)}  ${p.path.padEnd(pathW)}  ${notes}  ${active}${p.exists ? "" : "  [folder gone]"}`;
    })
    .join("\n");
}



/**
 * Put the project in the registry after a command wrote its memory (import, remember, index) or
 * opened it (hub), so that `memsearch projects` and `hub --all-projects` show it before any
 * session starts there. The command's work is done by then: a registry that cannot be written
 * costs one line on stderr, never the command.
 */
export async function noteProject(project: Pick<ProjectPaths, "root" | "dataDir">): Promise<void> {
  try {
    const r = await recordProject(project.root, project.dataDir, { timeoutMs: 1_000 });
    if (r.setAside) notice(`memsearch: ${projectsFile()} could not be read; moved it to ${r.setAside} and started a new one`);
  } catch (e) {
    notice(`Warning: could not record this project in ${projectsFile()}: ${oneLine(e)}`);
  }
}
