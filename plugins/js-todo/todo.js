// A scratchpad plugin in JavaScript: a small todo list the model keeps with its own tool
// (`todo`), injected into every turn by `before-query` within a token budget counted by the
// host's tokenizer.
//
// Every hook runs in a fresh instance under the host's deadline and memory cap, so this module
// keeps nothing between calls: each item lives in the host's storage under `item/<id>` (ids
// zero-padded so the host's byte-sorted `keys` returns them in order), the next id under
// `next-id`. A call's writes commit together when it returns, or not at all, so a bulk add
// that fails half-way leaves the list as it was.
//
// Configuration (the plugin's `[plugin.config]` table; unknown keys and wrong types refuse the
// load with one message naming every offender):
//
// | key | default | meaning |
// | --- | --- | --- |
// | `maxItems` | `20` | most open and done items kept; `add` past it is rejected |
// | `maxTokens` | `300` | budget of the injected list; items past it are summarised as "+N more" |
// | `placement` | `"append-context"` | where the list goes: any of the four placements |
// | `showDone` | `false` | also inject finished items |
//
// The WIT types as JavaScript values (componentize-js): records are objects with camelCase
// fields, enums are their kebab-case strings, variants are `{ tag, val }`, `option` is the
// value or `undefined`, `list<u8>` is a `Uint8Array`. A `result` export returns its `ok` value
// and throws its `err` value; an import whose `result` is an `err` throws.

import { get as configGet } from "scratchpad:plugin/config@0.1.3";
import { log } from "scratchpad:plugin/log@0.1.3";
import { delete as remove, get, keys, set } from "scratchpad:plugin/storage@0.1.3";
import { count } from "scratchpad:plugin/tokens@0.1.3";

const TOOL = "todo";
const DEFAULTS = { maxItems: 20, maxTokens: 300, placement: "append-context", showDone: false };
const PLACEMENTS = ["prepend-system", "append-system", "prepend-context", "append-context"];
const encoder = new TextEncoder();
const decoder = new TextDecoder();

const PARAMETERS = {
  type: "object",
  properties: {
    action: { enum: ["add", "done", "remove", "list", "find", "edit"] },
    text: { type: "string", description: "add: the item" },
    items: { type: "array", items: { type: "string" }, description: "add: several items at once" },
    id: { type: "integer", description: "done / remove: the item's number" },
    pattern: { type: "string", description: "find / edit: a regular expression (JavaScript syntax)" },
    replacement: { type: "string", description: "edit: what each match becomes ($& is the match, $1 a group)" },
  },
  required: ["action"],
};
const SPEC = {
  name: TOOL,
  description:
    "Your todo list for this session, shown to you every turn. action: add (text or items), " +
    "done (id), remove (id), list, find (pattern), edit (pattern, replacement: in every item).",
  parameters: JSON.stringify(PARAMETERS),
};

/** The configuration with defaults applied; throws a message naming every offending key. */
function settings() {
  const raw = JSON.parse(configGet());
  const problems = Object.keys(raw)
    .filter((key) => !(key in DEFAULTS))
    .map((key) => `unknown key \`${key}\``);
  const conf = { ...DEFAULTS, ...raw };
  for (const key of ["maxItems", "maxTokens"]) {
    if (!Number.isInteger(conf[key]) || conf[key] < 1) problems.push(`\`${key}\` must be a positive integer`);
  }
  if (!PLACEMENTS.includes(conf.placement)) problems.push(`\`placement\` must be one of ${PLACEMENTS.join(", ")}`);
  if (typeof conf.showDone !== "boolean") problems.push("`showDone` must be true or false");
  if (problems.length > 0) throw `js-todo config: ${problems.join("; ")}`;
  return conf;
}

const itemKey = (id) => `item/${String(id).padStart(6, "0")}`;

/** Every stored item, oldest first. */
function items() {
  return keys("item/").map((key) => JSON.parse(decoder.decode(get(key))));
}

function save(item) {
  // `set` throws the host's `storage-error` (e.g. quota-exceeded); it is not caught here, so
  // the whole call fails and the host keeps none of its writes.
  set(itemKey(item.id), encoder.encode(JSON.stringify(item)));
}

const invalid = (message) => ({ tag: "invalid-arguments", val: message });
const show = (item) => `${item.done ? "[x]" : "[ ]"} #${item.id} ${item.text}`;

function add(conf, args) {
  const texts = args.items ?? (args.text === undefined ? undefined : [args.text]);
  if (!Array.isArray(texts) || texts.length === 0 || texts.some((t) => typeof t !== "string" || !t.trim())) {
    throw invalid("add needs `text` (a non-empty string) or `items` (non-empty strings)");
  }
  const stored = items().length;
  if (stored + texts.length > conf.maxItems) {
    throw {
      tag: "rejected",
      val: `The list holds ${stored} of ${conf.maxItems} items; remove finished ones before adding ${texts.length}.`,
    };
  }
  let next = Number(decoder.decode(get("next-id") ?? encoder.encode("1")));
  const added = [];
  for (const text of texts) {
    const item = { id: next++, text: text.trim(), done: false };
    save(item);
    added.push(item);
  }
  set("next-id", encoder.encode(String(next)));
  return `Added ${added.map((item) => `#${item.id}`).join(", ")}.`;
}

function byId(args) {
  if (!Number.isInteger(args.id)) throw invalid("`id` must be an item's number");
  const stored = get(itemKey(args.id));
  if (stored === undefined) throw { tag: "not-found", val: `There is no item #${args.id}; call list to see them.` };
  return JSON.parse(decoder.decode(stored));
}

/** `args.pattern` as a global regex; an invalid-arguments error when it is not one. */
function regexOf(args, action) {
  if (typeof args.pattern !== "string") throw invalid(`${action} needs \`pattern\`, a regular expression`);
  try {
    return new RegExp(args.pattern, "gu");
  } catch (error) {
    throw invalid(`\`pattern\` is not a regular expression: ${error.message}`);
  }
}

// The pattern and the replacement are the model's, and neither is bounded here: the host
// bounds the call. A catastrophic pattern runs into its deadline, a replacement that
// multiplies an item's size into its memory cap; the host ends the call and keeps none of
// its writes.

function find(args) {
  const regex = regexOf(args, "find");
  const found = items()
    .map((item) => ({ item, matches: [...item.text.matchAll(regex)].length }))
    .filter(({ matches }) => matches > 0);
  if (found.length === 0) return `No item matches /${args.pattern}/.`;
  return found.map(({ item, matches }) => `${show(item)} (${matches} match${matches === 1 ? "" : "es"})`).join("\n");
}

function edit(args) {
  const regex = regexOf(args, "edit");
  if (typeof args.replacement !== "string") throw invalid("edit needs `replacement`, a string");
  const edited = [];
  for (const item of items()) {
    const text = item.text.replace(regex, args.replacement).trim();
    if (text === item.text) continue;
    if (!text) throw invalid(`the edit would leave #${item.id} empty; remove it instead`);
    save({ ...item, text });
    edited.push(`#${item.id}`);
  }
  return edited.length === 0 ? `No item matches /${args.pattern}/.` : `Edited ${edited.join(", ")}.`;
}

// The `@type` comments tie each export to the contract's declarations (types/, see
// jsconfig.json), so an editor or `tsc -p .` flags a missing hook or a wrong return shape.

/**
 * The powers this plugin asks for: its guidance and the list it injects every turn, the list in
 * `storage` (copied to a forked session), and the tokenizer, log and configuration it reads.
 * @type {typeof import("scratchpad:plugin/permissions@0.1.3")}
 */
export const permissions = {
  requested() {
    return ["guidance", "inject", "storage", "tokens", "log", "config"];
  },
};

/**
 * What the list holds, for the host's viewer and exports (the contract's `view`): the open
 * items and the finished ones, each section with its use of `maxItems`. Nothing is written.
 * @type {typeof import("scratchpad:plugin/view@0.1.3")}
 */
export const view = {
  describe() {
    const conf = settings();
    const all = items();
    const usage = `${all.length}/${conf.maxItems} items`;
    const open = all.filter((item) => !item.done).map(show);
    const done = all.filter((item) => item.done).map(show);
    return [
      { title: "Open todos", key: "open", content: { tag: "items", val: open }, usage },
      { title: "Done", key: "done", content: { tag: "items", val: done }, usage: undefined },
    ];
  },
};

/** @type {typeof import("scratchpad:plugin/lifecycle@0.1.3")} */
export const lifecycle = {
  load() {
    settings();
    return { tools: [SPEC] };
  },
};

/** @type {typeof import("scratchpad:plugin/hooks@0.1.3")} */
export const hooks = {
  beforeSessionCreate(_session) {
    const guidance = "[Todo] Keep your task list with the `todo` tool; it is shown to you every turn.";
    return { injections: [{ placement: "append-system", text: guidance }], inheritParentState: true };
  },

  beforeQuery(_turn, _message) {
    const conf = settings();
    const shown = items().filter((item) => conf.showDone || !item.done);
    if (shown.length === 0) return [];
    const open = shown.filter((item) => !item.done).length;
    const lines = [`[Todo: ${open} open]`];
    let omitted = 0;
    for (const item of shown) {
      if (omitted === 0 && count([...lines, show(item)].join("\n")) <= conf.maxTokens) {
        lines.push(show(item));
      } else {
        omitted += 1;
      }
    }
    if (omitted > 0) lines.push(`(+${omitted} more: call todo with action "list")`);
    return [{ placement: conf.placement, text: lines.join("\n") }];
  },

  afterResponse(_turn, _text) {},

  beforeToolCall(_turn, _call) {
    return undefined;
  },

  afterToolResult(_turn, _call, _observation) {
    return undefined;
  },

  beforeCompaction(_turn) {
    return undefined;
  },

  afterCompaction(_turn) {},
};

/** @type {typeof import("scratchpad:plugin/tools@0.1.3")} */
export const tools = {
  listTools(_turn) {
    return [SPEC];
  },

  callTool(_turn, name, argumentsJson) {
    if (name !== TOOL) throw { tag: "unknown-tool", val: `js-todo has no tool \`${name}\`` };
    const conf = settings();
    let args;
    try {
      args = JSON.parse(argumentsJson);
    } catch (error) {
      throw invalid(`arguments are not JSON: ${error.message}`);
    }
    if (args === null || typeof args !== "object" || Array.isArray(args)) throw invalid("arguments must be an object");
    switch (args.action) {
      case "add":
        return { content: add(conf, args) };
      case "done": {
        const item = byId(args);
        save({ ...item, done: true });
        return { content: `Done: #${item.id} ${item.text}` };
      }
      case "remove": {
        const item = byId(args);
        remove(itemKey(item.id));
        return { content: `Removed #${item.id} ${item.text}` };
      }
      case "list": {
        const all = items();
        return { content: all.length === 0 ? "The list is empty." : all.map(show).join("\n") };
      }
      case "find":
        return { content: find(args) };
      case "edit":
        return { content: edit(args) };
      default:
        throw invalid("`action` must be add, done, remove, list, find or edit");
    }
  },
};
