/**
 * The Claude Code plugin (plugin/), carried by the binary itself: `memsearch install claude` writes
 * these files into `~/.memsearch/plugin/`, so every way of installing the binary (npm, install.sh,
 * a build) gets the plugin of its own version, and the plugin holds no copy of the binary
 * (bin/memsearch is a script that runs the one installed binary). Loaded only by `install`.
 * test/unit/plugin-files.test.ts checks that this list is exactly plugin/'s files.
 */
import { readFileSync } from "node:fs";
import icon from "../../../plugin/.claude-plugin/icon.png" with { type: "file" };
import manifest from "../../../plugin/.claude-plugin/plugin.json" with { type: "text" };
import binReadme from "../../../plugin/bin/README.md" with { type: "text" };
import binScript from "../../../plugin/bin/memsearch" with { type: "text" };
import ask from "../../../plugin/commands/ask.md" with { type: "text" };
import debug from "../../../plugin/commands/debug.md" with { type: "text" };
import help from "../../../plugin/commands/help.md" with { type: "text" };
import hub from "../../../plugin/commands/hub.md" with { type: "text" };
import projects from "../../../plugin/commands/projects.md" with { type: "text" };
import recent from "../../../plugin/commands/recent.md" with { type: "text" };
import remember from "../../../plugin/commands/remember.md" with { type: "text" };
import search from "../../../plugin/commands/search.md" with { type: "text" };
import status from "../../../plugin/commands/status.md" with { type: "text" };
import hooks from "../../../plugin/hooks/hooks.json" with { type: "text" };
import skill from "../../../plugin/skills/memory-recall/SKILL.md" with { type: "text" };
import gitignore from "../../../plugin/.gitignore" with { type: "text" };

export interface PluginFile {
  /** Relative to the plugin folder, with `/`. */
  path: string;
  content: string | Uint8Array;
  /** 0o755 for the script the hooks run. */
  mode: number;
}

// TypeScript types a `.json` import as its parsed shape whatever the loader; with `type: "text"` it is the text.
const jsonText = (x: unknown): string => x as string;

export function pluginFiles(): PluginFile[] {
  const files: [string, string | Uint8Array][] = [
    [".claude-plugin/plugin.json", jsonText(manifest)],
    [".claude-plugin/icon.png", new Uint8Array(readFileSync(icon))],
    [".gitignore", gitignore],
    ["bin/README.md", binReadme],
    ["bin/memsearch", binScript],
    ["commands/ask.md", ask],
    ["commands/debug.md", debug],
    ["commands/help.md", help],
    ["commands/hub.md", hub],
    ["commands/projects.md", projects],
    ["commands/recent.md", recent],
    ["commands/remember.md", remember],
    ["commands/search.md", search],
    ["commands/status.md", status],
    ["hooks/hooks.json", jsonText(hooks)],
    ["skills/memory-recall/SKILL.md", skill],
  ];
  return files.map(([path, content]) => ({ path, content, mode: path === "bin/memsearch" ? 0o755 : 0o644 }));
}
