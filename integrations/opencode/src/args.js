// A component tool's parameters (JSON Schema) as the zod shape opencode's custom tools declare:
// the types, enums, required keys and descriptions the model is shown. What JSON Schema says
// beyond that (lengths, patterns) is left to the component, which checks its arguments itself
// and refuses with the reason.

/** The zod raw shape of an object schema's properties. */
export function zodShape(z, schema) {
  const required = new Set(Array.isArray(schema?.required) ? schema.required : []);
  const shape = {};
  for (const [key, property] of Object.entries(schema?.properties ?? {})) {
    const type = zodType(z, property);
    shape[key] = required.has(key) ? type : type.optional();
  }
  return shape;
}

function zodType(z, schema) {
  let type;
  if (Array.isArray(schema?.enum) && schema.enum.length > 0 && schema.enum.every((v) => typeof v === "string")) {
    type = z.enum(schema.enum);
  } else {
    switch (schema?.type) {
      case "string":
        type = z.string();
        break;
      case "integer":
        type = z.number().int();
        break;
      case "number":
        type = z.number();
        break;
      case "boolean":
        type = z.boolean();
        break;
      case "array":
        type = z.array(schema.items ? zodType(z, schema.items) : z.any());
        break;
      case "object":
        type = schema.properties ? z.object(zodShape(z, schema)).passthrough() : z.record(z.string(), z.any());
        break;
      default:
        type = z.any();
    }
  }
  return typeof schema?.description === "string" ? type.describe(schema.description) : type;
}
