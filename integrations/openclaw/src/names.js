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
