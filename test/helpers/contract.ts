/**
 * The contract test (docs/rest.md "OpenAPI, the reference page and the contract test"): every REST
 * answer the integration tests receive through `TestServer.rest` is checked against the OpenAPI
 * document the service serves (src/rest/openapi.ts): the operation of its method and path must
 * declare its status (or the status's `4XX`/`5XX` range), its content type, and its body must
 * validate against the declared JSON Schema (ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses).
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { openApiDocument } from "../../src/rest/openapi.js";

type Json = Record<string, unknown>;
interface Operation {
  responses: Record<string, { content?: Record<string, { schema: Json }> }>;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const document = openApiDocument() as { paths: Record<string, Record<string, Operation>> };
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addFormat("binary", true);
ajv.addSchema(document, "openapi.json");

/** Each path template of the document as a regular expression over a request path ending in `/`. */
const templates = Object.keys(document.paths).map((template) => ({
  template,
  regex: new RegExp(`^${template.replace(/\{[a-z]+\}/g, "[^/]+")}$`),
}));

const validators = new Map<string, ValidateFunction>();
const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");

/**
 * What is wrong with a REST answer by the document, or null when it conforms. Paths outside `/v1`
 * and the document itself are not REST operations; an unknown path or method must answer the
 * error shape (404 or 405).
 */
export function contractProblem(
  method: string,
  path: string,
  answer: { status: number; contentType: string | null; body: unknown },
): string | null {
  const pathname = new URL(path, "http://service").pathname.replace(/\/?$/, "/");
  if (!pathname.startsWith("/v1/") || pathname === "/v1/openapi.json/") return null;
  const where = `${method} ${pathname} answered ${answer.status}`;
  const template = templates.find((t) => t.regex.test(pathname))?.template;
  const operation = template ? document.paths[template][method.toLowerCase()] : undefined;
  const responseKey = operation
    ? [String(answer.status), `${String(answer.status)[0]}XX`, "default"].find((k) => k in operation.responses)
    : undefined;
  if (!operation || !template || !responseKey) {
    if ((answer.status === 404 || answer.status === 405 || answer.status === 429) && !operation)
      return validate(where, "#/components/schemas/Error", answer.body);
    return `${where}: the OpenAPI document declares no ${operation ? `status ${answer.status}` : "such operation"}`;
  }
  const content = operation.responses[responseKey].content;
  if (!content) return answer.body === null ? null : `${where}: a body where the document declares none`;
  const mediaType = (answer.contentType ?? "").split(";")[0].trim();
  const declared = mediaType in content ? mediaType : "*/*" in content ? "*/*" : undefined;
  if (!declared) return `${where}: content type ${mediaType}, the document declares ${Object.keys(content).join(", ")}`;
  if (!declared.endsWith("json")) return null;
  return validate(
    where,
    `#/${pointer("paths", template, method.toLowerCase(), "responses", responseKey, "content", declared, "schema")}`,
    answer.body,
  );
}

function validate(where: string, ref: string, body: unknown): string | null {
  let check = validators.get(ref);
  if (!check) validators.set(ref, (check = ajv.compile({ $ref: `openapi.json${ref}` })));
  if (check(body)) return null;
  const errors = (check.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || "/"} ${e.message}`);
  return `${where}: the body does not match ${ref}: ${errors.join("; ")}`;
}
