/**
 * The organization's signing certificate (docs/sii-setup.md): uploaded as PKCS#12 + password,
 * read with node-forge (infra/pkcs12.ts), kept as the PEM pair sealed with AES-256-GCM
 * (infra/secrets.ts) in `Certificate.encrypted`; the holder's RUT and validity are stored in
 * clear. Certificates are per mode (docs/decisions.md "Mode isolation of settings"): one uploaded
 * with a test key signs test documents only, one uploaded with a live key live documents only. The
 * newest unexpired one of the mode signs.
 */
import { InvalidStateError, ValidationError } from "../domain/errors.js";
import { newId } from "../infra/ids.js";
import { readPkcs12 } from "../infra/pkcs12.js";
import { openSecret, requireKey, sealSecret } from "../infra/secrets.js";
import { tenant, type ServiceContext, type TenantKey, type Tx } from "./context.js";

export interface CertificateInput {
  /** the PKCS#12 file (.p12/.pfx) in base64 */
  file?: string | null;
  password?: string | null;
}

export const CERTIFICATE_PUBLIC_SELECT = {
  id: true,
  subjectRut: true,
  validFrom: true,
  validTo: true,
  testMode: true,
  createdAt: true,
} as const;

export interface SigningCredentials {
  certificatePem: string;
  privateKeyPem: string;
  /** RUT of the certificate's holder (EnvioDTE `RutEnvia`) */
  subjectRut: string;
}

/** Strict base64 (whitespace allowed) to bytes, or null. */
export function decodeBase64(text: string): Buffer | null {
  const compact = text.replace(/\s+/g, "");
  if (!compact || !/^[A-Za-z0-9+/]+={0,2}$/.test(compact) || compact.length % 4 !== 0) return null;
  return Buffer.from(compact, "base64");
}

/**
 * Stores a certificate for the caller's mode: 400 on `file` (missing, not base64, not PKCS#12, no RSA key and its
 * certificate, no RUT in it, expired) or `password` (wrong); 409 when no encryption key is
 * configured. Returns the public columns (id `cer_`, subjectRut, validFrom, validTo, testMode, createdAt).
 */
export async function uploadCertificate(ctx: ServiceContext, input: CertificateInput) {
  const key = requireKey(ctx.settings.certificateEncryptionKey);
  if (!input.file) throw ValidationError.field("file", "is required (the PKCS#12 file in base64)");
  const der = decodeBase64(input.file);
  if (!der) throw ValidationError.field("file", "must be base64");
  const contents = readPkcs12(der, input.password ?? "");
  if (contents.validTo.getTime() <= ctx.now().getTime())
    throw ValidationError.field("file", `the certificate expired on ${contents.validTo.toISOString()}`);
  const sealed = sealSecret(
    key,
    Buffer.from(
      JSON.stringify({ certificatePem: contents.certificatePem, privateKeyPem: contents.privateKeyPem }),
      "utf8",
    ),
  );
  const id = newId("cer");
  await ctx.prisma.certificate.create({
    data: {
      id,
      ...tenant(ctx),
      subjectRut: contents.subjectRut,
      encrypted: new Uint8Array(sealed),
      validFrom: contents.validFrom,
      validTo: contents.validTo,
    },
  });
  return ctx.prisma.certificate.findUniqueOrThrow({ where: { id }, select: CERTIFICATE_PUBLIC_SELECT });
}

/** The certificates of the caller's organization and mode, newest first (public columns only). */
export async function listCertificates(ctx: ServiceContext) {
  return ctx.prisma.certificate.findMany({
    where: tenant(ctx),
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    select: CERTIFICATE_PUBLIC_SELECT,
  });
}

/** A stored certificate as signing reads it: its validity, holder and sealed PEM pair. */
export interface StoredCertificate {
  validTo: Date | null;
  subjectRut: string | null;
  /** the PEM pair as JSON, sealed with the encryption key (infra/secrets.ts) */
  encrypted: Uint8Array;
}

/**
 * The certificates of organization `owner.organizationId` in mode `owner.testMode`, newest first (one
 * statement): what signingCredentialsOf chooses from. A finalize reads them once (services/issuing.ts).
 */
export async function readCertificates(db: Pick<Tx, "certificate">, owner: TenantKey): Promise<StoredCertificate[]> {
  return db.certificate.findMany({
    where: { organizationId: owner.organizationId, testMode: owner.testMode },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    select: { validTo: true, subjectRut: true, encrypted: true },
  });
}

/**
 * The PEM pair that signs the DTEs of mode `owner.testMode`, opened from that mode's certificates
 * `newestFirst` (readCertificates): the newest one still valid at `now`. 409 InvalidStateError
 * when there is none or all expired, or when `key` is missing; an Error when the stored secret
 * cannot be decrypted with `key` (wrong CERTIFICATE_ENCRYPTION_KEY). No database access.
 */
export function signingCredentialsOf(
  newestFirst: readonly StoredCertificate[],
  owner: TenantKey,
  key: Buffer | undefined,
  now: Date,
): SigningCredentials {
  const mode = owner.testMode ? "test" : "live";
  if (!newestFirst.length)
    throw new InvalidStateError(
      `the organization has no signing certificate in ${mode} mode: upload one with a ${mode} key (docs/sii-setup.md)`,
    );
  const row = newestFirst.find((r) => !r.validTo || r.validTo.getTime() > now.getTime());
  if (!row)
    throw new InvalidStateError(
      `the organization's ${mode} signing certificate expired on ${newestFirst[0].validTo?.toISOString()}: upload ` +
        `a new one with a ${mode} key`,
    );
  const pair = JSON.parse(openSecret(requireKey(key), row.encrypted).toString("utf8")) as {
    certificatePem: string;
    privateKeyPem: string;
  };
  return { certificatePem: pair.certificatePem, privateKeyPem: pair.privateKeyPem, subjectRut: row.subjectRut ?? "" };
}

/**
 * The PEM pair that signs the DTEs of organization `owner.organizationId` in mode `owner.testMode`:
 * that mode's newest certificate still valid at `now` (the other mode's never signs); readCertificates
 * then signingCredentialsOf, with their errors. `key` is the configured encryption key
 * (`ctx.settings.certificateEncryptionKey`).
 */
export async function loadSigningCredentials(
  db: Pick<Tx, "certificate">,
  owner: TenantKey,
  key: Buffer | undefined,
  now: Date = new Date(),
): Promise<SigningCredentials> {
  return signingCredentialsOf(await readCertificates(db, owner), owner, key, now);
}
