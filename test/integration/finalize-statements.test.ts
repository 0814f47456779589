/**
 * The statements a finalize sends (docs/architecture.md "A straight finalize"): what the finalize of each document
 * kind reads from the organization is read once (its settings: tax profile, branding and the numbering plan's
 * enrollment; its name; its signing certificate), then handed down (services/issuing.ts). Counted at the driver
 * adapter like test/integration/statement-counts.test.ts, for a mode that numbers internally and for one enrolled
 * with SII (a folio and a signed DTE).
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chileanCustomer, startTestServer, statementTable, type TestServer } from "../helpers/server.js";
import { generateCaf, generatePkcs12 } from "../helpers/sii-fixtures.js";

const RUT = "76042235-5";
let s: TestServer;
let customer: string;

beforeAll(async () => {
  s = await startTestServer({ settings: { certificateEncryptionKey: randomBytes(32) } });
  customer = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer() })).body.id;
});
afterAll(async () => s?.close());

/** The tables of the statements `run` sends, without the rate limit's and the API key's (timing-dependent). */
async function statementsOf(run: () => Promise<unknown>): Promise<string[]> {
  s.statements.length = 0;
  await run();
  return s.statements.map(statementTable).filter((t) => t !== "RateLimit" && t !== "ApiKey");
}

/** A draft of `path` (`/v1/invoices/`, `/v1/orders/`, `/v1/creditnotes/`) finalized; its statements and body. */
async function finalizeCounted(path: string, body: Record<string, unknown>) {
  const draft = await s.rest("POST", path, { body });
  expect(draft.status, JSON.stringify(draft.body)).toBe(201);
  let finalized: any;
  const statements = await statementsOf(async () => {
    const res = await s.rest("GET", `${path}${draft.body.id}/finalize/`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    finalized = res.body;
  });
  return { statements, finalized };
}

const LINES = [{ name: "Consultoría", quantity: 2, amount: 1000 }];

/**
 * The organization's rows a finalize reads, once each: the mode's settings, the organization's name, and the mode's
 * certificates (CL33, CL52 and CL61 are types SII issues: whether the mode has a certificate decides their series, and
 * when it does, the newest valid one signs). Before the finalize was made straight, the settings were read three times
 * (tax profile, branding, numbering plan) and an SII finalize read the certificates twice.
 */
const ONCE_EACH = ["Certificate", "Organization", "OrganizationSettings"];

/**
 * The statements of one finalize, up to its number (the counter or the CAF), that read the organization: its
 * settings, its name, its certificates. (An order printed for its event and its response reads its organization
 * again: the printer's, not the finalize's.)
 */
const organizationReads = (statements: string[]) => {
  const numbered = statements.findIndex((t) => t === "DocumentCounter" || t === "Caf");
  expect(numbered).toBeGreaterThan(0);
  return statements
    .slice(0, numbered)
    .filter((t) => ["OrganizationSettings", "Organization", "Certificate"].includes(t));
};

describe("a finalize reads the organization once", () => {
  it("internal series: an invoice, an order and a credit note read settings, name and certificates once", async () => {
    const invoice = await finalizeCounted("/v1/invoices/", { customer, lines: LINES });
    expect(invoice.finalized).toMatchObject({ status: "finalized", total: 2380 });
    expect(organizationReads(invoice.statements).sort()).toEqual(ONCE_EACH);
    const order = await finalizeCounted("/v1/orders/", { customer, lines: LINES });
    expect(order.finalized.status).toBe("finalized");
    expect(organizationReads(order.statements).sort()).toEqual(ONCE_EACH);
    const note = await finalizeCounted("/v1/creditnotes/", {
      invoice: invoice.finalized.id,
      lines: [{ name: "Ajuste", amount: 500 }],
    });
    expect(note.finalized.status).toBe("finalized");
    expect(organizationReads(note.statements).sort()).toEqual(ONCE_EACH);
    // the whole finalize of an invoice, in order
    expect(invoice.statements).toEqual(INTERNAL_INVOICE);
  });

  it("SII folio: the settings, the name and the certificate once each, the DTE signed and stored", async () => {
    const profile = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
      body: { activity_codes: ["620200"], city: "Santiago", resolution_number: 0, resolution_date: "2026-01-15" },
    });
    expect(profile.status).toBe(200);
    const certificate = generatePkcs12({ rut: "12345678-5" });
    const uploaded = await s.rest("POST", "/v1/billers/built_in/certificates/", {
      body: { file: certificate.file.toString("base64"), password: certificate.password },
    });
    expect(uploaded.status).toBe(201);
    const authorizedOn = new Date(Date.now() - 5 * 86400_000).toISOString().slice(0, 10);
    const caf = generateCaf({ rut: RUT, type: 33, from: 1, to: 10, authorizedOn });
    const cafRes = await s.rest("POST", "/v1/billers/built_in/cafs/", { body: { file: caf.file.toString("base64") } });
    expect(cafRes.status, JSON.stringify(cafRes.body)).toBe(201);

    const invoice = await finalizeCounted("/v1/invoices/", { customer, document: "CL33", lines: LINES });
    expect(invoice.finalized).toMatchObject({ status: "finalized", number: 1, total: 2380 });
    expect(invoice.finalized.tax_agency).toMatchObject({ agency: "sii", status: "pending", folio: 1 });
    expect(organizationReads(invoice.statements).sort()).toEqual(ONCE_EACH);
    expect(invoice.statements).toEqual(SII_INVOICE);
  });
});

/**
 * An invoice's finalize in the internal series, BEGIN to COMMIT, then the response's read: 14 statements (18, then
 * 16, before). The lock, the line count, the organization (name, settings), the customer for the snapshot, the
 * document type and the certificates for the series, the counter, the update, the invoice printed for its event
 * (with its payments and notes, for its balance), the event.
 */
const INTERNAL_INVOICE = [
  "BEGIN",
  "Invoice",
  "Invoice",
  "Organization",
  "OrganizationSettings",
  "Invoice (joined)",
  "DocumentType",
  "Certificate",
  "DocumentCounter",
  "Invoice",
  "Invoice (joined)",
  "Event",
  "COMMIT",
  "Invoice (joined)",
];

/**
 * An SII finalize: 19 statements (24, then 21, before). As the internal one, then the invoice with its lines for the
 * DTE, the CAF (candidates, lock, counter), the signed XML stored, the update, the submission queued.
 */
const SII_INVOICE = [
  "BEGIN",
  "Invoice",
  "Invoice",
  "Organization",
  "OrganizationSettings",
  "Invoice (joined)",
  "DocumentType",
  "Certificate",
  "Invoice (joined)",
  "Caf",
  "Caf",
  "Caf",
  "StoredFile",
  "Invoice",
  "SiiSubmission",
  "Invoice (joined)",
  "Event",
  "COMMIT",
  "Invoice (joined)",
];
