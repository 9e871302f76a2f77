/**
 * Just enough GraphQL for the RunPod stand-in (runpod-server.ts): parses one operation (`query` or
 * `mutation`, optional name and variable definitions) into its field tree, validates every field
 * against a schema of object types as graphql-js does (`Cannot query field "x" on type "T".`,
 * a leaf with a selection, an object without one), and projects a resolved value onto the
 * selection, so an answer holds exactly the fields asked for. Arguments must be variables
 * (`input: $input`): fleetwarden's client sends every value as a variable, and the stand-in
 * refuses literals instead of half-parsing them.
 */
export interface Field {
  name: string;
  /** argument name → variable name */
  args: Record<string, string>;
  selection: Field[] | null;
}

export interface Operation {
  kind: "query" | "mutation";
  fields: Field[];
}

/** type name → field name → the field's type name (null: a leaf). */
export type Schema = Record<string, Record<string, string | null>>;

export class GraphqlError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

const TOKEN = /\s*(?:(#[^\n]*)|([_A-Za-z][_0-9A-Za-z]*)|(\$)|([{}():!,[\]=])|(\S))/y;

function tokenize(text: string): string[] {
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  let m: RegExpExecArray | null;
  while (TOKEN.lastIndex < text.length && (m = TOKEN.exec(text))) {
    if (m[1]) continue;
    if (m[5]) throw new GraphqlError(`Syntax Error: Unexpected character "${m[5]}".`, "GRAPHQL_PARSE_FAILED");
    if (m[2] || m[3] || m[4]) out.push((m[2] ?? m[3] ?? m[4])!);
  }
  return out.filter((t) => t !== ",");
}

export function parseOperation(text: string): Operation {
  const tokens = tokenize(text);
  let at = 0;
  const next = () => tokens[at++];
  const expect = (t: string) => {
    if (tokens[at] !== t) throw new GraphqlError(`Syntax Error: Expected "${t}", found ${tokens[at] ?? "<EOF>"}.`, "GRAPHQL_PARSE_FAILED");
    at++;
  };
  const kind = tokens[at] === "{" ? "query" : next();
  if (kind !== "query" && kind !== "mutation") throw new GraphqlError(`Syntax Error: Unexpected Name "${kind}".`, "GRAPHQL_PARSE_FAILED");
  if (tokens[at] !== "{" && tokens[at] !== "(") next(); // the operation's name
  if (tokens[at] === "(")
    while (next() !== ")") if (at >= tokens.length) throw new GraphqlError('Syntax Error: Expected ")".', "GRAPHQL_PARSE_FAILED");
  const selection = (): Field[] => {
    expect("{");
    const fields: Field[] = [];
    while (tokens[at] !== "}") {
      const name = next();
      if (!name || !/^[_A-Za-z]/.test(name))
        throw new GraphqlError(`Syntax Error: Expected Name, found ${name ?? "<EOF>"}.`, "GRAPHQL_PARSE_FAILED");
      const args: Record<string, string> = {};
      if (tokens[at] === "(") {
        at++;
        while (tokens[at] !== ")") {
          const arg = next()!;
          expect(":");
          if (tokens[at] !== "$")
            throw new GraphqlError(
              `the RunPod stand-in takes arguments as variables only (argument "${arg}" of "${name}")`,
              "GRAPHQL_VALIDATION_FAILED",
            );
          at++;
          args[arg] = next()!;
        }
        at++;
      }
      fields.push({ name, args, selection: tokens[at] === "{" ? selection() : null });
    }
    at++;
    return fields;
  };
  const fields = selection();
  if (at !== tokens.length) throw new GraphqlError(`Syntax Error: Unexpected ${tokens[at]}.`, "GRAPHQL_PARSE_FAILED");
  return { kind, fields };
}

/** Every field exists on its type; leaves have no selection, objects have one. */
export function validate(schema: Schema, type: string, fields: Field[]): void {
  for (const field of fields) {
    const fieldType = schema[type]?.[field.name];
    if (fieldType === undefined)
      throw new GraphqlError(`Cannot query field "${field.name}" on type "${type}".`, "GRAPHQL_VALIDATION_FAILED");
    if (fieldType === null && field.selection)
      throw new GraphqlError(
        `Field "${field.name}" must not have a selection since its type has no subfields.`,
        "GRAPHQL_VALIDATION_FAILED",
      );
    if (fieldType !== null && !field.selection)
      throw new GraphqlError(
        `Field "${field.name}" of type "${fieldType}" must have a selection of subfields.`,
        "GRAPHQL_VALIDATION_FAILED",
      );
    if (fieldType !== null) validate(schema, fieldType, field.selection!);
  }
}

/** `value` cut down to the selected fields (arrays element by element), as GraphQL answers. */
export function project(value: unknown, selection: Field[] | null): unknown {
  if (value === null || value === undefined) return null;
  if (!selection) return value;
  if (Array.isArray(value)) return value.map((v) => project(v, selection));
  const record = value as Record<string, unknown>;
  return Object.fromEntries(selection.map((f) => [f.name, project(record[f.name], f.selection)]));
}

/** An input object's fields checked against the allowed and required names (graphql-js's words). */
export function checkInput(
  variable: string,
  typeName: string,
  value: unknown,
  allowed: readonly string[],
  required: readonly string[],
): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new GraphqlError(
      `Variable "$${variable}" got invalid value ${JSON.stringify(value)}; Expected type "${typeName}" to be an object.`,
      "BAD_USER_INPUT",
    );
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!allowed.includes(key))
      throw new GraphqlError(
        `Variable "$${variable}" got invalid value; Field "${key}" is not defined by type "${typeName}".`,
        "BAD_USER_INPUT",
      );
  }
  for (const key of required) {
    if (record[key] === undefined || record[key] === null)
      throw new GraphqlError(
        `Variable "$${variable}" got invalid value; Field "${key}" of required type was not provided.`,
        "BAD_USER_INPUT",
      );
  }
  return record;
}
