/**
 * JSON output with exact decimals: spec money fields are JSON numbers, and GraphQL hands them over
 * as exact strings. `JsonNumber` marks such a string; `stringify` writes it unquoted, so no amount
 * passes through a JS float.
 */
export class JsonNumber {
  constructor(readonly text: string) {}
}

/** Decimal string -> JsonNumber (null stays null). */
export function num(value: string | null | undefined): JsonNumber | null {
  return value === null || value === undefined ? null : new JsonNumber(value);
}

export function stringify(value: unknown): string {
  if (value instanceof JsonNumber) return value.text;
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return `[${value.map(stringify).join(",")}]`;
  if (typeof value === "object") {
    return `{${Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}:${stringify(v)}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8" } });
}
