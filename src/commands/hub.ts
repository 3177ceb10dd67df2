import { spawn } from "node:child_process";
import { closeSync, existsSync } from "node:fs";
import { loadContext } from "../core/context.ts";
import { join } from "node:path";
import { MemsearchError, UsageError } from "../core/errors.ts";
import { freshFile, readTextQuiet } from "../core/fsutil.ts";
import { selfCommand } from "../hooks/runtime.ts";
import { command, flags, type Args as ArgsOf } from "./declare.ts";
import { notice, print, printJson } from "./output.ts";
import { jsonFlag } from "./common.ts";
import { noteProject } from "./projects.ts";

const hubFlags = flags({
  ...jsonFlag,
  port: { type: "number", describe: "Port to listen on (default: a free one)", conflicts: "stop" },
  open: { type: "boolean", default: true, describe: "Open the page in a browser (--no-open: only print its address)" },
  "all-projects": { type: "boolean", describe: "Every project in ~/.memsearch/projects.json, not only this one" },
  detach: { type: "boolean", describe: "Run the hub in the background and return once it answers (stop it with --stop)", conflicts: "stop" },
  stop: { type: "boolean", describe: "Stop the hub running for this data" },
});

type Args = ArgsOf<typeof hubFlags>;

export const hubCommand = command({
  command: "hub",
  describe: "Open the Memory Hub: your notes, activity, projects and search in a local web page (127.0.0.1 only)",
  flags: hubFlags,
  run: runHub,
});

function checkPort(port: number | undefined): void {
  if (port === undefined) return;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`--port must be a whole number between 1 and 65535${Number.isFinite(port) ? ` (got ${port})` : ""}`);
}

async function runHub(a: Args): Promise<void> {
  checkPort(a.port);
  if (!a.stop) {
    // The project the hub is opened in is one of the user's; over every project, only one with memory.
    const { project } = loadContext();
    if (!a.allProjects || existsSync(project.memoryDir)) await noteProject(project);
  }
  const [{ HubData }, server] = await Promise.all([import("../hub/data.ts"), import("../hub/server.ts")]);
  const data = HubData.open({ allProjects: a.allProjects === true });
  const what = data.scope === "all" ? "every project" : "this project";

  if (a.stop) {
    const running = await server.findRunningHub(data.key);
    if (!running) return a.jsonOutput ? printJson({ stopped: false, running: false }) : print(`No Memory Hub is running for ${what}.`);
    process.kill(running.pid, "SIGTERM");
    const { isAlive } = await import("../core/processes.ts");
    for (let i = 0; i < 100 && isAlive(running.pid); i++) await Bun.sleep(50);
    if (isAlive(running.pid)) throw new MemsearchError(`the Memory Hub (pid ${running.pid}) did not stop within 5 s`);
    if (a.jsonOutput) return printJson({ stopped: true, pid: running.pid, port: running.port });
    return print(`Stopped the Memory Hub at http://${server.HOST}:${running.port}/ (pid ${running.pid}).`);
  }

  if (a.detach) {
    const info = (await server.findRunningHub(data.key)) ?? (await startDetached(a, data.key, server));
    address(info, a.jsonOutput, { detached: true });
    notice(`memsearch: the hub runs in the background (pid ${info.pid}); 'memsearch hub --stop${a.allProjects ? " --all-projects" : ""}' stops it`);
    if (a.open) openBrowser(info, server);
    return;
  }

  const hub = await server.openHub(data, { port: a.port });
  address(hub.info, a.jsonOutput, { detached: false, reused: hub.reused });
  if (hub.reused) {
    notice(`memsearch: a Memory Hub for ${what} is already running (pid ${hub.info.pid}${a.port !== undefined && a.port !== hub.info.port ? `, on port ${hub.info.port}` : ""}); reusing it`);
    if (a.open) openBrowser(hub.info, server);
    return;
  }
  notice(`memsearch: serving ${what} on ${server.HOST} only; press Ctrl+C to stop`);
  if (a.open) openBrowser(hub.info, server);
  await new Promise<void>((resolve) => {
    const stop = () => {
      hub.stop();
      server.dropRecord(hub.info);
      resolve();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    process.once("SIGHUP", stop);
  });
  process.exit(0);
}

/** Where the hub answers: its address line, or with --json its address, pid and port. */
function address(info: { url: string; pid: number; port: number }, json: boolean, extra: Record<string, boolean>): void {
  if (json) printJson({ url: info.url, pid: info.pid, port: info.port, ...extra });
  else print(`Memory Hub: ${info.url}`);
}

/** `hub` again, as a process of its own that outlives this one; its output goes to a log. */
async function startDetached(a: Args, key: string, server: typeof import("../hub/server.ts")): Promise<import("../hub/server.ts").HubInfo> {
  const dir = server.ensureHubDir();
  const logFile = join(dir, `${key}.log`);
  const log = freshFile(logFile, 0o600);
  const [cmd, ...args] = selfCommand();
  const child = spawn(cmd!, [...args, "hub", "--no-open", ...(a.allProjects ? ["--all-projects"] : []), ...(a.port !== undefined ? ["--port", String(a.port)] : [])], {
    detached: true,
    stdio: ["ignore", log, log],
  });
  closeSync(log);
  child.unref();
  let exited: number | null = null;
  child.once("exit", (code) => (exited = code ?? 1));
  for (let i = 0; i < 150; i++) {
    const info = await server.findRunningHub(key);
    if (info) return info;
    if (exited !== null) break;
    await Bun.sleep(100);
  }
  const last = (readTextQuiet(logFile) ?? "").trim().split("\n").filter((l) => l.startsWith("Error:")).pop();
  throw new MemsearchError(last ? last.replace(/^Error:\s*/, "") : `the hub did not start in time; see ${logFile}`);
}

/** The page in the user's browser, by way of its launch page; where none can be started the printed address is enough. */
function openBrowser(info: import("../hub/server.ts").HubInfo, server: typeof import("../hub/server.ts")): void {
  let page: string;
  try {
    page = server.writeLaunchPage(info);
  } catch {
    return notice("memsearch: could not open a browser; open the address above");
  }
  const [cmd, ...args] = process.platform === "darwin" ? ["open", page] : process.platform === "win32" ? ["cmd", "/c", "start", '""', page] : ["xdg-open", page];
  try {
    const child = spawn(cmd!, args, { detached: true, stdio: "ignore" });
    child.once("error", () => notice("memsearch: could not open a browser; open the address above"));
    child.unref();
  } catch {
    notice("memsearch: could not open a browser; open the address above");
  }
}
