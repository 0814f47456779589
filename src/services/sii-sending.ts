/**
 * Sending issued DTEs to SII (docs/sii-sending.md; rules in domain/sii-sending.ts). The model is
 * the mail outbox (services/outbox.ts):
 *
 * - Finalizing a DTE writes a `SiiSubmission` (`enqueueSiiSubmission`) in the same transaction
 *   and sets the document's `taxAgency` to `{status: "pending", …}`.
 * - `sendDueSubmissions` (the worker: `startSiiWorker`, an interval in the server; or
 *   `npm run cli -- sii send`) claims due rows with one `UPDATE … WHERE id IN (SELECT … FOR
 *   UPDATE SKIP LOCKED)` that counts the attempt and moves `nextAttemptAt` a lease ahead, so two
 *   workers never hold one DTE at the same time. Network calls happen outside any transaction; each
 *   outcome is one transaction (submission rows + documents' `taxAgency`).
 * - Fencing: a claim's token is the row's (status, attempts) as the claim left them. Every outcome
 *   write is `UPDATE … WHERE id AND status AND attempts = <the claim's>`, and the document's
 *   `taxAgency` is written only when that update matched: a worker whose lease ran out (another
 *   claimed the row since, counting one more attempt) writes nothing, and logs and drops its outcome.
 * - Upload round: per organization and mode, the due DTEs go in one EnvioDTE (Caratula from the
 *   tax profile, signed with the organization's certificate) to the mode's host (test mode:
 *   certification, live: production), and the due boletas (39, 41) in one EnvioBOLETA to SII's
 *   boleta REST API; each envelope is stored as a StoredFile; the rows become `sent` with the
 *   track id and the documents `{status: "sent", track_id, sent_at, envelope_file}`.
 * - Poll round: per track id, QueryEstUp (boletas: the boleta API's envío status) until SII
 *   decides; then each document is `accepted`, `accepted_with_objections`, `rejected` or `review`
 *   with SII's code (`sii_status`). The boleta API names each boleta it objected to or rejected,
 *   so boletas are decided one by one (`sii_message` is SII's reason for that boleta). A DTE whose
 *   type was only partly rejected is looked up alone (QueryEstDte, `sii_document_status`).
 * - Failure (no network, SII error, missing profile/certificate): the document stays finalized
 *   and `pending` (or `sent` while polling) with `attempts`, `next_attempt_at` and `last_error`;
 *   the row is retried after `siiRetryDelayMs(attempts)` (1 min doubling to 6 h), never dropped.
 */
import { randomUUID } from "node:crypto";
import { Prisma, type PrismaClient } from "../infra/prisma/generated/client.js";
import type { AppSettings } from "../infra/config.js";
import type { Logger } from "../infra/logger.js";
import {
  SII_POLL_DELAY_MS,
  boletaStatusFromDetail,
  documentStatusFromCounts,
  documentStatusFromRecord,
  envelopeOutcome,
  siiNextAttemptAt,
  uploadOutcome,
  type TaxAgencyStatus,
} from "../domain/sii-sending.js";
import { buildEnvioBoleta, buildEnvioDte, isBoletaType, SII_RUT } from "../infra/taxagency/sii/envelope.js";
import { SiiBoletaTransport } from "../infra/taxagency/sii/boleta-transport.js";
import { SiiTransport, parse, text, type UploadStatus } from "../infra/taxagency/sii/transport.js";
import type { SigningCredentials } from "../infra/taxagency/sii/signature.js";
import type { ServiceContext, TenantKey, Tx } from "./context.js";
import { recordTenantEvents } from "./events.js";
import type { EventType } from "../domain/events.js";
import { loadSigningCredentials } from "./certificates.js";
import { readSettings } from "./organization-settings.js";
import { startIntervalWorker, type IntervalWorker } from "../infra/interval-worker.js";
import { fileNameOfUrl, storeFile } from "./files.js";
import { prepareExchanges, writeExchanges, type PreparedExchange } from "./sii-exchange.js";
import { mergeTaxAgency, type SubmissionKind } from "./tax-agency-state.js";

export { mergeTaxAgency, type SubmissionKind };

/** How long a claimed row is held by the worker that claimed it. */
const CLAIM_LEASE_MS = 10 * 60_000;
/** Rows claimed per round (an EnvioDTE holds up to 2000 DTEs). */
const BATCH = 500;

/** The certificate that signs for an organization and the RUT of its holder (`RutEnvia`). */
export type SenderCredentials = SigningCredentials & { subjectRut: string };

export interface SiiSendingDeps {
  prisma: PrismaClient;
  logger: Logger;
  settings: AppSettings;
  /**
   * the signing certificate of an organization's mode; default: services/certificates.ts loadSigningCredentials with
   * settings.certificateEncryptionKey
   */
  loadCredentials?: (owner: TenantKey, now: Date) => Promise<SenderCredentials>;
  /** one transport per host, reused across rounds (it caches the token) */
  transports?: Map<string, SiiTransport>;
  /** the same for SII's boleta API, per API host */
  boletaTransports?: Map<string, SiiBoletaTransport>;
}

export interface SendReport {
  /** DTEs uploaded this round */
  uploaded: number;
  envelopes: number;
  /** DTEs whose final SII status arrived this round */
  decided: number;
  /** DTEs whose upload or poll failed this round (retried later) */
  retrying: number;
}

/**
 * Queues a finalized DTE for SII, inside the finalize transaction `tx`; with `markPending` (default)
 * also merges `{status: "pending", attempts: 0}` into the document's `taxAgency`.
 */
export async function enqueueSiiSubmission(
  tx: Tx,
  input: {
    organizationId: string;
    testMode: boolean;
    documentKind: SubmissionKind;
    documentId: string;
    dteType: number;
    folio: number;
    dteFile: string;
    now: Date;
  },
  markPending = true,
): Promise<void> {
  await tx.siiSubmission.create({
    data: {
      id: randomUUID(),
      organizationId: input.organizationId,
      testMode: input.testMode,
      documentKind: input.documentKind,
      documentId: input.documentId,
      dteType: input.dteType,
      folio: input.folio,
      dteFile: input.dteFile,
      status: "pending",
      nextAttemptAt: input.now,
    },
  });
  if (markPending)
    await mergeTaxAgency(tx, input.documentKind, input.documentId, {
      status: "pending",
      attempts: 0,
      updated_at: input.now.toISOString(),
    });
}

/**
 * Called by finalize (services/documents.ts) after it stored a document issued by a tax agency
 * (services/tax-documents.ts): an SII DTE is queued for sending. The file name is the end of
 * `localFile` (`…/v1/files/<name>`), the type and folio come from `taxAgency.document_id`
 * (`F<folio>T<type>`, dte.ts documentId). Other agencies, and a DTE issued with status `not_sent`
 * (its mode's SII sending is off): nothing.
 */
export async function enqueueIssuedDocument(
  tx: Tx,
  owner: { organizationId: string; testMode: boolean; now: Date },
  kind: SubmissionKind,
  id: string,
  issued: { localFile: string; taxAgency: Record<string, unknown> },
): Promise<void> {
  if (!queuedForSii(issued.taxAgency)) return;
  const parsed = /^F(\d+)T(\d+)$/.exec(String(issued.taxAgency.document_id ?? ""));
  const name = fileNameOfUrl(issued.localFile);
  if (!parsed || !name) throw new Error(`cannot queue ${id} for SII: unexpected document_id or local_file`);
  await enqueueSiiSubmission(
    tx,
    {
      ...owner,
      documentKind: kind,
      documentId: id,
      dteType: Number(parsed[2]),
      folio: Number(parsed[1]),
      dteFile: name,
    },
    false,
  );
}

/** True for a document issued by SII's agency to be sent (not `not_sent`: its mode's sending is off). */
function queuedForSii(taxAgency: Record<string, unknown>): boolean {
  return taxAgency.agency === "sii" && taxAgency.status !== "not_sent";
}

/**
 * enqueueIssuedDocument for many documents of one organization and mode finalized together (the
 * billing run's bulk finalize): one `SiiSubmission` row each, written with one statement.
 */
export async function enqueueIssuedDocuments(
  tx: Tx,
  owner: { organizationId: string; testMode: boolean; now: Date },
  kind: SubmissionKind,
  documents: readonly { id: string; issued: { localFile: string; taxAgency: Record<string, unknown> } }[],
): Promise<void> {
  const rows = documents
    .filter((d) => queuedForSii(d.issued.taxAgency))
    .map(({ id, issued }) => {
      const parsed = /^F(\d+)T(\d+)$/.exec(String(issued.taxAgency.document_id ?? ""));
      const name = fileNameOfUrl(issued.localFile);
      if (!parsed || !name) throw new Error(`cannot queue ${id} for SII: unexpected document_id or local_file`);
      return {
        id: randomUUID(),
        documentId: id,
        dteType: Number(parsed[2]),
        folio: Number(parsed[1]),
        dteFile: name,
      };
    });
  if (!rows.length) return;
  // one statement with one parameter (the rows as JSON)
  await tx.$executeRaw(Prisma.sql`
    INSERT INTO "SiiSubmission" ("id", "organizationId", "testMode", "documentKind", "documentId", "dteType",
    "folio", "dteFile", "status", "nextAttemptAt", "updatedAt")
    SELECT v."id", ${owner.organizationId}, ${owner.testMode}, ${kind}, v."documentId", v."dteType", v."folio",
    v."dteFile", 'pending', ${owner.now}, ${owner.now}
    FROM json_to_recordset(${JSON.stringify(rows)}::json) AS v("id" text, "documentId" text, "dteType" int,
    "folio" int, "dteFile" text)`);
}

type Row = {
  id: string;
  organizationId: string;
  testMode: boolean;
  documentKind: SubmissionKind;
  documentId: string;
  dteType: number;
  folio: number;
  dteFile: string;
  attempts: number;
  trackId: string | null;
};

async function claim(prisma: PrismaClient, status: "pending" | "sent", now: Date): Promise<Row[]> {
  const lease = new Date(now.getTime() + CLAIM_LEASE_MS);
  const rows = await prisma.$queryRaw<Row[]>`
        UPDATE "SiiSubmission" SET "attempts" = "attempts" + 1, "nextAttemptAt" = ${lease}::timestamptz
        WHERE "id" IN (
          SELECT "id" FROM "SiiSubmission"
          WHERE "status" = ${status} AND "nextAttemptAt" <= ${now}::timestamptz
          ORDER BY "nextAttemptAt", "id"
          LIMIT ${BATCH}
          FOR UPDATE SKIP LOCKED)
        RETURNING "id", "organizationId", "testMode", "documentKind", "documentId", "dteType", "folio", "dteFile",
        "attempts", "trackId"`;
  return rows.map((r) => ({ ...r, attempts: Number(r.attempts), dteType: Number(r.dteType), folio: Number(r.folio) }));
}

function boletaTransportFor(deps: SiiSendingDeps, testMode: boolean): SiiBoletaTransport {
  const { sii } = deps.settings;
  const [apiUrl, uploadUrl] = testMode
    ? [sii.boletaCertificationUrl, sii.boletaCertificationUploadUrl]
    : [sii.boletaProductionUrl, sii.boletaProductionUploadUrl];
  deps.boletaTransports ??= new Map();
  let t = deps.boletaTransports.get(apiUrl);
  if (!t) deps.boletaTransports.set(apiUrl, (t = new SiiBoletaTransport({ apiUrl, uploadUrl })));
  return t;
}

function transportFor(deps: SiiSendingDeps, testMode: boolean): SiiTransport {
  const baseUrl = testMode ? deps.settings.sii.certificationUrl : deps.settings.sii.productionUrl;
  deps.transports ??= new Map();
  let t = deps.transports.get(baseUrl);
  if (!t) deps.transports.set(baseUrl, (t = new SiiTransport({ baseUrl })));
  return t;
}

function credentials(deps: SiiSendingDeps, owner: TenantKey, now: Date): Promise<SenderCredentials> {
  if (deps.loadCredentials) return deps.loadCredentials(owner, now);
  return loadSigningCredentials(deps.prisma, owner, deps.settings.certificateEncryptionKey, now);
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * The `where` of a claimed row's outcome write (the fence): the row still has the status and
 * attempt count its claim left, so no other worker claimed it since (a new claim counts one more
 * attempt; an outcome moves the status or resets the count).
 */
function stillClaimed(row: Row, status: "pending" | "sent"): Prisma.SiiSubmissionWhereInput {
  return { id: row.id, status, attempts: row.attempts };
}

/** Logs the outcome of rows whose claim was lost (their lease ran out and another worker claimed them): dropped. */
function logLostClaims(deps: SiiSendingDeps, lost: Row[], outcome: string, trackId?: string): void {
  if (!lost.length) return;
  deps.logger.warn(
    {
      documents: lost.map((r) => r.documentId),
      attempts: lost.map((r) => r.attempts),
      outcome,
      ...(trackId ? { trackId } : {}),
    },
    "SII outcome dropped: the claim's lease ran out and another worker claimed the rows",
  );
}

/**
 * Records a failed attempt: backoff on the rows, `last_error` and the next attempt on the
 * documents; only for rows still claimed by this attempt (the others are logged and left).
 */
async function recordFailure(
  deps: SiiSendingDeps,
  rows: Row[],
  status: "pending" | "sent",
  error: string,
  now: Date,
): Promise<void> {
  const lost: Row[] = [];
  await deps.prisma.$transaction(async (tx) => {
    for (const row of rows) {
      const next = siiNextAttemptAt(row.attempts, now);
      const written = await tx.siiSubmission.updateMany({
        where: stillClaimed(row, status),
        data: { lastError: error, nextAttemptAt: next },
      });
      if (written.count === 0) {
        lost.push(row);
        continue;
      }
      await mergeTaxAgency(tx, row.documentKind, row.documentId, {
        updated_at: now.toISOString(),
        status: status === "pending" ? "pending" : "sent",
        attempts: row.attempts,
        next_attempt_at: next.toISOString(),
        last_error: error,
      });
    }
  });
  logLostClaims(deps, lost, `failure: ${error}`);
}

/** A row's verdict: its status, SII's message for it alone, and SII's record code (QueryEstDte) when it was asked. */
type Decided = { row: Row; status: TaxAgencyStatus; message?: string; recordStatus?: string };

/**
 * A DTE left for `review` (its type was partly rejected in a processed envelope, which does not
 * say which documents): asks SII for its record (QueryEstDte, with the receiver, date and total
 * read from the stored DTE) and decides with domain/sii-sending.ts documentStatusFromRecord. Any
 * failure leaves it in `review` with the reason as message: the envelope is decided either way.
 */
async function resolveReview(
  deps: SiiSendingDeps,
  row: Row,
  testMode: boolean,
  signer: SenderCredentials,
  rutCompany: string,
): Promise<Partial<Decided>> {
  try {
    const file = await deps.prisma.storedFile.findUnique({ where: { name: row.dteFile }, select: { content: true } });
    if (!file) throw new Error(`the signed DTE file ${row.dteFile} is missing`);
    const dte = parse(Buffer.from(file.content).toString("latin1"), "stored DTE");
    const [rutReceiver, issueDate, total] = [text(dte, "RUTRecep"), text(dte, "FchEmis"), text(dte, "MntTotal")];
    if (!rutReceiver || !issueDate || !total)
      throw new Error(`the signed DTE file ${row.dteFile} lacks RUTRecep, FchEmis or MntTotal`);
    const record = await transportFor(deps, testMode).documentStatus(signer, {
      rutQuerier: signer.subjectRut,
      rutCompany,
      rutReceiver,
      type: row.dteType,
      folio: row.folio,
      issueDate,
      total,
    });
    return { status: documentStatusFromRecord(record.estado), recordStatus: record.estado, message: record.glosa };
  } catch (e) {
    deps.logger.warn(
      { documentId: row.documentId, err: message(e) },
      "SII document status query failed; left for review",
    );
    return {
      message: `SII's envelope status does not say whether this DTE was rejected, and asking SII failed: ${message(e)}`,
    };
  }
}

/**
 * Records SII's decision for rows (status, and a message of its own when SII gave one per document) in one transaction,
 * for the rows still claimed by this poll (the others are logged and left to the worker that claimed them since):
 * each row (writeDecidedRow), the verdicts' events, then the exchanges of the rows kept (recordExchanges). `verdict`
 * is SII's code for the envelope (`sii_status`) and its message, the documents' when they have none of their own.
 * Returns how many were recorded.
 */
async function recordDecision(
  deps: SiiSendingDeps,
  decided: Decided[],
  verdict: Pick<EnvelopeVerdict, "estado" | "glosa">,
  now: Date,
  exchanges: PreparedExchange[] = [],
): Promise<number> {
  const lost: Row[] = [];
  await deps.prisma.$transaction(async (tx) => {
    const kept: Decided[] = [];
    for (const d of decided) {
      if (await writeDecidedRow(tx, d, verdict, now)) kept.push(d);
      else lost.push(d.row);
    }
    await recordVerdictEvents(deps, tx, kept, now);
    await recordExchanges(deps, tx, kept, exchanges, now);
  });
  logLostClaims(deps, lost, `decision: ${verdict.estado}`);
  return decided.length - lost.length;
}

/**
 * Writes SII's decision on one row, in `tx`, while this poll's claim still holds it (the fence; false when it no
 * longer does): the row done with SII's code, the document's taxAgency its status, `sii_status`, `sii_message` (its
 * own, else the envelope's), `sii_document_status` and `decided_at`, the retry keys cleared.
 */
async function writeDecidedRow(
  tx: Tx,
  decided: Decided,
  verdict: Pick<EnvelopeVerdict, "estado" | "glosa">,
  now: Date,
): Promise<boolean> {
  const { row, status, message: documentMessage, recordStatus } = decided;
  const written = await tx.siiSubmission.updateMany({
    where: stillClaimed(row, "sent"),
    data: { status: "done", siiStatus: verdict.estado, lastError: null },
  });
  if (written.count === 0) return false;
  await mergeTaxAgency(tx, row.documentKind, row.documentId, {
    updated_at: now.toISOString(),
    status,
    sii_status: verdict.estado,
    sii_message: documentMessage ?? verdict.glosa ?? null,
    sii_document_status: recordStatus ?? null,
    decided_at: now.toISOString(),
    attempts: null,
    next_attempt_at: null,
    last_error: null,
  });
  return true;
}

/**
 * The exchanges (services/sii-exchange.ts writeExchanges) of the documents among `kept` (rows of one organization and
 * mode), in the verdict's transaction `tx`: their e-mails `pending` for the outbox worker when SMTP_URL is set, else
 * `kept`, as reminders are. Nothing when none of `exchanges` is of a kept row.
 */
async function recordExchanges(
  deps: SiiSendingDeps,
  tx: Tx,
  kept: Decided[],
  exchanges: PreparedExchange[],
  now: Date,
): Promise<void> {
  const keptExchanges = exchanges.filter((x) => kept.some((d) => d.row.documentId === x.documentId));
  if (!keptExchanges.length) return;
  const { organizationId, testMode } = kept[0].row;
  // the outbox worker sends it (SMTP_URL set); else it is kept, as reminders are
  const delivery = deps.settings.smtpUrl
    ? { status: "pending" as const, attempts: 0, nextAttemptAt: now }
    : { status: "kept" as const, attempts: 0, nextAttemptAt: now };
  await writeExchanges(tx, { organizationId, testMode, now }, keptExchanges, mergeTaxAgency, delivery);
}

/** SII's final verdicts and the event each writes (docs/webhooks.md); `review` and the others write none. */
const VERDICT_EVENTS: [EventType, readonly TaxAgencyStatus[]][] = [
  ["tax_document.accepted", ["accepted", "accepted_with_objections"]],
  ["tax_document.rejected", ["rejected"]],
];

/**
 * The events of SII's verdicts on DTEs, in the transaction that records them: tax_document.accepted
 * or tax_document.rejected, `data.object` the invoice, order or credit note (with its tax_agency).
 */
async function recordVerdictEvents(
  deps: SiiSendingDeps,
  tx: Tx,
  verdicts: readonly { row: Row; status: TaxAgencyStatus }[],
  now: Date,
): Promise<void> {
  const ownerOf = (row: Row): ServiceContext => ({
    prisma: tx as unknown as PrismaClient,
    auth: { organizationId: row.organizationId, testMode: row.testMode, userEmail: "", apiKeyId: "" },
    now: () => now,
    settings: deps.settings,
    baseUrl: "",
    inTransaction: true,
  });
  for (const [type, statuses] of VERDICT_EVENTS)
    for (const kind of ["invoice", "order", "credit_note"] as const) {
      const items = verdicts
        .filter((v) => statuses.includes(v.status) && v.row.documentKind === kind)
        .map((v) => ({ ctx: ownerOf(v.row), id: v.row.documentId }));
      if (items.length) await recordTenantEvents(tx as unknown as PrismaClient, [type], kind, items);
    }
}

/**
 * The exchange of the DTEs SII just accepted (services/sii-exchange.ts): built and signed before
 * the verdict's transaction, recorded in it. A failure here never blocks recording SII's verdict.
 */
async function exchangesFor(
  deps: SiiSendingDeps,
  decided: Decided[],
  signer: SenderCredentials,
  now: Date,
): Promise<PreparedExchange[]> {
  const accepted = decided
    .filter((d) => d.status === "accepted" || d.status === "accepted_with_objections")
    .map((d) => d.row);
  if (!accepted.length) return [];
  try {
    const { organizationId, testMode } = accepted[0];
    const settings = await readSettings(deps.prisma, { organizationId, testMode });
    return await prepareExchanges(deps.prisma, accepted, settings, signer, now);
  } catch (e) {
    deps.logger.warn({ err: message(e) }, "DTE exchange could not be prepared");
    return accepted.map((r) => ({
      documentKind: r.documentKind,
      documentId: r.documentId,
      send: false as const,
      reason: message(e),
    }));
  }
}

/** DTEs travel in an EnvioDTE to DTEUpload; boletas (39, 41) in an EnvioBOLETA to SII's boleta API. */
type EnvelopeKind = "dte" | "boleta";

/** What an upload gave: SII received it (track id), refused the file for good, or must be asked again. */
interface UploadResult {
  outcome: "received" | "rejected" | "retry";
  trackId: string;
  /** SII's code: DTEUpload STATUS, or the boleta API's `estado` */
  code: string;
}

async function uploadEnvelopeFile(
  deps: SiiSendingDeps,
  kind: EnvelopeKind,
  testMode: boolean,
  signer: SenderCredentials,
  input: { rutSender: string; rutCompany: string; file: Buffer; fileName: string },
): Promise<UploadResult> {
  if (kind === "boleta") {
    const receipt = await boletaTransportFor(deps, testMode).upload(signer, input);
    return { outcome: "received", trackId: receipt.trackId, code: receipt.estado };
  }
  const receipt = await transportFor(deps, testMode).upload(signer, input);
  return { outcome: uploadOutcome(receipt.status), trackId: receipt.trackId, code: receipt.status };
}

/**
 * Uploads the claimed pending rows of one organization and mode: one EnvioDTE for DTEs, one EnvioBOLETA for boletas.
 */
async function uploadGroup(deps: SiiSendingDeps, rows: Row[], now: Date, report: SendReport): Promise<void> {
  const dtes = rows.filter((r) => !isBoletaType(r.dteType));
  const boletas = rows.filter((r) => isBoletaType(r.dteType));
  if (dtes.length) await uploadEnvelope(deps, "dte", dtes, now, report);
  if (boletas.length) await uploadEnvelope(deps, "boleta", boletas, now, report);
}

/** A built envelope: its signed file (ISO-8859-1 bytes), name, and who sends it for which company. */
interface BuiltEnvelope {
  file: Buffer;
  /** `sii-envio-<uuid>.xml`, or `sii-envio-boleta-<uuid>.xml` */
  name: string;
  signer: SenderCredentials;
  /** the issuer's RUT (`RutEmisor`, the upload's rutCompany) */
  taxId: string;
}

/**
 * Builds and signs the envelope of `kind` holding `rows`' signed DTE files (one organization and
 * mode): the Caratula from that mode's tax profile (RUT, SII's resolution number, 0 in
 * certification, and date) and the signing certificate's holder (RutEnvia). Throws an Error (the
 * rows are retried) when the profile, the certificate's RUT or a file is missing.
 */
async function buildEnvelope(deps: SiiSendingDeps, kind: EnvelopeKind, rows: Row[], now: Date): Promise<BuiltEnvelope> {
  const { organizationId, testMode } = rows[0];
  // the envelope's mode's profile and certificate (settings are per mode)
  const org = await readSettings(deps.prisma, { organizationId, testMode });
  const taxId = org.taxId;
  if (!taxId || !org.taxResolutionDate || (!testMode && org.taxResolutionNumber === null)) {
    throw new Error(
      `the ${testMode ? "test" : "live"} mode tax profile needs the RUT and SII's resolution number and date to ` +
        `send DTEs`,
    );
  }
  const signer = await credentials(deps, { organizationId, testMode }, now);
  if (!signer.subjectRut) throw new Error("the signing certificate has no holder RUT (RutEnvia)");
  const files = await deps.prisma.storedFile.findMany({
    where: { name: { in: rows.map((r) => r.dteFile) }, organizationId },
    select: { name: true, content: true },
  });
  const byName = new Map(files.map((f) => [f.name, Buffer.from(f.content)]));
  const missing = rows.filter((r) => !byName.has(r.dteFile));
  if (missing.length) throw new Error(`the signed DTE file ${missing[0].dteFile} is missing`);
  const build = kind === "boleta" ? buildEnvioBoleta : buildEnvioDte;
  const built = build({
    dtes: rows.map((r) => byName.get(r.dteFile)!),
    caratula: {
      rutEmisor: taxId,
      rutEnvia: signer.subjectRut,
      rutReceptor: SII_RUT,
      fchResol: org.taxResolutionDate.toISOString().slice(0, 10),
      // SII's certification environment takes resolution number 0 (chile-dte.md 5.1)
      nroResol: testMode ? 0 : org.taxResolutionNumber!,
    },
    credentials: signer,
    timestamp: now,
  });
  const name = `sii-envio-${kind === "boleta" ? "boleta-" : ""}${randomUUID()}.xml`;
  return { file: built.file, name, signer, taxId };
}

/**
 * Writes an upload's outcome on one row, in `tx`, while this claim still holds it (the fence;
 * false when it no longer does): received, the row is `sent` with its track id and first poll in
 * SII_POLL_DELAY_MS and the document `sent`; refused for good, both are done/`rejected` with
 * `upload:<code>`.
 */
async function writeUploadedRow(
  tx: Tx,
  row: Row,
  sent: UploadResult,
  envelopeName: string,
  now: Date,
): Promise<boolean> {
  const written = await tx.siiSubmission.updateMany({
    where: stillClaimed(row, "pending"),
    data:
      sent.outcome === "received"
        ? {
            status: "sent",
            trackId: sent.trackId,
            envelopeFile: envelopeName,
            sentAt: now,
            attempts: 0,
            nextAttemptAt: new Date(now.getTime() + SII_POLL_DELAY_MS),
            lastError: null,
            siiStatus: null,
          }
        : { status: "done", envelopeFile: envelopeName, siiStatus: `upload:${sent.code}`, lastError: null },
  });
  if (written.count === 0) return false;
  const decided =
    sent.outcome === "received"
      ? { status: "sent", track_id: sent.trackId, sent_at: now.toISOString() }
      : { status: "rejected", sii_status: `upload:${sent.code}` };
  await mergeTaxAgency(tx, row.documentKind, row.documentId, {
    updated_at: now.toISOString(),
    ...decided,
    envelope_file: `/v1/files/${envelopeName}`,
    ...(sent.outcome === "received" ? {} : { decided_at: now.toISOString() }),
    attempts: null,
    next_attempt_at: null,
    last_error: null,
  });
  return true;
}

/**
 * Records an upload in ONE transaction: each row still claimed (writeUploadedRow), then, when
 * any is, the envelope's file and, for a refused upload, the documents' rejected events. Returns
 * the rows written (`kept`) and those another worker claimed meanwhile (`lost`).
 */
async function recordUpload(
  deps: SiiSendingDeps,
  rows: Row[],
  upload: { sent: UploadResult; envelope: { file: Buffer; name: string } },
  now: Date,
): Promise<{ kept: Row[]; lost: Row[] }> {
  const { sent, envelope } = upload;
  const { organizationId, testMode } = rows[0];
  const lost: Row[] = [];
  const kept: Row[] = [];
  await deps.prisma.$transaction(async (tx) => {
    for (const row of rows) {
      if (await writeUploadedRow(tx, row, sent, envelope.name, now)) kept.push(row);
      else lost.push(row);
    }
    if (!kept.length) return;
    await storeFile(tx, {
      name: envelope.name,
      organizationId,
      testMode,
      contentType: "application/xml",
      content: envelope.file,
    });
    if (sent.outcome !== "received")
      await recordVerdictEvents(
        deps,
        tx,
        kept.map((row) => ({ row, status: "rejected" as const })),
        now,
      );
  });
  return { kept, lost };
}

/** Builds, signs, uploads and records one envelope of `kind` holding `rows` (one organization and mode). */
async function uploadEnvelope(
  deps: SiiSendingDeps,
  kind: EnvelopeKind,
  claimed: Row[],
  now: Date,
  report: SendReport,
): Promise<void> {
  let rows = claimed;
  const { organizationId, testMode } = rows[0];
  try {
    const envelope = await buildEnvelope(deps, kind, rows, now);
    const sent = await uploadEnvelopeFile(deps, kind, testMode, envelope.signer, {
      rutSender: envelope.signer.subjectRut,
      rutCompany: envelope.taxId,
      file: envelope.file,
      fileName: envelope.name,
    });
    if (sent.outcome === "retry") throw new Error(`SII did not take the upload (STATUS ${sent.code})`);
    const { kept, lost } = await recordUpload(deps, rows, { sent, envelope }, now);
    logLostClaims(deps, lost, `upload: ${sent.outcome} ${sent.code}`, sent.trackId);
    if (!kept.length) return;
    rows = kept;
    if (sent.outcome === "received") report.uploaded += rows.length;
    else report.decided += rows.length;
    report.envelopes += 1;
    deps.logger.info(
      { organizationId, testMode, kind, trackId: sent.trackId, status: sent.code, documents: rows.length },
      "SII upload",
    );
  } catch (e) {
    await recordFailure(deps, rows, "pending", message(e), now);
    report.retrying += rows.length;
    deps.logger.warn(
      { organizationId, testMode, kind, documents: rows.length, err: message(e) },
      "SII upload failed; retrying later",
    );
  }
}

/**
 * SII's answer about one upload, the same for both APIs: its code and what it means for each document once processed.
 */
interface EnvelopeVerdict {
  estado: string;
  glosa?: string;
  /** status (and SII's message, when it gave one per document) of a row once SII processed the envelope (EPR) */
  documentStatus: (row: Row) => { status: TaxAgencyStatus; message?: string };
}

/** An uploaded envelope to ask SII about: its mode (the host), API, issuer and track id. */
interface TrackedEnvelope {
  testMode: boolean;
  /** an EnvioBOLETA asks the boleta API, an EnvioDTE QueryEstUp */
  kind: EnvelopeKind;
  /** the issuer's RUT (the query's rutCompany) */
  rutCompany: string;
  trackId: string;
}

/**
 * SII's status of `envelope`, asked as `signer`'s holder (the envelope mode's host: certification
 * or production): its code, message, and each document's status once processed. Throws the
 * transport's error when SII cannot be asked or answers an error.
 */
async function askEnvelopeStatus(
  deps: SiiSendingDeps,
  signer: SenderCredentials,
  envelope: TrackedEnvelope,
): Promise<EnvelopeVerdict> {
  const { testMode, rutCompany, trackId } = envelope;
  if (envelope.kind === "boleta") {
    const status = await boletaTransportFor(deps, testMode).status(signer, { rutCompany, trackId });
    return {
      estado: status.estado,
      documentStatus: (row) => {
        const detail = status.details.find((d) => d.type === row.dteType && d.folio === row.folio);
        return { status: boletaStatusFromDetail(detail), message: detail?.message || undefined };
      },
    };
  }
  const status: UploadStatus = await transportFor(deps, testMode).status(signer, { rutCompany, trackId });
  return {
    estado: status.estado,
    glosa: status.glosa,
    documentStatus: (row) => ({ status: documentStatusFromCounts(status.counts.find((c) => c.type === row.dteType)) }),
  };
}

/** Asks SII for the status of one track id (DTE or boleta API by the rows' type) and records what it says. */
async function pollGroup(deps: SiiSendingDeps, rows: Row[], now: Date, report: SendReport): Promise<void> {
  const { organizationId, testMode, trackId } = rows[0];
  try {
    const taxId = (await readSettings(deps.prisma, { organizationId, testMode })).taxId;
    if (!taxId) throw new Error(`the ${testMode ? "test" : "live"} mode tax profile has no RUT`);
    const signer = await credentials(deps, { organizationId, testMode }, now);
    const verdict = await askEnvelopeStatus(deps, signer, {
      testMode,
      kind: isBoletaType(rows[0].dteType) ? "boleta" : "dte",
      rutCompany: taxId,
      trackId: trackId!,
    });
    const outcome = envelopeOutcome(verdict.estado);
    if (outcome === "retry")
      throw new Error(`SII status query answered ${verdict.estado}${verdict.glosa ? ` (${verdict.glosa})` : ""}`);
    if (outcome === "in_progress") {
      const lost: Row[] = [];
      await deps.prisma.$transaction(async (tx) => {
        for (const row of rows) {
          const written = await tx.siiSubmission.updateMany({
            where: stillClaimed(row, "sent"),
            data: { siiStatus: verdict.estado, lastError: null, nextAttemptAt: siiNextAttemptAt(row.attempts, now) },
          });
          if (written.count === 0) {
            lost.push(row);
            continue;
          }
          await mergeTaxAgency(tx, row.documentKind, row.documentId, {
            updated_at: now.toISOString(),
            sii_status: verdict.estado,
            last_error: null,
          });
        }
      });
      logLostClaims(deps, lost, `in progress: ${verdict.estado}`, trackId!);
      return;
    }
    const decided: Decided[] = rows.map((row) =>
      outcome === "processed" ? { row, ...verdict.documentStatus(row) } : { row, status: outcome as TaxAgencyStatus },
    );
    for (const d of decided) {
      if (d.status === "review") Object.assign(d, await resolveReview(deps, d.row, testMode, signer, taxId));
    }
    report.decided += await recordDecision(deps, decided, verdict, now, await exchangesFor(deps, decided, signer, now));
    deps.logger.info(
      { organizationId, testMode, trackId, estado: verdict.estado, documents: rows.length },
      "SII decided",
    );
  } catch (e) {
    await recordFailure(deps, rows, "sent", message(e), now);
    report.retrying += rows.length;
    deps.logger.warn({ organizationId, testMode, trackId, err: message(e) }, "SII status query failed; retrying later");
  }
}

function groupBy(rows: Row[], key: (r: Row) => string): Row[][] {
  const groups = new Map<string, Row[]>();
  for (const r of rows) groups.set(key(r), [...(groups.get(key(r)) ?? []), r]);
  return [...groups.values()];
}

/**
 * One round: uploads every due pending DTE (one EnvioDTE per organization and mode) and polls
 * every due sent envelope. Never throws for SII or network trouble (it is recorded on the rows
 * and documents); returns what happened. `signal` (the server stopping) skips the polling half
 * when it is aborted after the uploads.
 */
export async function sendDueSubmissions(
  deps: SiiSendingDeps,
  now: Date = new Date(),
  signal?: AbortSignal,
): Promise<SendReport> {
  const report: SendReport = { uploaded: 0, envelopes: 0, decided: 0, retrying: 0 };
  const pending = await claim(deps.prisma, "pending", now);
  for (const group of groupBy(pending, (r) => `${r.organizationId}/${r.testMode}`))
    await uploadGroup(deps, group, now, report);
  // stopping (server shutdown): what was claimed is uploaded; the polls wait for the next round
  if (signal?.aborted) return report;
  const sent = await claim(deps.prisma, "sent", now);
  for (const group of groupBy(sent, (r) => `${r.organizationId}/${r.testMode}/${r.trackId}`))
    await pollGroup(deps, group, now, report);
  return report;
}

export type SiiWorker = IntervalWorker;

/** Runs `sendDueSubmissions` every `intervalMs` (one round at a time) until `stop`. */
export function startSiiWorker(deps: SiiSendingDeps, intervalMs: number): SiiWorker {
  return startIntervalWorker(
    (signal) =>
      sendDueSubmissions(deps, new Date(), signal)
        .then((r) => (r.uploaded || r.decided || r.retrying) && deps.logger.info({ ...r }, "SII round"))
        .catch((e) => deps.logger.error({ err: e }, "SII round failed")),
    intervalMs,
  );
}
