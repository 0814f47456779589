/**
 * The REST layer's JSON writer and instant printer (src/rest/json.ts, src/rest/printer.ts): the same
 * text as JSON.stringify (and as `new Date(value).toISOString()` reshaped) for the values REST prints.
 */
import { describe, expect, it } from "vitest";
import { JsonNumber, jsonResponse, restResponse, stringify } from "../src/rest/json.js";
import { printInstant } from "../src/rest/printer.js";

describe("stringify", () => {
  const values: unknown[] = [
    null,
    true,
    false,
    0,
    -1.5,
    1e21,
    Number.NaN,
    "",
    'quote " backslash \\ newline \n tab \t nul \u0000 lone \ud800 emoji 😀',
    [],
    {},
    [1, "a", null, undefined, { b: undefined, c: [] }],
    { a: 1, b: undefined, 'key "quoted"': { nested: [true, { deep: "x" }] }, "2": "numeric key first" },
    { list: [[], [[]]] },
  ];
  it("writes what JSON.stringify writes", () => {
    for (const value of values) expect(stringify(value)).toBe(JSON.stringify(value) ?? "null");
  });
  it("writes a JsonNumber unquoted, wherever it is", () => {
    expect(stringify(new JsonNumber("12.50"))).toBe("12.50");
    expect(stringify({ amount: new JsonNumber("123456789012345678.123456"), list: [new JsonNumber("0")] })).toBe(
      '{"amount":123456789012345678.123456,"list":[0]}',
    );
  });
  it("leaves out inherited keys", () => {
    const value = Object.assign(Object.create({ inherited: 1 }) as object, { own: 2 });
    expect(stringify(value)).toBe('{"own":2}');
  });
});

describe("REST responses", () => {
  it("carry status, content type and body", async () => {
    const response = jsonResponse({ a: new JsonNumber("1.5") }, 201);
    expect(response.status).toBe(201);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    response.headers.set("retry-after", "5");
    expect(response.headers.get("retry-after")).toBe("5");
    expect(await response.text()).toBe('{"a":1.5}');
  });
  it("carry bytes and no body", async () => {
    const bytes = Buffer.from([0, 1, 2, 255]);
    const file = restResponse(bytes, { headers: { "content-type": "application/pdf" } });
    expect(Buffer.from(await file.arrayBuffer())).toEqual(bytes);
    const empty = restResponse(null, { status: 204 });
    expect(empty.status).toBe(204);
    expect(await empty.text()).toBe("");
  });
});

describe("printInstant", () => {
  const old = (value: string, plain: boolean) => {
    const iso = new Date(value).toISOString();
    return plain ? iso.slice(0, 19).replace("T", " ") : iso.replace("Z", "+00:00");
  };
  const instants = [
    "2026-11-22T10:00:00.000Z",
    "1970-01-01T00:00:00.000Z",
    "1969-12-31T23:59:59.999Z",
    "0001-01-01T00:00:00.000Z",
    "9999-12-31T23:59:59.999Z",
    "+010000-01-01T00:00:00.000Z",
    "-000001-06-15T12:30:45.123Z",
    "2026-11-22T10:00:00Z",
    "2026-11-22T13:00:00.5+03:00",
  ];
  it("prints what parsing the instant and printing its toISOString gave", () => {
    for (let ms = -2e12; ms <= 4e12; ms += 7_919_999_999) instants.push(new Date(ms).toISOString());
    for (const value of instants)
      for (const plain of [true, false]) expect(printInstant(value, plain), value).toBe(old(value, plain));
  });
});
