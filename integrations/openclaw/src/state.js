// What the plugin must remember between OpenClaw processes that the host does not keep for it:
// compaction warnings not yet delivered (OpenClaw's compaction hooks only observe, so the
// warning goes into the next prompt build, which may run in another process). A small JSON
// file beside the database, replaced atomically.

import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";

export class PluginState {
  constructor(file) {
    this.file = file;
  }

  read() {
    if (!existsSync(this.file)) return { warnings: {} };
    try {
      const value = JSON.parse(readFileSync(this.file, "utf8"));
      return { warnings: value.warnings ?? {} };
    } catch (error) {
      throw new Error(`scratchpad: ${this.file} is damaged (${error.message}); remove it to start over`);
    }
  }

  update(change) {
    const state = this.read();
    change(state);
    const temporary = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(state));
    renameSync(temporary, this.file);
  }

  addWarnings(session, texts) {
    if (texts.length === 0) return;
    this.update((state) => {
      state.warnings[session] = [...(state.warnings[session] ?? []), ...texts];
    });
  }

  warnings(session) {
    return this.read().warnings[session] ?? [];
  }

  /** Drops the first `count` warnings of `session`: the ones a prompt build delivered. */
  dropWarnings(session, count) {
    this.update((state) => {
      const rest = (state.warnings[session] ?? []).slice(count);
      if (rest.length > 0) state.warnings[session] = rest;
      else delete state.warnings[session];
    });
  }
}
