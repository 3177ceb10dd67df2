/**
 * `memsearch install gemini` as a plan of file changes to Gemini CLI's user settings.json: merged
 * with the user's settings and hooks, idempotent, undone exactly by --uninstall, refused (nothing
 * written) where a rewrite would lose something or the hooks could never run. (The real-client
 * suite proves the hooks run in Gemini CLI.)
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { geminiWired, GEMINI_HOOKS, planGeminiInstall } from "../../src/agents/gemini/install.ts";
import type { InstallPlan } from "../../src/agents/types.ts";

const EXE = ["/opt/mem search/bin/memsearch"];

function home(settings?: string, where: "HOME" | "GEMINI_CLI_HOME" = "HOME") {
  const h = mkdtempSync(join(tmpdir(), "gemini-install-"));
  const dir = join(h, ".gemini");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "settings.json");
  if (settings !== undefined) writeFileSync(path, settings);
  const env = where === "HOME" ? { HOME: h } : { HOME: "/nonexistent-home", GEMINI_CLI_HOME: h };
  const read = () => (existsSync(path) ? readFileSync(path, "utf8") : undefined);
  const apply = (plan: InstallPlan) => {
    for (const c of plan.changes) {
      if (c.after === undefined) rmSync(c.path);
      else writeFileSync(c.path, c.after);
    }
    return plan;
  };
  return {
    path,
    env,
    read,
    install: (exe = EXE) => apply(planGeminiInstall({ exe, env })),
    uninstall: () => apply(planGeminiInstall({ exe: EXE, env, uninstall: true })),
    wired: () => geminiWired({ exe: EXE, env }),
  };
}

const USER = {
  security: { auth: { selectedType: "gemini-api-key" } },
  ui: { theme: "GitHub" },
  hooks: {
    BeforeAgent: [{ matcher: "*", hooks: [{ type: "command", command: "my-linter --check", name: "lint" }] }],
    AfterTool: [{ hooks: [{ type: "command", command: "audit.sh" }] }],
  },
};

describe("memsearch install gemini", () => {
  test("a fresh home: settings.json created with the four hooks, quoted for the shell; the second run changes nothing; uninstall removes the file it made", () => {
    const h = home();
    expect(h.wired().wired).toBe(false);
    const plan = h.install();
    expect(plan.changes.length).toBe(1);
    const doc = JSON.parse(h.read()!);
    for (const e of GEMINI_HOOKS) {
      expect(doc.hooks[e.event]).toEqual([{ hooks: [{ name: "memsearch", type: "command", command: `'/opt/mem search/bin/memsearch' hook ${e.hook} --agent gemini`, timeout: e.timeout }] }]);
    }
    expect(h.wired()).toEqual({ wired: true, detail: `4 hooks in ${h.path}` });
    expect(h.install().changes).toEqual([]);
    h.uninstall();
    expect(h.read()).toBeUndefined();
  });

  test("the user's settings and hooks are kept (their groups first, in place); uninstall gives back exactly what was there", () => {
    const before = `${JSON.stringify(USER, null, 2)}\n`;
    const h = home(before);
    h.install();
    const doc = JSON.parse(h.read()!);
    expect(doc.security).toEqual(USER.security);
    expect(doc.ui).toEqual(USER.ui);
    expect(doc.hooks.AfterTool).toEqual(USER.hooks.AfterTool);
    expect(doc.hooks.BeforeAgent[0]).toEqual(USER.hooks.BeforeAgent[0]);
    expect(doc.hooks.BeforeAgent[1].hooks[0].name).toBe("memsearch");
    h.uninstall();
    expect(h.read()).toBe(before);
    expect(h.uninstall().changes).toEqual([]);
  });

  test("a new executable path replaces our group where it stands, not a second copy", () => {
    const h = home(JSON.stringify(USER));
    h.install();
    h.install(["/usr/local/bin/memsearch"]);
    const doc = JSON.parse(h.read()!);
    expect(doc.hooks.BeforeAgent.length).toBe(2);
    expect(doc.hooks.BeforeAgent[1].hooks[0].command).toBe("/usr/local/bin/memsearch hook user-prompt-submit --agent gemini");
  });

  test("GEMINI_CLI_HOME says where .gemini is", () => {
    const h = home(undefined, "GEMINI_CLI_HOME");
    h.install();
    expect(JSON.parse(h.read()!).hooks.SessionStart).toBeDefined();
  });

  test("refused, nothing written: comments (a rewrite would lose them), a file that is not JSON, hooks turned off, a link", () => {
    for (const text of [`{\n  // my theme\n  "ui": {"theme": "GitHub"}\n}`, `{"hooks": "yes"}`, "[1,2"]) {
      const h = home(text);
      expect(() => h.install()).toThrow(h.path);
      expect(h.read()).toBe(text);
      expect(h.wired().wired).toBe(false);
    }
    for (const hooksConfig of [{ enabled: false }, { disabled: ["memsearch"] }]) {
      const text = JSON.stringify({ hooksConfig });
      const h = home(text);
      expect(() => h.install()).toThrow("turns memsearch's hooks off");
      expect(h.read()).toBe(text);
    }
    const h = home();
    const real = join(h.path, "..", "real.json");
    writeFileSync(real, "{}");
    symlinkSync(real, h.path);
    expect(() => h.install()).toThrow("symbolic link");
    expect(readFileSync(real, "utf8")).toBe("{}");
  });

  test("wired is false when a hook is missing or the hooks are switched off after install", () => {
    const h = home();
    h.install();
    const doc = JSON.parse(h.read()!);
    delete doc.hooks.AfterAgent;
    writeFileSync(h.path, JSON.stringify(doc));
    expect(h.wired()).toMatchObject({ wired: false, detail: expect.stringContaining("AfterAgent not in") });
    h.install();
    writeFileSync(h.path, JSON.stringify({ ...JSON.parse(h.read()!), hooksConfig: { enabled: false } }));
    expect(h.wired()).toMatchObject({ wired: false, detail: expect.stringContaining("hooksConfig.enabled = false") });
  });
});

describe("install then uninstall gives the user's bytes back (issue 31)", () => {
  const cases: [string, string][] = [
    ["a user's empty object", "{}"],
    ["an empty object over lines", "{\n}\n"],
    ["four-space layout, inline lists, an integer beyond 2^53", `{\n    "ui": { "theme": "GitHub" },\n    "limits": [1, 2, 3],\n    "sessionRetention": 12345678901234567890\n}`],
    ["tabs, the user's own hooks, an empty list of an event", `{\n\t"hooks": {\n\t\t"BeforeAgent": [{"hooks": [{"type": "command", "command": "lint"}]}],\n\t\t"AfterAgent": []\n\t}\n}\n`],
    ["an empty hooks object, compact", `{"hooks":{},"x":1.50}`],
    ["a byte order mark", `\ufeff{\n  "ui": {"theme": "GitHub"}\n}\n`],
  ];
  for (const [what, text] of cases) {
    test(what, () => {
      const h = home(text);
      h.install();
      const after = h.read()!;
      expect(JSON.parse(after.replace(/^\ufeff/, "")).hooks.SessionStart.at(-1).hooks[0].name).toBe("memsearch");
      expect(h.wired().wired).toBe(true);
      if (text.includes("12345678901234567890")) expect(after).toContain("12345678901234567890");
      h.uninstall();
      expect([what, h.read()]).toEqual([what, text]);
    });
  }

  test("a list at the root is refused with one line; nothing written", () => {
    const h = home("[]");
    expect(() => h.install()).toThrow("holds a JSON list where settings are an object");
    expect(() => h.uninstall()).toThrow("holds a JSON list");
    expect(h.read()).toBe("[]");
  });
});
