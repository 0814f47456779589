/**
 * The DTE exchange (intercambio) with receivers, outbound half (docs/sii-exchange.md): once SII
 * accepts a DTE (accepted, or accepted with objections), the issuer sends it to the receiver's
 * exchange e-mail address in an EnvioDTE addressed to the receiver (`RutReceptor` = the DTE's
 * `RUTRecep`), signed with the organization's certificate, with the document's PDF.
 *
 * - `prepareExchanges` (outside any transaction, by the SII worker after SII's verdict): per
 *   accepted DTE, the address (the customer's `tax_settings.exchange_email`, else the DTE's
 *   `CorreoRecep`) and the signed EnvioDTE; or why it is not sent (no address, a boleta, a generic
 *   receiver RUT).
 * - `writeExchanges` (inside the transaction that records SII's verdict): the envelope as a
 *   StoredFile, one OutboxMessage (kind `dte_exchange`, the PDF rendered at delivery, the envelope
 *   attached from `files`) and `exchange_*` keys in the document's `taxAgency`. The mail outbox
 *   (services/outbox.ts) delivers it with its retries and marks `exchange_sent_at` on success.
 */
import { randomUUID } from "node:crypto";
import type { PrismaClient, SiiSubmission } from "../infra/prisma/generated/client.js";
import { buildEnvioDte, isBoletaType } from "../infra/taxagency/sii/envelope.js";
import { dteParties } from "../infra/taxagency/sii/dte-parties.js";
import { decodeIso88591 } from "../infra/taxagency/sii/encoding.js";
import { FINAL_CONSUMER_RUT } from "../infra/taxagency/sii/dte.js";
import { InvalidStateError, ValidationError } from "../domain/errors.js";
import { normalizeRut } from "../domain/rut.js";
import { dteTypeName } from "../domain/dte-rules.js";
import { nextReceiverStatus, receiverStatusOf, type ReceiverStatus } from "../domain/receiver-status.js";
import {
  readReceiverAnswer,
  type AnsweredDte,
  type ReceiverAnswer,
  type ReceiverAnswerKind,
} from "../infra/taxagency/sii/receiver-answers.js";
import { tenant, type ServiceContext, type TenantKey, type Tx } from "./context.js";
import { storeFile } from "./files.js";
import { xmlFileInput } from "./swaps.js";
import type { SigningCredentials } from "../infra/taxagency/sii/signature.js";
import { mergeTaxAgency, readTaxAgency, type SubmissionKind } from "./tax-agency-state.js";
import { readSettings, type OrganizationSettings } from "./organization-settings.js";

/** RUTs that are no taxpayer with an exchange address: SII's final consumer (boletas) and foreign receiver. */
const NO_EXCHANGE_RUTS = new Set([FINAL_CONSUMER_RUT, "55555555-5"]);

/** Outbox message kind of an exchange e-mail (`OutboxMessage.kind`). */
export const EXCHANGE_MESSAGE_KIND = "dte_exchange";

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** A DTE SII accepted, as the worker knows it (its SiiSubmission row; `dteFile` the stored signed DTE's name). */
export type AcceptedDte = Pick<
  SiiSubmission,
  "organizationId" | "testMode" | "documentId" | "dteType" | "folio" | "dteFile"
> & { documentKind: SubmissionKind };

/** What `writeExchanges` records for one accepted DTE. */
export type PreparedExchange =
  | {
      documentKind: SubmissionKind;
      documentId: string;
      send: true;
      to: string;
      receiverRut: string;
      envelope: { name: string; file: Buffer };
      subject: string;
      body: string;
    }
  | { documentKind: SubmissionKind; documentId: string; send: false; reason: string };

/** The customer's exchange address from its `tax_settings` (`exchange_email`), if it is an e-mail. */
function exchangeEmailOf(taxSettings: unknown): string | null {
  const value =
    taxSettings && typeof taxSettings === "object" ? (taxSettings as Record<string, unknown>).exchange_email : null;
  return typeof value === "string" && EMAIL.test(value.trim()) ? value.trim() : null;
}

async function customerTaxSettings(prisma: PrismaClient, kind: SubmissionKind, id: string): Promise<unknown> {
  const select = { customer: { select: { taxSettings: true } } } as const;
  if (kind === "invoice") return (await prisma.invoice.findUnique({ where: { id }, select }))?.customer.taxSettings;
  if (kind === "order") return (await prisma.order.findUnique({ where: { id }, select }))?.customer.taxSettings;
  return (await prisma.creditNote.findUnique({ where: { id }, select: { invoice: { select } } }))?.invoice.customer
    .taxSettings;
}

/**
 * Builds the exchange of each accepted DTE of one organization and mode (reads only; signs with
 * `signer`). Never throws for one document's trouble: it becomes `{send: false, reason}`.
 */
export async function prepareExchanges(
  prisma: PrismaClient,
  dtes: readonly AcceptedDte[],
  settings: Pick<OrganizationSettings, "taxId" | "taxBusinessName" | "taxResolutionDate" | "taxResolutionNumber">,
  signer: SigningCredentials & { subjectRut: string },
  now: Date,
): Promise<PreparedExchange[]> {
  const out: PreparedExchange[] = [];
  for (const dte of dtes) {
    const base = { documentKind: dte.documentKind, documentId: dte.documentId };
    if (isBoletaType(dte.dteType)) continue; // boletas go to final consumers, not through the exchange
    try {
      const file = await prisma.storedFile.findUnique({ where: { name: dte.dteFile }, select: { content: true } });
      if (!file) throw new Error(`the signed DTE file ${dte.dteFile} is missing`);
      const content = Buffer.from(file.content);
      const parties = dteParties(decodeIso88591(content));
      const receiverRut = parties?.receiver.rut ?? null;
      if (!receiverRut) throw new Error("the DTE has no RUTRecep");
      if (NO_EXCHANGE_RUTS.has(receiverRut)) {
        out.push({
          ...base,
          send: false,
          reason: `the receiver ${receiverRut} is SII's generic RUT, with no exchange address`,
        });
        continue;
      }
      const to =
        exchangeEmailOf(await customerTaxSettings(prisma, dte.documentKind, dte.documentId)) ??
        (parties?.receiver.email && EMAIL.test(parties.receiver.email) ? parties.receiver.email : null);
      if (!to) {
        out.push({
          ...base,
          send: false,
          reason: "no exchange address: the customer has no tax_settings.exchange_email and the DTE no CorreoRecep",
        });
        continue;
      }
      if (!settings.taxId || !settings.taxResolutionDate)
        throw new Error("the tax profile needs the RUT and SII's resolution date");
      const built = buildEnvioDte({
        dtes: [content],
        caratula: {
          rutEmisor: settings.taxId,
          rutEnvia: signer.subjectRut,
          rutReceptor: receiverRut,
          fchResol: settings.taxResolutionDate.toISOString().slice(0, 10),
          nroResol: dte.testMode ? 0 : (settings.taxResolutionNumber ?? 0),
        },
        credentials: signer,
        timestamp: now,
      });
      const typeName = dteTypeName(dte.dteType);
      const issuer = settings.taxBusinessName ?? settings.taxId;
      out.push({
        ...base,
        send: true,
        to,
        receiverRut,
        envelope: { name: `sii-intercambio-${randomUUID()}.xml`, file: built.file },
        subject: `${typeName} N° ${dte.folio} de ${issuer} (RUT ${settings.taxId})`,
        body:
          `Se adjunta el envío (EnvioDTE) de la ${typeName.toLowerCase()} N° ${dte.folio}, aceptada por el SII, ` +
          `emitida por ${issuer} (RUT ${settings.taxId}) a RUT ${receiverRut}, y su representación impresa (PDF).\n\n` +
          `Las respuestas de intercambio (RecepcionDTE, ResultadoDTE, EnvioRecibos) pueden enviarse a esta ` +
          `dirección.\n`,
      });
    } catch (e) {
      out.push({ ...base, send: false, reason: e instanceof Error ? e.message : String(e) });
    }
  }
  return out;
}

/** Whose exchanges writeExchanges records, and when: the organization and mode, and the instant of SII's verdict. */
export interface ExchangeOwner extends TenantKey {
  now: Date;
}

/** The delivery state of a new exchange e-mail (`pending` for the outbox worker, or `kept` without SMTP). */
export type ExchangeDelivery = { status: "pending" | "kept"; attempts: number; nextAttemptAt: Date };

/** The worker's taxAgency merge (tax-agency-state.ts mergeTaxAgency; null removes a key). */
export type TaxAgencyMerge = (
  tx: Tx,
  kind: SubmissionKind,
  id: string,
  values: Record<string, unknown>,
) => Promise<void>;

/**
 * Records prepared exchanges in `tx` (the transaction of SII's verdict): per sent one the stored
 * envelope, an OutboxMessage in state `delivery` and `exchange_to`, `exchange_file`,
 * `exchange_message`, `exchange_queued_at` (`owner.now`) on the document's taxAgency; per unsent
 * one `exchange_error`. `merge` writes the taxAgency keys. Returns the new outbox messages' ids.
 */
export async function writeExchanges(
  tx: Tx,
  owner: ExchangeOwner,
  prepared: readonly PreparedExchange[],
  merge: TaxAgencyMerge,
  delivery: ExchangeDelivery,
): Promise<string[]> {
  const ids: string[] = [];
  for (const p of prepared) {
    if (!p.send) {
      await merge(tx, p.documentKind, p.documentId, { exchange_error: p.reason });
      continue;
    }
    const id = await queueExchange(tx, owner, p, delivery);
    ids.push(id);
    await merge(tx, p.documentKind, p.documentId, {
      exchange_to: p.to,
      exchange_file: `/v1/files/${p.envelope.name}`,
      exchange_message: id,
      exchange_queued_at: owner.now.toISOString(),
      exchange_error: null,
    });
  }
  return ids;
}

/**
 * One exchange to send, in `tx`: its envelope stored as a StoredFile of `owner`, then its e-mail as an
 * OutboxMessage (kind `dte_exchange`, the document's PDF and the envelope attached) in state
 * `delivery`. Returns the message's id.
 */
async function queueExchange(
  tx: Tx,
  owner: TenantKey,
  p: Extract<PreparedExchange, { send: true }>,
  delivery: ExchangeDelivery,
): Promise<string> {
  const { organizationId, testMode } = owner;
  await storeFile(tx, {
    name: p.envelope.name,
    organizationId,
    testMode,
    contentType: "application/xml",
    content: p.envelope.file,
  });
  const id = randomUUID();
  await tx.outboxMessage.create({
    data: {
      id,
      organizationId,
      testMode,
      kind: EXCHANGE_MESSAGE_KIND,
      recipients: [p.to],
      subject: p.subject,
      body: p.body,
      attachmentKind: p.documentKind,
      attachmentId: p.documentId,
      files: [p.envelope.name],
      ...delivery,
    },
  });
  return id;
}

// ---------------------------------------------------------------------------------------------
// Inbound: the receiver's answers (docs/sii-exchange.md "Inbound")

export interface ReceiverAnswerInput {
  /** the answer as text */
  xml?: string | null;
  /** or the file's bytes in Base64 (keeps SII's ISO-8859-1 bytes exactly) */
  file?: string | null;
}

/** One document an answer was recorded on. */
export interface RecordedAnswer {
  documentKind: SubmissionKind;
  documentId: string;
  type: number;
  folio: number;
  /** the document's receiver_status after the answer */
  receiverStatus: ReceiverStatus;
}

export interface RecordedReceiverAnswer {
  kind: ReceiverAnswerKind;
  /** the stored answer's file name (served at /v1/files/<name>) */
  file: string;
  documents: RecordedAnswer[];
}

/** `MntTotal`, `FchEmis` and `RUTRecep` of a stored signed DTE. */
function issuedFields(content: Buffer): { total: string | null; issueDate: string | null; receiverRut: string | null } {
  const xml = decodeIso88591(content);
  const pick = (name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1]?.trim() ?? null;
  return { total: pick("MntTotal"), issueDate: pick("FchEmis"), receiverRut: pick("RUTRecep")?.toUpperCase() ?? null };
}

/**
 * The organization's RUT in the caller's mode (its tax profile's `taxId`, normalized); a 409 when
 * it has none, since an answer can only be checked against it.
 */
async function answeringOrganizationRut(ctx: ServiceContext): Promise<string> {
  const settings = await readSettings(ctx.prisma, tenant(ctx));
  const rut = settings.taxId ? normalizeRut(settings.taxId) : null;
  if (!rut)
    throw new InvalidStateError(
      `The organization has no valid tax ID (RUT) in ${ctx.auth.testMode ? "test" : "live"} mode: set that mode's ` +
        `tax profile before recording receivers' answers`,
    );
  return rut;
}

/** The submission an answered DTE was sent in: which document it is and its signed DTE file. */
type AnsweredSubmission = { documentKind: string; documentId: string; dteFile: string };

/** An answered DTE found among ours, or why it was not (a problem of the 400). */
type AnswerMatch = { found: { dte: AnsweredDte; submission: AnsweredSubmission } } | { problem: string };

function answeredName(d: AnsweredDte): string {
  return `DTE type ${d.type} folio ${d.folio}`;
}

/**
 * What the answer says that differs from the DTE as issued (`issuedFields` of its stored file;
 * each field only when the file has it): the document's `RUTRecep`, the answer's `RutResponde`
 * (both must be the receiver issued to), `FchEmis` and `MntTotal`.
 */
function issuedMismatches(d: AnsweredDte, responderRut: string, issued: ReturnType<typeof issuedFields>): string[] {
  return [
    issued.receiverRut && normalizeRut(d.receiverRut) !== normalizeRut(issued.receiverRut)
      ? `RUTRecep ${d.receiverRut} (issued to ${issued.receiverRut})`
      : null,
    issued.receiverRut && normalizeRut(responderRut) !== normalizeRut(issued.receiverRut)
      ? `RutResponde ${responderRut} (issued to ${issued.receiverRut})`
      : null,
    issued.issueDate && d.issueDate !== issued.issueDate ? `FchEmis ${d.issueDate} (issued ${issued.issueDate})` : null,
    issued.total && d.total !== issued.total ? `MntTotal ${d.total} (issued ${issued.total})` : null,
  ].filter((m): m is string => !!m);
}

/**
 * Finds the answered DTE `d` among the organization's (RUT `rut`) submissions in the caller's
 * mode, the latest of its type and folio, and checks it against the DTE as issued.
 */
async function matchAnsweredDte(
  ctx: ServiceContext,
  d: AnsweredDte,
  answer: ReceiverAnswer,
  rut: string,
): Promise<AnswerMatch> {
  if (normalizeRut(d.issuerRut) !== rut)
    return {
      problem: `${answeredName(d)} was issued by RUT ${d.issuerRut} (RUTEmisor), not by this organization (${rut})`,
    };
  const submission = await ctx.prisma.siiSubmission.findFirst({
    where: { ...tenant(ctx), dteType: d.type, folio: d.folio },
    orderBy: { createdAt: "desc" },
    select: { documentKind: true, documentId: true, dteFile: true },
  });
  if (!submission)
    return {
      problem:
        `${answeredName(d)}: no such DTE issued by this organization in ` +
        `${ctx.auth.testMode ? "test" : "live"} mode`,
    };
  const file = await ctx.prisma.storedFile.findUnique({
    where: { name: submission.dteFile },
    select: { content: true },
  });
  const issued = file ? issuedFields(Buffer.from(file.content)) : { total: null, issueDate: null, receiverRut: null };
  const mismatches = issuedMismatches(d, answer.responderRut, issued);
  if (mismatches.length)
    return {
      problem:
        `${answeredName(d)} does not match the document issued (${submission.documentId}): ` + mismatches.join(", "),
    };
  return { found: { dte: d, submission } };
}

/**
 * The answer's documents with their submissions, after checking the answer is addressed to `rut`
 * (`RutRecibe`) and names at least one document; a 400 listing every document that is not ours or
 * does not match.
 */
async function answeredDocuments(
  ctx: ServiceContext,
  answer: ReceiverAnswer,
  rut: string,
): Promise<{ dte: AnsweredDte; submission: AnsweredSubmission }[]> {
  if (normalizeRut(answer.recipientRut) !== rut) {
    throw ValidationError.field(
      "xml",
      `the answer is addressed to RUT ${answer.recipientRut} (RutRecibe), not to this organization (${rut})`,
    );
  }
  if (!answer.documents.length) throw ValidationError.field("xml", "the answer names no document");
  const problems: string[] = [];
  const found: { dte: AnsweredDte; submission: AnsweredSubmission }[] = [];
  for (const d of answer.documents) {
    const match = await matchAnsweredDte(ctx, d, answer, rut);
    if ("problem" in match) problems.push(match.problem);
    else found.push(match.found);
  }
  if (problems.length) throw ValidationError.field("xml", problems.join("; "));
  return found;
}

/**
 * Records the answer on one document's `taxAgency`, in `tx`: the answer's file is appended to
 * `receiver_files`; `receiver_status` (with code, message and `now`) changes only when
 * domain/receiver-status.ts `nextReceiverStatus` takes the answer's status.
 */
async function recordAnswerOn(
  tx: Tx,
  answered: { dte: AnsweredDte; submission: AnsweredSubmission },
  answer: { kind: ReceiverAnswerKind; fileName: string; now: Date },
): Promise<RecordedAnswer> {
  const { dte, submission } = answered;
  const kind = submission.documentKind as SubmissionKind;
  const current = (await readTaxAgency(tx, kind, submission.documentId)) ?? {};
  const incoming = receiverStatusOf(answer.kind, dte.code);
  const status = nextReceiverStatus(current.receiver_status, incoming);
  const files = Array.isArray(current.receiver_files) ? (current.receiver_files as unknown[]) : [];
  await mergeTaxAgency(tx, kind, submission.documentId, {
    ...(status === incoming
      ? {
          receiver_status: status,
          receiver_code: dte.code,
          receiver_message: dte.text,
          receiver_status_at: answer.now.toISOString(),
        }
      : {}),
    receiver_files: [...files, `/v1/files/${answer.fileName}`],
  });
  return {
    documentKind: kind,
    documentId: submission.documentId,
    type: dte.type,
    folio: dte.folio,
    receiverStatus: status,
  };
}

/**
 * Records a receiver's answer (RecepcionDTE, ResultadoDTE or EnvioRecibos) to DTEs the caller's
 * organization issued, in the caller's mode: the file is validated against SII's schema and its
 * signatures verified (infra/taxagency/sii/receiver-answers.ts), every document it names must be
 * ours, then in ONE transaction the file is stored (`sii-respuesta-<uuid>.xml`) and each
 * document's `taxAgency` gets `receiver_status` (domain/receiver-status.ts), `receiver_code`,
 * `receiver_message`, `receiver_status_at` and the file in `receiver_files`.
 *
 * Errors, nothing written: 400 `xml`/`file` (not exactly one; not Base64; malformed; schema; a
 * signature that does not verify; `RutRecibe` or a document's `RUTEmisor` not the organization's
 * RUT; a document we never issued or never sent to SII in this mode, named by type and folio; a
 * document whose `RUTRecep`, `RutResponde`, `FchEmis` or `MntTotal` differ from what we issued);
 * 409 when the organization has no RUT in this mode.
 */
export async function recordReceiverAnswer(
  ctx: ServiceContext,
  input: ReceiverAnswerInput,
): Promise<RecordedReceiverAnswer> {
  const bytes = xmlFileInput(input, "the answer");
  const answer = await readReceiverAnswer(bytes);
  const rut = await answeringOrganizationRut(ctx);
  const found = await answeredDocuments(ctx, answer, rut);
  const now = ctx.now();
  const fileName = `sii-respuesta-${randomUUID()}.xml`;
  const content = typeof bytes === "string" ? Buffer.from(bytes, "utf8") : bytes;
  return ctx.prisma.$transaction(async (tx) => {
    await storeFile(tx, { name: fileName, ...tenant(ctx), contentType: "application/xml", content });
    const documents: RecordedAnswer[] = [];
    for (const answered of found)
      documents.push(await recordAnswerOn(tx, answered, { kind: answer.kind, fileName, now }));
    return { kind: answer.kind, file: fileName, documents };
  });
}
