/**
 * CAF files (Código de Autorización de Folios, docs/sii-dte.md "CAF";
 * docs/sii-setup.md): uploaded, checked by infra/taxagency/sii parseCaf and against the
 * organization, stored sealed (the file carries the private key that signs the TED), and consumed
 * folio by folio at finalize (`takeFolio`, gapless under a row lock), or a range at a time by the
 * billing run's bulk finalize (`takeFolios`, the same locks).
 *
 * Mode: a CAF with IDK 100 comes from SII's certification environment and belongs to test mode; any
 * other IDK is production and belongs to live mode. A CAF is uploaded with a key of its mode.
 */
import { FieldErrorCollector, InvalidStateError, ValidationError } from "../domain/errors.js";
import { cafLastUsableDate, isDteType, DTE_TYPES } from "../domain/dte-rules.js";
import { isoDate, dateColumn } from "../domain/formats.js";
import { newId } from "../infra/ids.js";
import { Prisma } from "../infra/prisma/generated/client.js";
import { openSecret, requireKey, sealSecret } from "../infra/secrets.js";
import { parseCaf, type Caf as ParsedCaf } from "../infra/taxagency/sii/index.js";
import { decodeBase64 } from "./certificates.js";
import { tenant, type ServiceContext, type Tx } from "./context.js";
import { readSettings } from "./organization-settings.js";

export interface CafInput {
  /** the CAF XML file as SII issued it, base64 (its bytes are ISO-8859-1) */
  file?: string | null;
}

/** Prefix of a sealed CAF in `Caf.xml`: `sealed:` + base64(sealSecret(xml bytes)). */
const SEALED = "sealed:";

/** A stored CAF's XML (decrypted with `key`). */
export function openCafXml(stored: string, key: Buffer | undefined): Buffer {
  if (!stored.startsWith(SEALED)) return Buffer.from(stored, "latin1");
  return openSecret(requireKey(key), Buffer.from(stored.slice(SEALED.length), "base64"));
}

/** The CAF's last usable date (yyyy-mm-dd) from its type and authorisation date, null when it does not expire. */
export function storedCafLastUsableDate(caf: { documentTypeId: string; authorizedAt: Date }): string | null {
  return cafLastUsableDate(Number(caf.documentTypeId.replace(/^CL/, "")), isoDate(caf.authorizedAt));
}

/**
 * Stores a CAF. 400 (field `file`) when the file is missing, not base64, not a valid CAF (parseCaf
 * lists every problem: RUT, type, range, FRMA signature present, RSASK matching RSAPK), of a type
 * this service does not issue (33, 34, 39, 41, 52, 56, 61, 110, 111, 112), of another RUT than the
 * caller's mode's tax profile's (400 on `tax_id` when that profile has none), of the other mode (IDK 100 = test),
 * already expired, or
 * overlapping a stored CAF of the same type and mode or folios already issued (documents numbered
 * `sii_folio`; numbers of the internal series are another series and do not count).
 * 409 without an encryption key. Uploads of one organization are serialized (organization row lock).
 */
export async function uploadCaf(ctx: ServiceContext, input: CafInput) {
  const key = requireKey(ctx.settings.certificateEncryptionKey);
  const { bytes, caf } = uploadedCaf(ctx, input);
  return ctx.prisma.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT "id" FROM "Organization" WHERE "id" = ${ctx.auth.organizationId} FOR UPDATE`;
    const documentTypeId = await checkCafIssuer(ctx, tx, caf);
    await checkFoliosFree(ctx, tx, { caf, documentTypeId });
    return tx.caf.create({
      data: {
        id: newId("caf"),
        ...tenant(ctx),
        documentTypeId,
        rangeFrom: caf.from,
        rangeTo: caf.to,
        nextFolio: caf.from,
        authorizedAt: dateColumn(caf.authorizedOn),
        xml: SEALED + sealSecret(key, bytes).toString("base64"),
      },
    });
  });
}

/**
 * The uploaded file's bytes and the CAF parsed from them, checked against the caller without the database: a
 * document type this service issues, the caller's mode, not expired at `ctx.now()`. ValidationError on `file`
 * (a missing or non-base64 file, parseCaf's problems, or every problem of these checks).
 */
function uploadedCaf(ctx: ServiceContext, input: CafInput): { bytes: Buffer; caf: ParsedCaf } {
  if (!input.file) throw ValidationError.field("file", "is required (the CAF XML in base64)");
  const bytes = decodeBase64(input.file);
  if (!bytes) throw ValidationError.field("file", "must be base64");
  let caf: ParsedCaf;
  try {
    caf = parseCaf(bytes);
  } catch (error) {
    if (error instanceof ValidationError)
      throw new ValidationError(error.message, { file: error.fields?.caf ?? [error.message] });
    throw error;
  }
  const errors = new FieldErrorCollector();
  if (!isDteType(caf.type))
    errors.add(
      "file",
      `the CAF is for document type ${caf.type}; this service issues ${Object.keys(DTE_TYPES).join(", ")}`,
    );
  if (caf.testMode !== ctx.auth.testMode) {
    errors.add(
      "file",
      caf.testMode
        ? "a certification CAF (IDK 100) belongs to test mode: upload it with a test key"
        : `a production CAF (IDK ${caf.idk}) belongs to live mode: upload it with a live key`,
    );
  }
  const today = isoDate(ctx.now());
  if (caf.lastUsableDate && caf.lastUsableDate < today)
    errors.add("file", `the CAF expired: its folios were usable up to ${caf.lastUsableDate}`);
  errors.throwIfAny("Invalid CAF");
  return { bytes, caf };
}

/**
 * Checks in `tx` that `caf` is for the RUT of the caller's mode's tax profile (ValidationError on `tax_id` when it
 * has none, on `file` when it differs) and for a document type with a local format; its document type id (`CL33`).
 */
async function checkCafIssuer(ctx: ServiceContext, tx: Tx, caf: ParsedCaf): Promise<string> {
  const org = await readSettings(tx, tenant(ctx));
  const mode = ctx.auth.testMode ? "test" : "live";
  if (!org.taxId) throw ValidationError.field("tax_id", `set the ${mode} mode tax profile (RUT) before uploading CAFs`);
  if (org.taxId !== caf.rut)
    throw ValidationError.field(
      "file",
      `the CAF is for RUT ${caf.rut}, the ${mode} mode tax profile's RUT is ${org.taxId}`,
    );
  const documentTypeId = `CL${caf.type}`;
  const type = await tx.documentType.findUnique({ where: { id: documentTypeId } });
  if (!type || !type.hasLocalFormat)
    throw ValidationError.field("file", `document type ${documentTypeId} has no local format`);
  return documentTypeId;
}

/**
 * Checks in `tx` that the folios of `caf` (of `documentTypeId`) are free in the caller's organization and mode: no
 * stored CAF overlaps them and no document carries one as its SII folio. ValidationError on `file` otherwise.
 */
async function checkFoliosFree(
  ctx: ServiceContext,
  tx: Tx,
  { caf, documentTypeId }: { caf: ParsedCaf; documentTypeId: string },
): Promise<void> {
  const overlapping = await tx.caf.findFirst({
    where: { ...tenant(ctx), documentTypeId, rangeFrom: { lte: caf.to }, rangeTo: { gte: caf.from } },
    select: { id: true, rangeFrom: true, rangeTo: true },
  });
  if (overlapping)
    throw ValidationError.field(
      "file",
      `folios ${caf.from}..${caf.to} overlap CAF ${overlapping.id} (folios ${overlapping.rangeFrom}` +
        `..${overlapping.rangeTo})`,
    );
  // only folios count: numbers of the internal series (documents issued before SII set-up) are
  // another series and never collide with folios (docs/sii-setup.md "Numbering before enrollment")
  const numbered = { ...tenant(ctx), documentTypeId, numbering: "sii_folio", number: { gte: caf.from, lte: caf.to } };
  const used =
    (await tx.invoice.count({ where: numbered })) +
    (await tx.order.count({ where: numbered })) +
    (await tx.creditNote.count({ where: numbered }));
  if (used > 0)
    throw ValidationError.field(
      "file",
      `${used} ${documentTypeId} document(s) of this mode already carry SII folios in ${caf.from}..${caf.to}`,
    );
}

export interface TakenFolio {
  folio: number;
  /** the CAF file that covers it (its private key signs the TED) */
  cafFile: Buffer;
  cafId: string;
}

/**
 * Takes the next folio of document type `documentTypeId` for (organization, mode) inside the
 * caller's transaction: the CAF with folios left and not expired on `issueDate` with the lowest range
 * is locked (`FOR UPDATE`) and its `nextFolio` incremented. Concurrent finalizes queue on the lock;
 * a rolled-back transaction gives the folio back, so folios are gapless and never reused.
 * 409 InvalidStateError when no CAF has an authorized folio left.
 */
export async function takeFolio(
  tx: Tx,
  tenantKey: { organizationId: string; testMode: boolean },
  documentTypeId: string,
  issueDate: string,
  key: Buffer | undefined,
): Promise<TakenFolio> {
  // candidates in range order; each one locked and re-read (another transaction may have used it up)
  const candidates = await tx.caf.findMany({
    where: { ...tenantKey, documentTypeId },
    orderBy: [{ rangeFrom: "asc" }],
    select: { id: true, documentTypeId: true, authorizedAt: true },
  });
  for (const candidate of candidates) {
    const lastUsable = storedCafLastUsableDate(candidate);
    if (lastUsable && lastUsable < issueDate) continue;
    const rows = await tx.$queryRaw<{ id: string; nextFolio: number; rangeTo: number; xml: string }[]>`
      SELECT "id", "nextFolio", "rangeTo", "xml" FROM "Caf" WHERE "id" = ${candidate.id} FOR UPDATE`;
    const row = rows[0];
    if (!row || Number(row.nextFolio) > Number(row.rangeTo)) continue;
    const folio = Number(row.nextFolio);
    await tx.caf.update({ where: { id: row.id }, data: { nextFolio: folio + 1 } });
    return { folio, cafFile: openCafXml(row.xml, key), cafId: row.id };
  }
  throw new InvalidStateError(
    candidates.length
      ? `no authorized folio is left for ${documentTypeId} in ${tenantKey.testMode ? "test" : "live"} mode: every ` +
          `CAF is used up or expired; upload a new CAF`
      : `no CAF for ${documentTypeId} in ${tenantKey.testMode ? "test" : "live"} mode: upload one to issue this ` +
          `document type`,
  );
}

/** A range of folios taken for a batch: each folio with its CAF, in order, and each CAF's file. */
export interface TakenFolios {
  folios: { folio: number; cafId: string }[];
  /** the CAF file of every CAF in `folios` (its private key signs the TED), by CAF id */
  cafFiles: Map<string, Buffer>;
}

/** The folios a batch asks for: `count` (>= 1) of type `documentTypeId`, usable on `latestIssueDate` (yyyy-mm-dd). */
export interface FolioRequest {
  documentTypeId: string;
  latestIssueDate: string;
  count: number;
}

/**
 * Takes the next `wanted.count` (>= 1) folios of document type `wanted.documentTypeId` for (organization, mode)
 * inside the caller's transaction, with one statement: the CAFs with folios left and usable on
 * `wanted.latestIssueDate` (the latest issue date of the documents they number, so every document of the
 * batch is covered) are locked in range order (`FOR UPDATE`, the lock takeFolio takes, so bulk
 * and single finalizes queue on the same rows) and their `nextFolio` moved past the folios taken:
 * the rest of the lowest CAF first, then the next CAF's, and so on. Folios follow each other
 * within a CAF and the next CAF starts where its range starts, exactly as `count` takeFolio calls
 * would number them; a rolled-back transaction gives them all back, so folios stay gapless and
 * are never reused. 409 InvalidStateError, and nothing taken, when the usable CAFs have fewer
 * than `count` folios left.
 */
export async function takeFolios(
  tx: Tx,
  tenantKey: { organizationId: string; testMode: boolean },
  wanted: FolioRequest,
  key: Buffer | undefined,
): Promise<TakenFolios> {
  const { documentTypeId, latestIssueDate, count } = wanted;
  if (!Number.isInteger(count) || count < 1)
    throw new Error(`takeFolios: count must be a positive integer, got ${count}`);
  const mode = tenantKey.testMode ? "test" : "live";
  const candidates = await tx.caf.findMany({
    where: { ...tenantKey, documentTypeId },
    orderBy: [{ rangeFrom: "asc" }],
    select: { id: true, documentTypeId: true, authorizedAt: true },
  });
  if (!candidates.length)
    throw new InvalidStateError(`no CAF for ${documentTypeId} in ${mode} mode: upload one to issue this document type`);
  const usable = candidates.filter((c) => {
    const lastUsable = storedCafLastUsableDate(c);
    return !lastUsable || lastUsable >= latestIssueDate;
  });
  // one statement: lock the usable CAFs in range order, split `count` over their folios left, and
  // move each counter; nothing is updated when they have fewer than `count` folios left
  const rows = usable.length
    ? await tx.$queryRaw<{ id: string; first: number; taken: number; xml: string; rangeFrom: number }[]>(Prisma.sql`
      WITH locked AS (
        SELECT "id", "rangeFrom", "nextFolio", GREATEST("rangeTo" - "nextFolio" + 1, 0) AS "left"
        FROM "Caf" WHERE "id" IN (${Prisma.join(usable.map((c) => c.id))}) AND "nextFolio" <= "rangeTo"
        ORDER BY "rangeFrom", "id"
        FOR UPDATE
      ), split AS (
        SELECT "id", "rangeFrom", "nextFolio",
          LEAST("left", GREATEST(${count}::int - (SUM("left") OVER (ORDER BY "rangeFrom", "id") - "left"),
          0))::int AS "taken"
        FROM locked
        WHERE (SELECT SUM("left") FROM locked) >= ${count}::int
      )
      UPDATE "Caf" c SET "nextFolio" = s."nextFolio" + s."taken"
      FROM split s
      WHERE c."id" = s."id" AND s."taken" > 0
      RETURNING c."id", s."nextFolio" AS "first", s."taken", c."xml", s."rangeFrom"`)
    : [];
  if (!rows.length) {
    throw new InvalidStateError(
      `fewer than ${count} authorized folio(s) are left for ${documentTypeId} in ${mode} mode: every CAF is used up ` +
        `or expired; upload a new CAF`,
    );
  }
  const ordered = rows
    .map((r) => ({ ...r, first: Number(r.first), taken: Number(r.taken), rangeFrom: Number(r.rangeFrom) }))
    .sort((a, b) => a.rangeFrom - b.rangeFrom || (a.id < b.id ? -1 : 1));
  const folios: TakenFolios["folios"] = [];
  const cafFiles = new Map<string, Buffer>();
  for (const r of ordered) {
    for (let i = 0; i < r.taken; i++) folios.push({ folio: r.first + i, cafId: r.id });
    cafFiles.set(r.id, openCafXml(r.xml, key));
  }
  if (folios.length !== count) throw new Error(`takeFolios: took ${folios.length} folios for ${count}`);
  return { folios, cafFiles };
}
