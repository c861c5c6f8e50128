#!/usr/bin/env node
// The `scratchpad` command of the npm package: runs the native binary of the platform package
// npm installed beside this one (an optional dependency whose `os`, `cpu` and `libc` match this
// machine). Nothing is downloaded, at install or at run time. Signals are forwarded and the
// binary's exit status is this process's.
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

// `process.platform`-`process.arch` → the package carrying the binary. Kept in step with the
// targets of `cargo xtask dist` (xtask/src/dist/targets.rs), which writes this package.
const PACKAGES = {
  "linux-x64": "@scratchpad-dev/cli-linux-x64",
  "linux-arm64": "@scratchpad-dev/cli-linux-arm64",
  "win32-x64": "@scratchpad-dev/cli-win32-x64",
  "darwin-x64": "@scratchpad-dev/cli-darwin-x64",
  "darwin-arm64": "@scratchpad-dev/cli-darwin-arm64",
};

function binary() {
  const key = `${process.platform}-${process.arch}`;
  const name = PACKAGES[key];
  if (!name) {
    fail(`no scratchpad binary is built for ${key}; packages exist for: ${Object.keys(PACKAGES).join(", ")}`);
  }
  if (process.platform === "linux" && !glibc()) {
    fail(`the Linux binaries are built for glibc 2.17 or later, and this system's C library is not glibc (musl?)`);
  }
  const exe = process.platform === "win32" ? "scratchpad.exe" : "scratchpad";
  try {
    return path.join(path.dirname(require.resolve(`${name}/package.json`)), "bin", exe);
  } catch {
    fail(
      `${name} is not installed (npm skips an optional dependency whose os, cpu or libc does not match, ` +
        `or that --omit=optional left out); reinstall @scratchpad-dev/cli, or see the packages that exist: ` +
        Object.keys(PACKAGES).join(", "),
    );
  }
}

function glibc() {
  const header = process.report?.getReport?.().header;
  return Boolean(header?.glibcVersionRuntime);
}

function fail(message) {
  process.stderr.write(`scratchpad: ${message}\n`);
  process.exit(1);
}

const child = spawn(binary(), process.argv.slice(2), { stdio: "inherit", windowsHide: true });
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
const forward = (signal) => child.kill(signal);
for (const signal of forwarded) {
  process.on(signal, forward);
}
child.on("error", (error) => fail(`could not run the binary: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, as a shell running the binary itself would see it.
    for (const name of forwarded) {
      process.off(name, forward);
    }
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
