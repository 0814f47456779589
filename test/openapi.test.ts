/**
 * schema/openapi.json is the document the code builds (run `npm run schema:print` after changing
 * a REST declaration), the document covers every route the router serves, and the contract check
 * the integration tests run (helpers/contract.ts) refuses answers the document does not declare.
 */
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { OPENAPI_PATH, printedOpenApi } from "../scripts/print-openapi.js";
import { CLIENT_SCHEMA_PATH, printedClientSchema } from "../scripts/print-client.js";
import { restRoutes } from "../src/rest/router.js";
import { openApiDocument } from "../src/rest/openapi.js";
import { contractProblem } from "./helpers/contract.js";

const json = "application/json; charset=utf-8";

describe("schema/openapi.json", () => {
  it("is the OpenAPI document of the code (run `npm run schema:print` after changing src/rest)", () => {
    expect(fs.readFileSync(OPENAPI_PATH, "utf8")).toBe(printedOpenApi());
  });

  it("is what the TypeScript client's types were generated from (run `npm run build` after schema:print)", async () => {
    expect(fs.readFileSync(CLIENT_SCHEMA_PATH, "utf8")).toBe(await printedClientSchema());
  });

  it("has every route of the router, with its parameters, and nothing else", () => {
    const paths = openApiDocument().paths as Record<string, Record<string, { parameters: { name: string }[] }>>;
    const declared = Object.entries(paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const served = restRoutes().map((r) => `${r.method} ${r.path.replace(/:([a-z]+)/g, "{$1}")}/`);
    expect(declared.sort()).toEqual(served.sort());
    const list = paths["/v1/customers/"].get.parameters.map((p) => p.name);
    expect(list).toEqual([
      "page",
      "page_size",
      "country",
      "country__name",
      "email",
      "name",
      "sources",
      "tax_id",
      "created",
    ]);
    expect(paths["/v1/invoices/{id}/"].get.parameters.map((p) => p.name)).toEqual(["id"]);
    expect(paths["/v1/creditnotes/{id}/"].get.parameters.map((p) => p.name)).toEqual(["id", "expand"]);
  });
});

/** Every string of `value` (descriptions, summaries, examples...) with its path in the document. */
function texts(value: unknown, at = ""): [string, string][] {
  if (typeof value === "string") return [[at, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => texts(v, `${at}/${i}`));
  if (value && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => texts(v, `${at}/${k}`));
  return [];
}

/** A path of this repository's files: a folder of it, or a Markdown or TypeScript file's name. */
const REPOSITORY_PATH = /\b(docs|src|test|scripts|schema|prisma|bench|portal)\/|\b[\w-]+\.(md|ts|mjs)\b/;

describe("the reference's texts", () => {
  it("are written for API users: no text names a file or folder of this repository", () => {
    const found = texts(openApiDocument()).filter(([, text]) => REPOSITORY_PATH.test(text));
    expect(found).toEqual([]);
    // the check itself finds what it looks for
    expect(texts({ a: { b: ["see docs/rest.md"] }, c: "rules in invoice-totals.md", d: "src/x" })).toHaveLength(3);
    for (const text of ["see docs/rest.md", "rules in invoice-totals.md", "(src/rest/openapi.ts)", "printer.ts"])
      expect(REPOSITORY_PATH.test(text), text).toBe(true);
    for (const text of ["`/v1/invoices/{id}/`", "application/json", "an ISO 8601 date", "v1"])
      expect(REPOSITORY_PATH.test(text), text).toBe(false);
  });

  it("introduce the API under its name and version, and describe every group of operations", () => {
    const doc = openApiDocument() as {
      info: { title: string; version: string; description: string };
      tags: { name: string; description: string }[];
    };
    // Redoc heads the page with "<title> (<version>)"
    expect(doc.info).toMatchObject({ title: "Billing API", version: "v1" });
    expect(doc.info.description).toContain("Authorization: Bearer <key>");
    expect(doc.tags.map((t) => t.name)).toContain("Invoices");
    for (const tag of doc.tags) expect(tag.description.length, tag.name).toBeGreaterThan(tag.name.length + 20);
  });
});

describe("the contract check", () => {
  const invoice = { id: "inv_1", total: 1190, status: "draft", lines: [], created: "2026-11-22 10:00:00" };

  it("accepts a declared answer", () => {
    expect(contractProblem("DELETE", "/v1/invoices/inv_1", { status: 204, contentType: null, body: null })).toBe(null);
    const error = { error: { code: "not_found", message: "No invoice with id inv_2" } };
    expect(contractProblem("GET", "/v1/invoices/inv_2/", { status: 404, contentType: json, body: error })).toBe(null);
    expect(contractProblem("GET", "/v1/nothing/", { status: 404, contentType: json, body: error })).toBe(null);
  });

  it("checks the keys both ways: a required key the answer lacks, and a key the document does not declare", () => {
    const clp = {
      id: "CLP",
      conversion: null,
      country: "CL",
      default: true,
      is_chargeable: true,
      available: true,
      name: "Peso chileno",
      name_en: "Chilean peso",
      rounded: true,
    };
    const page = (currency: Record<string, unknown>) => ({ count: 1, next: null, previous: null, results: [currency] });
    const answer = (currency: Record<string, unknown>) =>
      contractProblem("GET", "/v1/generals/currencies/", { status: 200, contentType: json, body: page(currency) });
    expect(answer(clp)).toBe(null);
    const { name_en: _nameEn, ...lacking } = clp;
    expect(answer(lacking)).toMatch(/results\/0 must have required property 'name_en'/);
    expect(answer({ ...clp, symbol: "$" })).toMatch(/results\/0 must NOT have additional properties/);
    // a nullable key is required all the same: printed as null
    const { conversion: _conversion, ...withoutNull } = clp;
    expect(answer(withoutNull)).toMatch(/must have required property 'conversion'/);
  });

  it("refuses a body of the wrong shape, an undeclared status or content type, and a non-error 404", () => {
    const clp = { id: "CLP", conversion: null, country: "CL", default: true, is_chargeable: true, available: true };
    const currency = { ...clp, name: "Peso chileno", name_en: "Chilean peso", rounded: "yes" };
    const page = { count: 1, next: null, previous: null, results: [currency] };
    expect(contractProblem("GET", "/v1/generals/currencies/", { status: 200, contentType: json, body: page })).toMatch(
      /GET \/v1\/generals\/currencies\/ answered 200: the body does not match .*\/rounded must be boolean/,
    );
    expect(contractProblem("POST", "/v1/invoices/", { status: 200, contentType: json, body: invoice })).toMatch(
      /declares no status 200/,
    );
    expect(
      contractProblem("GET", "/v1/invoices/inv_1/", { status: 200, contentType: "text/html", body: invoice }),
    ).toMatch(/content type text\/html/);
    expect(contractProblem("GET", "/v1/nothing/", { status: 404, contentType: json, body: { detail: "x" } })).toMatch(
      /must have required property 'error'/,
    );
    const list = { count: 1, next: null, previous: null, results: [{ id: 3 }] };
    expect(contractProblem("GET", "/v1/customers/", { status: 200, contentType: json, body: list })).toMatch(
      /results\/0 must have required property/,
    );
  });
});
