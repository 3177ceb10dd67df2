#!/usr/bin/env node
"use strict";
/*
 * memsearch's npm launcher (the `memsearch` command of the npm package). The binary itself is in
 * the package of this platform, one of the main package's optional dependencies (npm installs
 * only the one whose os and cpu match): this script finds it and runs it with the same arguments,
 * standard streams and environment, passes signals on, and exits as it exits. Node cannot replace
 * itself with another program, so it waits for the binary. The Claude Code plugin's hooks do not
 * come through here: `memsearch install claude` links the binary itself for them.
 */
const { spawn } = require("node:child_process");
const { dirname, join } = require("node:path");

const PACKAGES = {
  "linux-x64": "memsearch-linux-x64",
  "linux-arm64": "memsearch-linux-arm64",
  "darwin-x64": "memsearch-darwin-x64",
  "darwin-arm64": "memsearch-darwin-arm64",
  "win32-x64": "memsearch-windows-x64",
};

function fail(message) {
  process.stderr.write(`memsearch: ${message}\n`);
  process.exit(1);
}

const here = `${process.platform}-${process.arch}`;
const name = PACKAGES[here];
if (!name) fail(`there is no memsearch build for ${process.platform} ${process.arch} (there are for ${Object.keys(PACKAGES).join(", ")})`);

let binary;
try {
  binary = join(dirname(require.resolve(`${name}/package.json`)), "bin", process.platform === "win32" ? "memsearch.exe" : "memsearch");
} catch {
  fail(`the package ${name}, which holds the binary for this machine, is not installed (was npm told to omit optional dependencies?): run npm install -g memsearch again`);
}

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
child.on("error", (e) => fail(`cannot run ${binary}: ${e.message}`));

// A signal sent to this process (a kill, a terminal hang-up) goes to the binary; it decides.
const SIGNALS = process.platform === "win32" ? ["SIGINT", "SIGBREAK"] : ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
const forward = (signal) => {
  if (child.exitCode === null && child.signalCode === null) {
    try {
      child.kill(signal);
    } catch {}
  }
};
for (const signal of SIGNALS) process.on(signal, forward);

child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so whoever runs memsearch sees what the binary saw.
    for (const s of SIGNALS) process.removeListener(s, forward);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
