/**
 * Sending issued DTEs to SII (services/sii-sending.ts, docs/sii-sending.md) against the fake SII
 * of test/helpers/fake-sii.ts, which checks the token signature with xmlsec1 and the uploaded
 * envelope with xmllint (EnvioDTE_v10.xsd; boletas: EnvioBOLETA_v11.xsd through the boleta API). Rounds are run by
 * calling `sendDueSubmissions` with explicit times, so backoff is checked to the millisecond.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { createLogger } from "../../src/infra/logger.js";
import { DEFAULT_SETTINGS } from "../../src/infra/config.js";
import { sendDueSubmissions, type SiiSendingDeps } from "../../src/services/sii-sending.js";
import { chileanCustomer, startTestServer, type TestServer } from "../helpers/server.js";
import { SCHEMA_DIR, generateCaf, generatePkcs12, type FakeCertificate } from "../helpers/sii-fixtures.js";
import { FakeSii, countsOf, startFakeSii } from "../helpers/fake-sii.js";
import { dteSignature, ENVELOPE_SIGNATURE, xmlsecVerifyNode } from "../helpers/sii-envelope.js";

const RUT = "76042235-5";
const HOLDER_RUT = "11111111-1";
const KEY = randomBytes(32);
let s: TestServer;
let sii: FakeSii;
let cert: FakeCertificate;
let customerId: string;
let deps: SiiSendingDeps;

beforeAll(async () => {
  const p12 = generatePkcs12({ rut: HOLDER_RUT });
  cert = p12;
  sii = await startFakeSii({
    trustedCertificatePem: cert.certificatePem,
    schema: join(SCHEMA_DIR, "EnvioDTE_v10.xsd"),
    boletaSchema: join(SCHEMA_DIR, "EnvioBOLETA_v11.xsd"),
  });
  const hosts = sii.hosts;
  s = await startTestServer({ settings: { sii: hosts, certificateEncryptionKey: KEY } });
  // the organization's certificate, uploaded like a user does: the queue signs with it (loadSigningCredentials)
  const uploaded = await s.rest("POST", "/v1/billers/built_in/certificates/", {
    body: { file: p12.file.toString("base64"), password: p12.password },
  });
  expect(uploaded.status).toBe(201);
  // enrollment as a user does it: tax profile, certificate (above), CAF
  expect(
    (
      await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", {
        body: { activity_codes: ["620200"], city: "Santiago", resolution_number: 80, resolution_date: "2014-08-22" },
      })
    ).status,
  ).toBe(200);
  const caf = generateCaf({
    rut: RUT,
    type: 33,
    from: 1,
    to: 1000,
    authorizedOn: new Date(Date.now() - 5 * 86400_000).toISOString().slice(0, 10),
  });
  expect(
    (await s.rest("POST", "/v1/billers/built_in/cafs/", { body: { file: caf.file.toString("base64") } })).status,
  ).toBe(201);
  customerId = (await s.rest("POST", "/v1/customers/", { body: chileanCustomer({ tax_id: "77.777.777-7" }) })).body.id;
  deps = {
    prisma: s.database.prisma,
    logger: createLogger("silent"),
    settings: { ...DEFAULT_SETTINGS, sii: hosts, certificateEncryptionKey: KEY },
  };
});
afterAll(async () => {
  await s?.close();
  await sii?.stop();
});
beforeEach(() => {
  sii.statusFor = (u) => ({ estado: "EPR", glosa: "Envio Procesado", counts: countsOf(u.file, "all-accepted") });
});

/** A finalized invoice: finalize issues the DTE (CAF folio, signed, stored) and queues it for SII. */
async function finalizedDte(): Promise<{ id: string; folio: number }> {
  const inv = (
    await s.rest("POST", "/v1/invoices/", {
      body: { customer: customerId, document: "CL33", lines: [{ name: "Consultoría", quantity: 2, amount: 50000 }] },
    })
  ).body;
  const fin = await s.rest("GET", `/v1/invoices/${inv.id}/finalize/`);
  expect(fin.status).toBe(200);
  expect(fin.body.local_file).toMatch(/\/v1\/files\//);
  return { id: inv.id, folio: fin.body.number as number };
}

/**
 * The invoice stays finalized whatever SII does; its stored `taxAgency` (the REST invoice has no tax_agency field in
 * the spec; orders and credit notes show it).
 */
async function taxAgency(id: string): Promise<Record<string, unknown>> {
  const res = await s.rest("GET", `/v1/invoices/${id}/`);
  expect(res.status).toBe(200);
  expect(res.body.status).toBe("finalized");
  const row = await s.database.prisma.invoice.findUniqueOrThrow({ where: { id }, select: { taxAgency: true } });
  return row.taxAgency as Record<string, unknown>;
}

describe("sending to SII", () => {
  it("finalized DTEs → one EnvioDTE uploaded → track id → polled → accepted", async () => {
    const a = await finalizedDte();
    const b = await finalizedDte();
    expect(await taxAgency(a.id)).toMatchObject({
      agency: "sii",
      status: "pending",
      document_id: `F${a.folio}T33`,
      folio: a.folio,
    });
    const queued = await s.database.prisma.siiSubmission.findUniqueOrThrow({
      where: { documentKind_documentId: { documentKind: "invoice", documentId: a.id } },
    });
    expect([queued.status, queued.dteType, queued.folio, queued.testMode, queued.organizationId]).toEqual([
      "pending",
      33,
      a.folio,
      true,
      s.orgs.acme,
    ]);
    const t0 = new Date(Date.now() + 1000);
    const uploadsBefore = sii.uploads.length;

    expect(await sendDueSubmissions(deps, t0)).toEqual({ uploaded: 2, envelopes: 1, decided: 0, retrying: 0 });
    expect(sii.uploads).toHaveLength(uploadsBefore + 1);
    const upload = sii.uploads.at(-1)!;
    expect([upload.rutSender, upload.dvSender, upload.rutCompany, upload.dvCompany]).toEqual([
      "11111111",
      "1",
      "76042235",
      "5",
    ]);
    const xml = upload.file.toString("latin1");
    expect(xml).toContain(
      "<RutEmisor>76042235-5</RutEmisor><RutEnvia>11111111-1</RutEnvia><RutReceptor>60803000-K</RutReceptor>" +
        "<FchResol>2014-08-22</FchResol><NroResol>0</NroResol>",
    );
    expect(xml).toContain("<SubTotDTE><TpoDTE>33</TpoDTE><NroDTE>2</NroDTE></SubTotDTE>");
    expect(xml).toContain(`<Documento ID="F${a.folio}T33">`);
    expect(xml).toContain(`<Documento ID="F${b.folio}T33">`);
    // the envelope SII got verifies with the two tools (the fake already checked the schema)
    expect(xmlsecVerifyNode(upload.file, cert.certificatePem, ENVELOPE_SIGNATURE).ok).toBe(true);
    expect(xmlsecVerifyNode(upload.file, cert.certificatePem, dteSignature(2)).ok).toBe(true);

    const sent = await taxAgency(a.id);
    expect(sent).toMatchObject({ status: "sent", track_id: upload.trackId, sent_at: t0.toISOString() });
    expect(sent).not.toHaveProperty("last_error");
    const envelopeName = String(sent.envelope_file).replace("/v1/files/", "");
    const stored = await s.database.prisma.storedFile.findUnique({ where: { name: envelopeName } });
    expect(Buffer.from(stored!.content).equals(upload.file)).toBe(true);
    expect([stored!.organizationId, stored!.testMode, stored!.contentType]).toEqual([
      s.orgs.acme,
      true,
      "application/xml",
    ]);
    expect((await taxAgency(b.id)).track_id).toBe(upload.trackId);

    // not polled before the poll delay; SII still processing: stays sent with SII's code
    expect(await sendDueSubmissions(deps, new Date(t0.getTime() + 30_000))).toEqual({
      uploaded: 0,
      envelopes: 0,
      decided: 0,
      retrying: 0,
    });
    sii.statusFor = () => ({ estado: "SOK", glosa: "Schema Validado" });
    await sendDueSubmissions(deps, new Date(t0.getTime() + 60_000));
    expect(await taxAgency(a.id)).toMatchObject({ status: "sent", sii_status: "SOK" });

    sii.statusFor = (u) => ({ estado: "EPR", glosa: "Envio Procesado", counts: countsOf(u.file, "all-accepted") });
    const t2 = new Date(t0.getTime() + 10 * 60_000);
    expect(await sendDueSubmissions(deps, t2)).toEqual({ uploaded: 0, envelopes: 0, decided: 2, retrying: 0 });
    const accepted = await taxAgency(a.id);
    for (const gone of ["attempts", "next_attempt_at", "last_error"]) expect(accepted).not.toHaveProperty(gone);
    expect(accepted).toMatchObject({
      agency: "sii",
      document_id: `F${a.folio}T33`,
      updated_at: t2.toISOString(),
      status: "accepted",
      track_id: upload.trackId,
      sent_at: t0.toISOString(),
      envelope_file: `/v1/files/${envelopeName}`,
      sii_status: "EPR",
      sii_message: "Envio Procesado",
      decided_at: t2.toISOString(),
    });
    const rows = await s.database.prisma.siiSubmission.findMany({ where: { documentId: { in: [a.id, b.id] } } });
    expect(rows.map((r) => [r.status, r.trackId, r.siiStatus])).toEqual([
      ["done", upload.trackId, "EPR"],
      ["done", upload.trackId, "EPR"],
    ]);
    // nothing left to do
    expect(await sendDueSubmissions(deps, new Date(t2.getTime() + 86_400_000))).toEqual({
      uploaded: 0,
      envelopes: 0,
      decided: 0,
      retrying: 0,
    });
  });

  it(
    "SII down: the invoice stays finalized and pending with attempts, next attempt and the error; retried with " +
      "backoff, then sent",
    async () => {
      const a = await finalizedDte();
      const t0 = new Date(Date.now() + 1000);
      await sii.down();
      try {
        expect(await sendDueSubmissions(deps, t0)).toMatchObject({ uploaded: 0, retrying: 1 });
        const first = await taxAgency(a.id);
        expect(first).toMatchObject({
          status: "pending",
          attempts: 1,
          next_attempt_at: new Date(t0.getTime() + 60_000).toISOString(),
        });
        expect(first.last_error).toMatch(new RegExp(`^cannot reach SII at ${sii.url} \\((seed|upload)\\): `));
        // not retried before its time
        expect(await sendDueSubmissions(deps, new Date(t0.getTime() + 59_000))).toMatchObject({ retrying: 0 });
        expect((await taxAgency(a.id)).attempts).toBe(1);
        // second failure: two minutes
        const t1 = new Date(t0.getTime() + 60_000);
        await sendDueSubmissions(deps, t1);
        expect(await taxAgency(a.id)).toMatchObject({
          status: "pending",
          attempts: 2,
          next_attempt_at: new Date(t1.getTime() + 120_000).toISOString(),
        });
      } finally {
        await sii.up();
      }
      // SII answers HTTP 500: third failure, four minutes
      sii.failWith500 = true;
      const t2 = new Date(t0.getTime() + 180_000);
      try {
        await sendDueSubmissions(deps, t2);
      } finally {
        sii.failWith500 = false;
      }
      expect(await taxAgency(a.id)).toMatchObject({
        status: "pending",
        attempts: 3,
        next_attempt_at: new Date(t2.getTime() + 240_000).toISOString(),
      });
      expect((await taxAgency(a.id)).last_error).toMatch(/^SII answered HTTP 500 \((seed|token|upload)\)$/);

      const t3 = new Date(t2.getTime() + 240_000);
      expect(await sendDueSubmissions(deps, t3)).toMatchObject({ uploaded: 1, envelopes: 1 });
      const sent = await taxAgency(a.id);
      expect(sent).toMatchObject({ status: "sent", track_id: sii.uploads.at(-1)!.trackId, sent_at: t3.toISOString() });
      for (const gone of ["attempts", "next_attempt_at", "last_error"]) expect(sent).not.toHaveProperty(gone);
    },
  );

  it(
    "SII's verdicts: rejected envelope (RCH), objections (RLV), a mixed type SII's record does not settle (review); " +
      "a status query error is retried",
    async () => {
      // a mixed type is looked up per DTE (QueryEstDte); DNK (data do not match) settles nothing
      const lookup = sii.documentStatusFor;
      sii.documentStatusFor = () => ({
        estado: "DNK",
        glosa: "Documento Recibido por el SII pero Datos NO Coinciden con los Registrados",
      });
      const cases: [string, (file: Buffer) => { estado: string; counts?: ReturnType<typeof countsOf> }, string][] = [
        ["RCH", () => ({ estado: "RCH" }), "rejected"],
        ["RLV", () => ({ estado: "RLV" }), "accepted_with_objections"],
        [
          "EPR mixed",
          (f) => ({
            estado: "EPR",
            counts: countsOf(f, "all-accepted").map((c) => ({ ...c, reported: 2, accepted: 1, rejected: 1 })),
          }),
          "review",
        ],
        ["EPR rejected", (f) => ({ estado: "EPR", counts: countsOf(f, "all-rejected") }), "rejected"],
      ];
      for (const [what, answer, expected] of cases) {
        const a = await finalizedDte();
        const t0 = new Date(Date.now() + 1000);
        await sendDueSubmissions(deps, t0);
        sii.statusFor = (u) => answer(u.file);
        await sendDueSubmissions(deps, new Date(t0.getTime() + 60_000));
        const ta = await taxAgency(a.id);
        expect(ta.status, what).toBe(expected);
        expect(ta.sii_status, what).toBe(what.slice(0, 3));
        if (what === "EPR mixed")
          expect(ta).toMatchObject({
            sii_document_status: "DNK",
            sii_message: "Documento Recibido por el SII pero Datos NO Coinciden con los Registrados",
          });
        else expect(ta).not.toHaveProperty("sii_document_status");
      }
      sii.documentStatusFor = lookup;
      // a query error (negative ESTADO) keeps the document sent, with the error and a retry time
      const b = await finalizedDte();
      const t0 = new Date(Date.now() + 1000);
      await sendDueSubmissions(deps, t0);
      sii.statusFor = () => ({ estado: "-3", glosa: "ERROR INTERNO" });
      const t1 = new Date(t0.getTime() + 60_000);
      expect(await sendDueSubmissions(deps, t1)).toMatchObject({ retrying: 1 });
      expect(await taxAgency(b.id)).toMatchObject({
        status: "sent",
        attempts: 1,
        last_error: "SII status query answered -3 (ERROR INTERNO)",
        next_attempt_at: new Date(t1.getTime() + 60_000).toISOString(),
      });
    },
  );

  it("a type partly rejected in an envelope: each DTE is looked up (QueryEstDte) and decided alone", async () => {
    const a = await finalizedDte();
    const b = await finalizedDte();
    const t0 = new Date(Date.now() + 1000);
    expect(await sendDueSubmissions(deps, t0)).toMatchObject({ uploaded: 2, envelopes: 1 });
    sii.statusFor = (u) => ({
      estado: "EPR",
      glosa: "Envio Procesado",
      counts: countsOf(u.file, "all-accepted").map((c) => ({ ...c, accepted: 1, rejected: 1 })),
    });
    const lookup = sii.documentStatusFor;
    sii.documentStatusFor = (q) =>
      Number(q.FolioDte) === b.folio
        ? { estado: "FAU", glosa: "Documento No Recibido por el SII" }
        : { estado: "DOK", glosa: "Documento Recibido por el SII. Datos Coinciden con los Registrados" };
    const queriesBefore = sii.documentQueries.length;
    try {
      expect(await sendDueSubmissions(deps, new Date(t0.getTime() + 60_000))).toMatchObject({
        decided: 2,
        retrying: 0,
      });
    } finally {
      sii.documentStatusFor = lookup;
    }
    expect(await taxAgency(a.id)).toMatchObject({
      status: "accepted",
      sii_status: "EPR",
      sii_document_status: "DOK",
      sii_message: "Documento Recibido por el SII. Datos Coinciden con los Registrados",
    });
    expect(await taxAgency(b.id)).toMatchObject({
      status: "rejected",
      sii_status: "EPR",
      sii_document_status: "FAU",
      sii_message: "Documento No Recibido por el SII",
    });
    // asked as the certificate holder, about the issuer's DTE, with the receiver, date (DDMMAAAA) and total of the
    // stored XML
    const queries = sii.documentQueries.slice(queriesBefore).sort((x, y) => Number(x.FolioDte) - Number(y.FolioDte));
    const issued = (await s.rest("GET", `/v1/invoices/${a.id}/`)).body;
    const [year, month, day] = String(issued.date).split("-");
    expect(queries.map(({ Token: _token, ...q }) => q)).toEqual(
      [a, b].map((d) => ({
        RutConsultante: "11111111",
        DvConsultante: "1",
        RutCompania: "76042235",
        DvCompania: "5",
        RutReceptor: "77777777",
        DvReceptor: "7",
        TipoDte: "33",
        FolioDte: String(d.folio),
        FechaEmisionDte: `${day}${month}${year}`,
        MontoDte: "119000",
      })),
    );
  });

  it("an envelope SII refuses at upload (schema error, STATUS 7) rejects its documents without retrying", async () => {
    const a = await finalizedDte();
    // break the stored DTE's schema (and signature): SII answers STATUS 7
    const row = await s.database.prisma.siiSubmission.findUniqueOrThrow({
      where: { documentKind_documentId: { documentKind: "invoice", documentId: a.id } },
    });
    const file = await s.database.prisma.storedFile.findUniqueOrThrow({ where: { name: row.dteFile } });
    const broken = Buffer.from(file.content)
      .toString("latin1")
      .replace(/<TasaIVA>19<\/TasaIVA>/, "<TasaIVA>diecinueve</TasaIVA>");
    await s.database.prisma
      .$executeRaw`UPDATE "StoredFile" SET "content" = decode(${Buffer.from(broken, "latin1").toString("base64")},
        'base64') WHERE "name" = ${row.dteFile}`;
    const t0 = new Date(Date.now() + 1000);
    expect(await sendDueSubmissions(deps, t0)).toMatchObject({ uploaded: 0, decided: 1, retrying: 0 });
    expect(await taxAgency(a.id)).toMatchObject({ status: "rejected", sii_status: "upload:7" });
    expect(await sendDueSubmissions(deps, new Date(t0.getTime() + 86_400_000))).toMatchObject({
      uploaded: 0,
      retrying: 0,
    });
  });
});

describe("sending boletas through SII's boleta API", () => {
  it(
    "boletas go in an EnvioBOLETA to the boleta API, DTEs in an EnvioDTE, in the same round; SII's verdict is read " +
      "per boleta",
    async () => {
      const caf = generateCaf({
        rut: RUT,
        type: 39,
        from: 1,
        to: 100,
        authorizedOn: new Date(Date.now() - 5 * 86400_000).toISOString().slice(0, 10),
      });
      expect(
        (await s.rest("POST", "/v1/billers/built_in/cafs/", { body: { file: caf.file.toString("base64") } })).status,
      ).toBe(201);
      const walkIn = (await s.rest("POST", "/v1/customers/", { body: { name: "Juana Pérez", country: "CL" } })).body.id;
      const boleta = async (amount: number) => {
        const draft = (
          await s.rest("POST", "/v1/invoices/", {
            body: { customer: walkIn, document: "CL39", lines: [{ name: "Café", amount }] },
          })
        ).body;
        const fin = await s.rest("GET", `/v1/invoices/${draft.id}/finalize/`);
        expect(fin.status, JSON.stringify(fin.body)).toBe(200);
        return { id: draft.id as string, folio: fin.body.number as number };
      };
      const a = await boleta(1990);
      const b = await boleta(3500);
      const invoice = await finalizedDte();
      expect(await taxAgency(a.id)).toMatchObject({ agency: "sii", status: "pending", document_id: `F${a.folio}T39` });

      const t0 = new Date(Date.now() + 1000);
      const uploadsBefore = sii.uploads.length;
      expect(await sendDueSubmissions(deps, t0)).toEqual({ uploaded: 3, envelopes: 2, decided: 0, retrying: 0 });
      const uploads = sii.uploads.slice(uploadsBefore);
      expect(uploads.map((u) => u.api).sort()).toEqual(["boleta", "dte"]);
      const envio = uploads.find((u) => u.api === "boleta")!;
      expect([envio.rutSender, envio.dvSender, envio.rutCompany, envio.dvCompany]).toEqual([
        "11111111",
        "1",
        "76042235",
        "5",
      ]);
      const xml = envio.file.toString("latin1");
      expect(xml).toMatch(/^<\?xml version="1.0" encoding="ISO-8859-1"\?>\s*<EnvioBOLETA /);
      expect(xml).toContain("<SubTotDTE><TpoDTE>39</TpoDTE><NroDTE>2</NroDTE></SubTotDTE>");
      expect(xml).not.toContain("<TipoDTE>33</TipoDTE>");
      // the fake checked EnvioBOLETA_v11.xsd; the envelope's and each boleta's signatures verify in place
      expect(xmlsecVerifyNode(envio.file, cert.certificatePem, ENVELOPE_SIGNATURE).ok).toBe(true);
      expect(xmlsecVerifyNode(envio.file, cert.certificatePem, dteSignature(1)).ok).toBe(true);
      expect(xmlsecVerifyNode(envio.file, cert.certificatePem, dteSignature(2)).ok).toBe(true);

      const sent = await taxAgency(a.id);
      expect(sent).toMatchObject({ status: "sent", track_id: envio.trackId, sent_at: t0.toISOString() });
      expect(sent).not.toHaveProperty("last_error");
      const stored = await s.database.prisma.storedFile.findUniqueOrThrow({
        where: { name: String(sent.envelope_file).replace("/v1/files/", "") },
      });
      expect(Buffer.from(stored.content).equals(envio.file)).toBe(true);
      expect((await taxAgency(invoice.id)).track_id).toBe(uploads.find((u) => u.api === "dte")!.trackId);

      // SII accepts the first boleta and rejects the second, naming it
      sii.boletaStatusFor = () => ({
        estado: "EPR",
        estadistica: [{ tipo: 39, informados: 2, aceptados: 1, rechazados: 1, reparos: 0 }],
        detalle_rep_rech: [
          {
            tipo: 39,
            folio: b.folio,
            estado: "RCH",
            descripcion: "Dte Rechazado",
            error: [{ descripcion: "Error en Monto Total" }],
          },
        ],
      });
      const t1 = new Date(t0.getTime() + 60_000);
      try {
        expect(await sendDueSubmissions(deps, t1)).toEqual({ uploaded: 0, envelopes: 0, decided: 3, retrying: 0 });
      } finally {
        sii.boletaStatusFor = () => ({ estado: "EPR", detalle_rep_rech: [] });
      }
      expect(await taxAgency(a.id)).toMatchObject({
        status: "accepted",
        sii_status: "EPR",
        track_id: envio.trackId,
        decided_at: t1.toISOString(),
      });
      expect((await taxAgency(a.id)).sii_message).toBeUndefined();
      expect(await taxAgency(b.id)).toMatchObject({
        status: "rejected",
        sii_status: "EPR",
        sii_message: "Dte Rechazado; Error en Monto Total",
        decided_at: t1.toISOString(),
      });
      expect(await taxAgency(invoice.id)).toMatchObject({ status: "accepted", sii_status: "EPR" });
      const rows = await s.database.prisma.siiSubmission.findMany({
        where: { documentId: { in: [a.id, b.id] } },
        orderBy: { folio: "asc" },
      });
      expect(rows.map((r) => [r.dteType, r.status, r.trackId, r.siiStatus])).toEqual([
        [39, "done", envio.trackId, "EPR"],
        [39, "done", envio.trackId, "EPR"],
      ]);
    },
  );

  it("the boleta API unreachable: boletas stay pending with the error and are retried with backoff", async () => {
    const walkIn = (await s.rest("POST", "/v1/customers/", { body: { name: "Pedro", country: "CL" } })).body.id;
    const draft = (
      await s.rest("POST", "/v1/invoices/", {
        body: { customer: walkIn, document: "CL39", lines: [{ name: "Té", amount: 1500 }] },
      })
    ).body;
    expect((await s.rest("GET", `/v1/invoices/${draft.id}/finalize/`)).status).toBe(200);
    const t0 = new Date(Date.now() + 1000);
    await sii.down();
    try {
      expect(await sendDueSubmissions(deps, t0)).toMatchObject({ uploaded: 0, retrying: 1 });
    } finally {
      await sii.up();
    }
    const failed = await taxAgency(draft.id);
    expect(failed).toMatchObject({
      status: "pending",
      attempts: 1,
      next_attempt_at: new Date(t0.getTime() + 60_000).toISOString(),
    });
    expect(failed.last_error).toMatch(new RegExp(`^cannot reach SII at ${sii.url} \\(boleta (seed|upload)\\): `));
    const t1 = new Date(t0.getTime() + 60_000);
    expect(await sendDueSubmissions(deps, t1)).toMatchObject({ uploaded: 1, envelopes: 1, retrying: 0 });
    expect(await taxAgency(draft.id)).toMatchObject({ status: "sent", track_id: sii.uploads.at(-1)!.trackId });
    expect(sii.uploads.at(-1)!.api).toBe("boleta");
  });
});

describe("SII sending off (test mode: tax profile sii_sending)", () => {
  it("a DTE finalized while it is off is not_sent and never reaches SII; on again, the next is sent", async () => {
    const off = await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", { body: { sii_sending: "off" } });
    expect([off.status, off.body.sii_sending]).toEqual([200, "off"]);
    let kept: { id: string; folio: number };
    try {
      kept = await finalizedDte();
    } finally {
      expect(
        (await s.rest("PATCH", "/v1/billers/built_in/tax_profile/", { body: { sii_sending: "automatic" } })).status,
      ).toBe(200);
    }
    expect(await taxAgency(kept.id)).toMatchObject({
      agency: "sii",
      status: "not_sent",
      document_id: `F${kept.folio}T33`,
      folio: kept.folio,
    });
    expect(
      await s.database.prisma.siiSubmission.count({ where: { documentKind: "invoice", documentId: kept.id } }),
    ).toBe(0);
    const sent = await finalizedDte();
    const uploadsBefore = sii.uploads.length;
    const report = await sendDueSubmissions(deps, new Date(Date.now() + 1000));
    expect(report.uploaded).toBeGreaterThanOrEqual(1);
    const uploaded = sii.uploads.slice(uploadsBefore).map((u) => u.file.toString("latin1"));
    expect(uploaded.some((xml) => xml.includes(`<Documento ID="F${sent.folio}T33">`))).toBe(true);
    expect(sii.uploads.some((u) => u.file.toString("latin1").includes(`<Documento ID="F${kept.folio}T33">`))).toBe(
      false,
    );
    expect(await taxAgency(kept.id)).toMatchObject({ status: "not_sent" });
    expect(await taxAgency(sent.id)).toMatchObject({ status: "sent" });
  });
});
