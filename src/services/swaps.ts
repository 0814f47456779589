/**
 * Receiving supplier documents: purchases and swaps (docs/sii-receiving.md).
 *
 * receivePurchaseDocuments: an EnvioDTE (XML text or the file's bytes) is read and checked against
 * SII's schema (infra/taxagency/sii/envelope.ts); every DTE must be addressed to the
 * organization's RUT; in ONE transaction each DTE becomes a Purchase (`pur_`), the envelope a Swap
 * (`swa_`, imported true), the file a StoredFile (`local_file`) and the signed RecepcionDTE
 * another (`reception`). Any failure stores nothing.
 *
 * replyToSwap: the reply (ACD, ERM, RCD, RFP, RFT; rules in domain/swap-replies.ts) is recorded
 * once with `reply_by` (the key's user) and `reply_date`, with the signed ResultadoDTE (`result`)
 * and, for ERM, the signed EnvioRecibos (`receipt`), in one transaction.
 *
 * Signing needs the organization's certificate: callers pass a CredentialsLoader (the API passes
 * the one reading the uploaded certificate).
 */
import { Prisma, type Purchase, type Swap } from "../infra/prisma/generated/client.js";
import { newId } from "../infra/ids.js";
import { InvalidStateError, NotFoundError, ValidationError } from "../domain/errors.js";
import { normalizeRut } from "../domain/rut.js";
import { checkSwapReply, proposeSwapReply, SWAP_REPLY_STATUSES, type ProposedReply } from "../domain/swap-replies.js";
import {
  buildEnvioRecibos,
  buildRecepcionDte,
  buildResultadoDte,
  readEnvioDte,
  verifyReceivedDte,
  type AnsweredDocument,
  type DteVerification,
  type ReceivedEnvelope,
  type ResponseHeader,
  type SigningCredentials,
} from "../infra/taxagency/sii/index.js";
import { renderSwapPdfOffThread } from "../infra/threads/pool.js";
import { lockTenantRow, tenant, withinTransaction, type ServiceContext, type Tx } from "./context.js";
import { recordEvents } from "./events.js";
import { storeFile } from "./files.js";
import { readSettings } from "./organization-settings.js";

/** The organization's signing certificate and key; `signerRut` is the holder's RUT (Recibo `RutFirma`). */
export type SwapSigner = SigningCredentials & { signerRut?: string | null };
export type CredentialsLoader = (tx: Tx, organizationId: string) => Promise<SwapSigner>;

export interface ReceiveInput {
  /** the EnvioDTE as text */
  xml?: string | null;
  /** or the file's bytes in Base64 (keeps SII's ISO-8859-1 bytes exactly) */
  file?: string | null;
  /** the received file's name (RecepcionEnvio `NmbEnvio`); default `<swap id>.xml` */
  fileName?: string | null;
}

/** Name of a swap's stored file: `<swap id>-<kind>.xml`, served at /v1/files/<name>. */
export function swapFileName(swapId: string, kind: "envio" | "recepcion" | "resultado" | "recibos"): string {
  return `${swapId}-${kind}.xml`;
}

/**
 * An uploaded XML file given as exactly one of `xml` (text) or `file` (Base64 of its bytes, kept as
 * they are): the text, or the bytes. 400 `xml` when not exactly one is given, `file` when not Base64.
 * Used for EnvioDTE imports and for receivers' answers (services/sii-exchange.ts).
 */
export function xmlFileInput(
  input: { xml?: string | null; file?: string | null },
  what = "the EnvioDTE",
): Buffer | string {
  const given = [input.xml, input.file].filter((v) => v !== null && v !== undefined && v !== "");
  if (given.length !== 1)
    throw ValidationError.field("xml", `give ${what} as exactly one of xml (text) or file (Base64)`);
  if (input.xml) return input.xml;
  const b64 = input.file!.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.length % 4 !== 0)
    throw ValidationError.field("file", "must be Base64");
  return Buffer.from(b64, "base64");
}

function isUniqueViolation(e: unknown): boolean {
  return e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002";
}

/**
 * The receiver: the organization's name and the caller's mode's tax profile (settings are per mode), with its RUT
 * normalized. 409 without a valid RUT.
 */
async function organizationRut(db: Pick<Tx, "organization" | "organizationSettings">, ctx: ServiceContext) {
  const { name } = await db.organization.findUniqueOrThrow({
    where: { id: ctx.auth.organizationId },
    select: { name: true },
  });
  const org = { ...(await readSettings(db, tenant(ctx))), name };
  const rut = org.taxId ? normalizeRut(org.taxId) : null;
  if (!rut)
    throw new InvalidStateError(
      `The organization has no valid tax ID (RUT) in ${ctx.auth.testMode ? "test" : "live"} mode: set that mode's ` +
        `tax profile before receiving or answering SII documents`,
    );
  return { ...org, rut };
}

function header(rut: string, issuerRut: string, signedAt: Date, contactEmail?: string | null): ResponseHeader {
  return { responderRut: rut, recipientRut: issuerRut, contactEmail, signedAt };
}

/** A received envelope, checked, with what its purchases are keyed by and how each DTE verified. */
interface ReceivedDocuments {
  envelope: ReceivedEnvelope;
  /** each DTE's unique key: issuer (normalized RUT), SII document type, folio */
  keys: { issuerTaxId: string; documentCode: number; folio: number }[];
  /** each DTE's issuer signature and timbre (TED) checks, in the envelope's order */
  verifications: DteVerification[];
  /** the receiving organization (its name and tax profile, RUT normalized) */
  org: Awaited<ReturnType<typeof organizationRut>>;
  /** the file as received (SII's ISO-8859-1 bytes kept) */
  fileBytes: Buffer;
  /** the received file's name (RecepcionEnvio `NmbEnvio`), if given */
  fileName?: string | null;
  swapId: string;
  now: Date;
}

/**
 * Imports an EnvioDTE. Errors (nothing stored): 400 `xml` (not exactly one of xml/file, malformed,
 * schema-invalid, a DTE or the envelope addressed to another RUT), 409 (the organization has no
 * RUT; a document already received: same issuer, type and folio), and the loader's errors.
 */
export async function receivePurchaseDocuments(
  ctx: ServiceContext,
  input: ReceiveInput,
  loadCredentials: CredentialsLoader,
): Promise<Swap> {
  const bytes = xmlFileInput(input);
  const envelope = await readEnvioDte(bytes);
  const org = await organizationRut(ctx.prisma, ctx);
  checkAddressedTo(envelope, org.rut);
  const keys = purchaseKeys(envelope);
  const received: ReceivedDocuments = {
    envelope,
    keys,
    // the issuer's signature and the timbre of each DTE (infra/taxagency/sii/received-verification.ts):
    // recorded per purchase, never a reason to refuse the envelope (a forged document must be kept to be claimed)
    verifications: envelope.documents.map((d) => verifyReceivedDte(d.xml)),
    org,
    fileBytes: typeof bytes === "string" ? Buffer.from(bytes, "utf8") : bytes,
    fileName: input.fileName,
    swapId: newId("swa"),
    now: ctx.now(),
  };
  try {
    return await ctx.prisma.$transaction((tx) => storeReceived(ctx, tx, received, loadCredentials));
  } catch (e) {
    if (isUniqueViolation(e))
      throw new InvalidStateError(
        `Already received: ${keys
          .map((k) => `type ${k.documentCode} folio ${k.folio} ` + `from ${k.issuerTaxId}`)
          .join(", ")} (a purchase is unique per issuer, type and folio)`,
      );
    throw e;
  }
}

/** 400 `xml` unless every DTE is addressed to `rut`, and the envelope (Caratula RutReceptor) to `rut` or SII. */
function checkAddressedTo(envelope: ReceivedEnvelope, rut: string): void {
  const wrong = envelope.documents.filter((d) => normalizeRut(d.receiverRut) !== rut);
  if (wrong.length) {
    throw ValidationError.field(
      "xml",
      wrong
        .map(
          (d) =>
            `DTE type ${d.type} folio ${d.folio} is addressed to RUT ${d.receiverRut}, not to this organization ` +
            `(${rut})`,
        )
        .join("; "),
    );
  }
  if (envelope.receiverRut !== rut && envelope.receiverRut !== "60803000-K") {
    throw ValidationError.field(
      "xml",
      `the envelope (Caratula RutReceptor) is addressed to RUT ${envelope.receiverRut}, not to this organization ` +
        `(${rut}) or SII`,
    );
  }
}

/** Each DTE's purchase key (issuer, type, folio); 400 `xml` when the envelope holds one twice. */
function purchaseKeys(envelope: ReceivedEnvelope): ReceivedDocuments["keys"] {
  const keys = envelope.documents.map((d) => ({
    issuerTaxId: normalizeRut(d.issuerRut) ?? d.issuerRut,
    documentCode: d.type,
    folio: d.folio,
  }));
  const seen = new Set<string>();
  for (const k of keys) {
    const key = `${k.issuerTaxId}/${k.documentCode}/${k.folio}`;
    if (seen.has(key))
      throw ValidationError.field(
        "xml",
        `the envelope holds DTE type ${k.documentCode} folio ${k.folio} of ${k.issuerTaxId} twice`,
      );
    seen.add(key);
  }
  return keys;
}

/**
 * Stores a received envelope in `tx`: 409 when one of its documents was received before; else the swap, its
 * purchases, the file and the signed RecepcionDTE, and the `swap.received` event.
 */
async function storeReceived(
  ctx: ServiceContext,
  tx: Tx,
  received: ReceivedDocuments,
  loadCredentials: CredentialsLoader,
): Promise<Swap> {
  const { envelope, keys, verifications, swapId, now } = received;
  const existing = await tx.purchase.findMany({
    where: { ...tenant(ctx), OR: keys },
    select: { id: true, documentCode: true, folio: true, issuerTaxId: true },
  });
  if (existing.length) {
    throw new InvalidStateError(
      `Already received: ${existing
        .map((p) => `type ${p.documentCode} folio ${p.folio} from ${p.issuerTaxId} ` + `(${p.id})`)
        .join(", ")}; a purchase is unique per issuer, type and folio`,
    );
  }
  const swap = await tx.swap.create({ data: { id: swapId, ...tenant(ctx), imported: true, createdAt: now } });
  await tx.purchase.createMany({
    data: envelope.documents.map((d, i) => ({
      id: newId("pur"),
      ...tenant(ctx),
      swapId,
      ...keys[i],
      issuerName: d.issuerName,
      date: new Date(`${d.issueDate}T00:00:00Z`),
      amount: d.netAmount,
      exempt: d.exemptAmount,
      tax: d.tax,
      total: d.total,
      xml: d.xml,
      signatureValid: verifications[i].signatureValid,
      tedValid: verifications[i].tedValid,
      verificationError: verifications[i].reason,
    })),
  });
  const credentials = await loadCredentials(tx, ctx.auth.organizationId);
  const localName = swapFileName(swapId, "envio");
  const reception = receptionOf(received, swap.code, localName, credentials);
  const receptionName = swapFileName(swapId, "recepcion");
  const xml = { ...tenant(ctx), contentType: "application/xml" };
  await storeFile(tx, { name: localName, ...xml, content: Buffer.from(received.fileBytes) });
  await storeFile(tx, { name: receptionName, ...xml, content: reception.file });
  const stored = await tx.swap.update({
    where: { id: swapId },
    data: { localFile: localName, reception: receptionName },
  });
  await recordEvents(withinTransaction(ctx, tx), "swap.received", "swap", [swapId]);
  return stored;
}

/**
 * The signed RecepcionDTE of a received envelope (SII's "Formato de respuesta de intercambio"): the envelope received
 * as it came (status 0), and each DTE's EstadoRecepDTE: 1 signature error, 99 other (the timbre), 0 received.
 */
function receptionOf(received: ReceivedDocuments, swapCode: number, localName: string, credentials: SwapSigner) {
  const { envelope, verifications, org, now } = received;
  return buildRecepcionDte(
    {
      header: header(org.rut, envelope.issuerRut, now),
      responseId: swapCode,
      fileName: received.fileName || localName,
      receivedAt: now,
      envelopeCode: swapCode,
      envelopeId: envelope.setId,
      digest: envelope.digest,
      envelopeIssuerRut: envelope.issuerRut,
      envelopeReceiverRut: envelope.receiverRut,
      status: 0,
      statusText: "Envio recibido conforme",
      documents: envelope.documents.map((d, i) => {
        const v = verifications[i];
        if (!v.signatureValid) return { ...d, status: 1 as const, statusText: `Error de firma: ${v.reason}` };
        if (!v.tedValid) return { ...d, status: 99 as const, statusText: `Timbre (TED) no verifica: ${v.reason}` };
        return { ...d, status: 0 as const, statusText: "DTE recibido" };
      }),
    },
    credentials,
  );
}

export interface SwapReplyInput {
  /** ACD, ERM, RCD, RFP or RFT */
  status?: string | null;
  /** the supplier's exchange e-mail address */
  replyTo?: string | null;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Answers a swap (one transaction, the swap row locked). Errors: 404 unknown swap; 400 `status`
 * (not one of the five) or `reply_to` (not an e-mail); 409 already answered, or a claim after SII's
 * 8-day window (domain/swap-replies.ts), or no organization RUT.
 */
export async function replyToSwap(
  ctx: ServiceContext,
  id: string,
  input: SwapReplyInput,
  loadCredentials: CredentialsLoader,
): Promise<Swap> {
  if (input.replyTo !== null && input.replyTo !== undefined && !EMAIL.test(input.replyTo))
    throw ValidationError.field("reply_to", "must be an e-mail address");
  return ctx.prisma.$transaction(async (tx) => {
    const row = await lockTenantRow(tx, ctx, "Swap", id, ["status", "createdAt"]);
    if (!row) throw new NotFoundError("swap", id);
    const now = ctx.now();
    const rule = checkSwapReply({
      status: input.status,
      currentStatus: row.status as string | null,
      receivedAt: row.createdAt as Date,
      now,
      swapId: id,
    });
    const status = input.status!;
    const swap = await tx.swap.findUniqueOrThrow({
      where: { id },
      include: { purchases: { orderBy: [{ documentCode: "asc" }, { folio: "asc" }] } },
    });
    const org = await organizationRut(tx, ctx);
    const credentials = await loadCredentials(tx, ctx.auth.organizationId);
    const [result, receipt] = replyFiles({ swap, org, credentials, rule, status, now });
    for (const file of [result, receipt]) if (file) await tx.storedFile.create({ data: { ...file, ...tenant(ctx) } });
    return tx.swap.update({
      where: { id },
      data: {
        status,
        replyTo: input.replyTo ?? null,
        replyBy: ctx.auth.userEmail,
        replyDate: now,
        result: result.name,
        receipt: receipt?.name ?? null,
      },
    });
  });
}

/** What a swap's reply is signed from. */
interface ReplyInput {
  swap: Swap & { purchases: Purchase[] };
  org: Awaited<ReturnType<typeof organizationRut>>;
  credentials: SwapSigner;
  /** the reply's rule (domain/swap-replies.ts checkSwapReply): ResultadoDTE's status and text */
  rule: ReturnType<typeof checkSwapReply>;
  /** ACD, ERM, RCD, RFP or RFT */
  status: string;
  now: Date;
}

/** A reply's stored file: its name (swapFileName) and XML bytes. */
interface ReplyFile {
  name: string;
  contentType: string;
  content: Uint8Array<ArrayBuffer>;
}

/**
 * The signed files of a swap's reply (docs/sii-receiving.md): the ResultadoDTE, each purchase with the reply's status
 * (a claim's documents with reason -1), and for ERM (merchandise received) also the EnvioRecibos (Ley 19.983).
 */
function replyFiles({ swap, org, credentials, rule, status, now }: ReplyInput): [ReplyFile, ReplyFile | null] {
  const issuers = [...new Set(swap.purchases.map((p) => p.issuerTaxId))];
  const documents: AnsweredDocument[] = swap.purchases.map((p) => ({
    type: p.documentCode,
    folio: p.folio,
    issueDate: p.date.toISOString().slice(0, 10),
    issuerRut: p.issuerTaxId,
    receiverRut: org.rut,
    total: p.total.toFixed(0),
  }));
  const head = header(org.rut, issuers[0], now, null);
  const result = buildResultadoDte(
    {
      header: head,
      responseId: swap.code,
      envelopeCode: swap.code,
      documents: documents.map((d) => ({
        ...d,
        status: rule.resultStatus,
        statusText: `${status}: ${rule.text}`,
        reasonCode: rule.resultStatus === 2 ? -1 : null,
      })),
    },
    credentials,
  );
  const xml = (name: string, file: Buffer): ReplyFile => ({
    name,
    contentType: "application/xml",
    content: new Uint8Array(file),
  });
  if (status !== "ERM") return [xml(swapFileName(swap.id, "resultado"), result.file), null];
  const recibos = buildEnvioRecibos(
    {
      header: head,
      place: [org.taxAddress, org.taxCommune].filter(Boolean).join(", ") || org.taxBusinessName || org.name,
      signerRut: credentials.signerRut ?? org.rut,
      documents,
    },
    credentials,
  );
  return [xml(swapFileName(swap.id, "resultado"), result.file), xml(swapFileName(swap.id, "recibos"), recibos.file)];
}

/** The swap's PDF: its envelope and each purchase with amounts (infra/swap-pdf.ts). 404 when unknown. */
export async function swapPdf(ctx: ServiceContext, id: string): Promise<Buffer> {
  const swap = await ctx.prisma.swap.findFirst({
    where: { id, ...tenant(ctx) },
    include: {
      purchases: { orderBy: [{ documentCode: "asc" }, { folio: "asc" }] },
      organization: { select: { name: true } },
    },
  });
  if (!swap) throw new NotFoundError("swap", id);
  const receiver = await readSettings(ctx.prisma, tenant(ctx));
  return renderSwapPdfOffThread({
    id: swap.id,
    receiver: receiver.taxBusinessName ?? swap.organization.name,
    receiverTaxId: receiver.taxId,
    received: swap.createdAt,
    status: swap.status,
    replyBy: swap.replyBy,
    replyDate: swap.replyDate,
    purchases: swap.purchases.map((p) => ({
      type: p.documentCode,
      folio: p.folio,
      issuerTaxId: p.issuerTaxId,
      issuerName: p.issuerName,
      date: p.date.toISOString().slice(0, 10),
      amount: p.amount.toFixed(0),
      exempt: p.exempt.toFixed(0),
      tax: p.tax.toFixed(0),
      total: p.total.toFixed(0),
    })),
  });
}

/** The reply proposed from the swap's documents' verification (domain/swap-replies.ts proposeSwapReply). */
export function proposedReply(
  purchases: readonly {
    documentCode: number;
    folio: number;
    issuerTaxId: string;
    signatureValid: boolean | null;
    tedValid: boolean | null;
  }[],
): ProposedReply {
  return proposeSwapReply(
    purchases.map((p) => ({
      type: p.documentCode,
      folio: p.folio,
      issuerTaxId: p.issuerTaxId,
      signatureValid: p.signatureValid,
      tedValid: p.tedValid,
    })),
  );
}

export { SWAP_REPLY_STATUSES };
