// Tool names both ways. The components name tools like `session.scratchpad`, but the major
// model APIs accept only `^[a-zA-Z0-9_-]{1,64}$` (OpenAI's and Anthropic's documented rule), so
// OpenClaw offers `session_scratchpad` and calls are mapped back before they reach the host.

const UNSAFE = /[^A-Za-z0-9_-]/g;

/** The API-safe form of a component's tool name. */
export function apiName(name) {
  return name.replace(UNSAFE, "_").slice(0, 64);
}

/** Both directions for a set of component tool names; two names that collide are an error. */
export function nameMap(names) {
  const toApi = new Map();
  const toComponent = new Map();
  for (const name of names) {
    const safe = apiName(name);
    const other = toComponent.get(safe);
    if (other !== undefined && other !== name) {
      throw new Error(`scratchpad: tools \`${other}\` and \`${name}\` both map to the API name \`${safe}\``);
    }
    toApi.set(name, safe);
    toComponent.set(safe, name);
  }
  return { toApi, toComponent };
}

/**
 * `text` with each component tool's name as the model is offered it (`session.scratchpad` as
 * `session_scratchpad`), so guidance names the tool the model can call: a whole-word mention
 * only, in one pass.
 */
export function namesInText(text, toApi) {
  const renamed = [...toApi].filter(([name, api]) => name !== api);
  if (renamed.length === 0) return text;
  const lookup = new Map(renamed);
  const names = renamed.map(([name]) => name).sort((a, b) => b.length - a.length);
  const escaped = names.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const pattern = new RegExp(`(?<![\\w.-])(${escaped.join("|")})(?![\\w-])(?!\\.\\w)`, "g");
  return text.replace(pattern, (match) => lookup.get(match));
}
