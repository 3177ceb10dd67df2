/**
 * `memsearch install codex` as a plan of file changes: merged with the user's hooks.json, the
 * user's config.toml kept byte for byte around the few lines memsearch owns, idempotent, and
 * undone exactly by --uninstall. (The real-client suite proves the trust hashes against Codex.)
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { codexWired, hookCommand, planCodexInstall, trustHash } from "../../src/agents/codex/install.ts";
import type { InstallPlan } from "../../src/agents/types.ts";

const EXE = ["/opt/memsearch/bin/memsearch"];

function home(files: Record<string, string> = {}) {
  const h = mkdtempSync(join(tmpdir(), "codex-install-"));
  const codexHome = join(h, ".codex");
  mkdirSync(codexHome, { recursive: true });
  for (const [n, t] of Object.entries(files)) writeFileSync(join(codexHome, n), t);
  const env = { HOME: h, CODEX_HOME: codexHome };
  const read = (n: string) => (existsSync(join(codexHome, n)) ? readFileSync(join(codexHome, n), "utf8") : undefined);
  const apply = (plan: InstallPlan) => {
    for (const c of plan.changes) {
      if (c.after === undefined) rmSync(c.path);
      else writeFileSync(c.path, c.after);
    }
  };
  const install = (exe = EXE) => {
    const plan = planCodexInstall({ exe, env });
    apply(plan);
    return plan;
  };
  const uninstall = () => {
    const plan = planCodexInstall({ exe: EXE, env, uninstall: true });
    apply(plan);
    return plan;
  };
  return { codexHome, env, read, install, uninstall };
}

const TRICKY = `# my settings
model = "o4"   # trailing comment
notes = """
[features]
hooks = false
"""

[features]
web_search = true

[profiles.work]
model = "gpt"
[hooks.state."/elsewhere/hooks.json:stop:0:0"]
trusted_hash = "sha256:abc"
`;

describe("memsearch install codex", () => {
  test("a fresh home: hooks.json created, hooks turned on and each hook trusted; the second run changes nothing", () => {
    const h = home();
    const plan = h.install();
    expect(plan.changes.map((c) => c.path.split("/").pop())).toEqual(["hooks.json", "config.toml"]);
    const hooks = JSON.parse(h.read("hooks.json")!);
    expect(hooks.hooks.Stop).toEqual([{ hooks: [{ type: "command", command: hookCommand(EXE, "stop"), timeout: 10 }] }]);
    const config = Bun.TOML.parse(h.read("config.toml")!) as any;
    expect(config.features.hooks).toBe(true);
    const key = `${h.codexHome}/hooks.json:stop:0:0`;
    expect(config.hooks.state[key].trusted_hash).toBe(trustHash("stop", { type: "command", command: hookCommand(EXE, "stop"), timeout: 10 }));
    expect(Object.keys(config.hooks.state).length).toBe(4);
    expect(codexWired({ exe: EXE, env: h.env }).wired).toBe(true);
    expect(h.install().changes).toEqual([]);
  });

  test("a tricky config.toml: every byte of the user's kept, our key inside their [features], a header in a string left alone; uninstall restores it exactly", () => {
    const h = home({ "config.toml": TRICKY });
    h.install();
    const after = h.read("config.toml")!;
    expect(after.startsWith(TRICKY.slice(0, TRICKY.indexOf("[features]\nweb_search")))).toBe(true);
    expect(after).toContain("[features]\nweb_search = true\nhooks = true # memsearch\n\n[profiles.work]");
    // The one in the multi-line string and the user's table: no table of ours beside them.
    expect(after.match(/^\[features\]/gm)!.length).toBe(2);
    const parsed = Bun.TOML.parse(after) as any;
    expect(parsed.notes).toBe("[features]\nhooks = false\n");
    expect(parsed.hooks.state["/elsewhere/hooks.json:stop:0:0"].trusted_hash).toBe("sha256:abc");
    expect(h.install().changes).toEqual([]);
    h.uninstall();
    expect(h.read("config.toml")).toBe(TRICKY);
    expect(h.read("hooks.json")).toBeUndefined();
    expect(codexWired({ exe: EXE, env: h.env }).wired).toBe(false);
  });

  test("the user's own hooks are kept where they are; ours get a group of their own, trusted at its index", () => {
    const mine = { hooks: { Stop: [{ hooks: [{ type: "command", command: "notify-send done" }] }] }, other: 1 };
    const h = home({ "hooks.json": JSON.stringify(mine) });
    h.install();
    const hooks = JSON.parse(h.read("hooks.json")!);
    expect(hooks.other).toBe(1);
    expect(hooks.hooks.Stop[0]).toEqual(mine.hooks.Stop[0]);
    expect(hooks.hooks.Stop[1].hooks[0].command).toBe(hookCommand(EXE, "stop"));
    const config = Bun.TOML.parse(h.read("config.toml")!) as any;
    expect(config.hooks.state[`${h.codexHome}/hooks.json:stop:1:0`]).toBeDefined();
    expect(config.hooks.state[`${h.codexHome}/hooks.json:session_start:0:0`]).toBeDefined();
    h.uninstall();
    expect(h.read("hooks.json")).toBe(JSON.stringify(mine));
    // install made config.toml for its lines alone: it goes with them.
    expect(h.read("config.toml")).toBeUndefined();
  });

  test("another executable replaces our group in place and its trust, without a second table", () => {
    const h = home();
    h.install();
    h.install(["/new place/memsearch"]);
    const hooks = JSON.parse(h.read("hooks.json")!);
    expect(hooks.hooks.Stop.length).toBe(1);
    expect(hooks.hooks.Stop[0].hooks[0].command).toBe("'/new place/memsearch' hook stop --agent codex");
    const text = h.read("config.toml")!;
    expect(text.match(/:stop:0:0"\]/g)!.length).toBe(1);
    const config = Bun.TOML.parse(text) as any;
    expect(config.hooks.state[`${h.codexHome}/hooks.json:stop:0:0`].trusted_hash).toBe(trustHash("stop", hooks.hooks.Stop[0].hooks[0]));
  });

  test("refusals write nothing: hooks turned off, an inline features table, invalid TOML, a linked config", () => {
    for (const [text, msg] of [
      ["[features]\nhooks = false\n", "turns Codex hooks off"],
      ["features = { web_search = true }\n", "could not edit"],
      ["features.web_search = true\n", "could not edit"],
      ["model = \n", "is not valid TOML"],
    ] as const) {
      const h = home({ "config.toml": text });
      expect(() => h.install()).toThrow(msg);
      expect(h.read("config.toml")).toBe(text);
      expect(h.read("hooks.json")).toBeUndefined();
    }
    const h = home();
    const real = join(h.env.HOME, "dotfiles.toml");
    writeFileSync(real, "model = \"x\"\n");
    symlinkSync(real, join(h.codexHome, "config.toml"));
    expect(() => h.install()).toThrow("is a symbolic link");
    expect(readFileSync(real, "utf8")).toBe("model = \"x\"\n");
  });

  test("a hooks.json that is not Codex's shape is refused by name", () => {
    const h = home({ "hooks.json": '{"hooks": "nope"}' });
    expect(() => h.install()).toThrow("hooks.json: hooks");
  });
});

describe("install codex, then --uninstall: the user's bytes back, the user's trust kept (issue 31)", () => {
  test("the user's own hook and its trust entry at the same event: their trust stays, ours goes, both files byte for byte", () => {
    const hooksJson = `{\n    "hooks": {\n        "Stop": [ { "hooks": [ { "type": "command", "command": "notify-send done", "timeout": 30 } ] } ]\n    },\n    "big": 12345678901234567890\n}\n`;
    const config = `model = "o4"\n\n[hooks.state."${"CODEX"}/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:the-users-own"\n`;
    const h = home({ "hooks.json": hooksJson });
    const withKey = config.replace("CODEX", h.codexHome);
    writeFileSync(join(h.codexHome, "config.toml"), withKey);
    h.install();
    // Ours is the second group of Stop: trusted at index 1, the user's index 0 left alone.
    const parsed = Bun.TOML.parse(h.read("config.toml")!) as any;
    expect(parsed.hooks.state[`${h.codexHome}/hooks.json:stop:0:0`].trusted_hash).toBe("sha256:the-users-own");
    expect(parsed.hooks.state[`${h.codexHome}/hooks.json:stop:1:0`]).toBeDefined();
    expect(h.read("hooks.json")).toContain('"big": 12345678901234567890');
    h.uninstall();
    expect((Bun.TOML.parse(h.read("config.toml")!) as any).hooks?.state?.[`${h.codexHome}/hooks.json:stop:0:0`]?.trusted_hash).toBe("sha256:the-users-own");
    expect(h.read("config.toml")).toBe(withKey);
    expect(h.read("hooks.json")).toBe(hooksJson);
  });

  test("uninstall leaves the trust entry of the user's own hook, whatever its group's index", () => {
    const mine = { hooks: { Stop: [{ hooks: [{ type: "command", command: "notify-send done" }] }] } };
    const h = home({ "hooks.json": JSON.stringify(mine) });
    const userKey = `${h.codexHome}/hooks.json:stop:0:0`;
    writeFileSync(join(h.codexHome, "config.toml"), `[hooks.state."${userKey}"]\ntrusted_hash = "sha256:the-users-own"\n`);
    h.install();
    h.uninstall();
    expect((Bun.TOML.parse(h.read("config.toml")!) as any).hooks?.state?.[userKey]?.trusted_hash).toBe("sha256:the-users-own");
  });

  test("a trust entry of ours that lost its mark (Codex writes its own on approval) goes; a user's line ending in # memsearch stays and does not block", () => {
    const config = `model = "o4" # memsearch\n[profiles.x]\nnote = "keep" # memsearch`;
    const h = home({ "config.toml": config });
    h.install();
    // Codex's own approval rewrites the table without our mark.
    writeFileSync(join(h.codexHome, "config.toml"), h.read("config.toml")!.replace(/^(\[hooks\.state\."[^"]*:stop:0:0"\]) # memsearch$/m, "$1"));
    expect(h.read("config.toml")).toMatch(/:stop:0:0"\]\n/);
    const plan = h.uninstall();
    expect(plan.changes.length).toBe(2);
    // No final newline before install, none after uninstall.
    expect(h.read("config.toml")).toBe(config);
    expect(h.read("hooks.json")).toBeUndefined();
  });
});
