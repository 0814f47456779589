/**
 * Reads a PKCS#12 file (`.p12`/`.pfx`, the form Chilean certification authorities hand out) with
 * node-forge: the signing certificate, its RSA private key, the holder's RUT and the validity.
 *
 * The holder's RUT is looked up, in order, in: the subjectAltName `otherName` with OID
 * 1.3.6.1.4.1.8321.1 (the Chilean "RUT" extension used by E-Sign, Acepta, ...), the subject's
 * `serialNumber` attribute, then a RUT-looking text in the subject's CN. The RUT must have a valid
 * check digit (domain/rut.ts) and is returned in normal form (`12345678-5`).
 */
import forge from "node-forge";
import { ValidationError } from "../domain/errors.js";
import { normalizeRut } from "../domain/rut.js";

export interface Pkcs12Contents {
  certificatePem: string;
  privateKeyPem: string;
  /** holder RUT in normal form */
  subjectRut: string;
  subjectName: string;
  validFrom: Date;
  validTo: Date;
}

/** OID of the Chilean RUT otherName in subjectAltName. */
export const CHILEAN_RUT_OID = "1.3.6.1.4.1.8321.1";

function fail(field: string, reason: string): never {
  throw ValidationError.field(field, reason);
}

/** Text of the RUT otherName inside a subjectAltName extension value (DER), or null. */
function rutFromSubjectAltName(certificate: forge.pki.Certificate): string | null {
  const ext = certificate.getExtension("subjectAltName") as { value?: string } | undefined;
  if (!ext?.value) return null;
  let seq: forge.asn1.Asn1;
  try {
    seq = forge.asn1.fromDer(ext.value);
  } catch {
    return null;
  }
  for (const name of (seq.value as forge.asn1.Asn1[]) ?? []) {
    // otherName [0] { type-id OID, [0] EXPLICIT value }
    if (name.tagClass !== forge.asn1.Class.CONTEXT_SPECIFIC || name.type !== 0 || !Array.isArray(name.value)) continue;
    const [oid, wrapped] = name.value as forge.asn1.Asn1[];
    if (!oid || forge.asn1.derToOid(oid.value as string) !== CHILEAN_RUT_OID) continue;
    let inner: forge.asn1.Asn1 | undefined = wrapped;
    while (inner && Array.isArray(inner.value)) inner = (inner.value as forge.asn1.Asn1[])[0];
    if (inner && typeof inner.value === "string") return inner.value;
  }
  return null;
}

/** The holder's RUT (normal form) or null when the certificate names none. */
export function certificateRut(certificate: forge.pki.Certificate): string | null {
  const candidates = [
    rutFromSubjectAltName(certificate),
    certificate.subject.getField({ name: "serialNumber" })?.value as string | undefined,
    /(\d{1,2}\.?\d{3}\.?\d{3}-?[\dkK])/.exec(String(certificate.subject.getField("CN")?.value ?? ""))?.[1],
  ];
  for (const candidate of candidates) {
    const rut = candidate ? normalizeRut(candidate.replace(/^RUT:?\s*/i, "")) : null;
    if (rut) return rut;
  }
  return null;
}

/**
 * Opens `der` (PKCS#12 bytes) with `password`. ValidationError (field `file` or `password`) when
 * the bytes are not PKCS#12, the password is wrong, there is no RSA key with its certificate, or the
 * certificate names no valid RUT.
 */
export function readPkcs12(der: Buffer, password: string): Pkcs12Contents {
  let asn1: forge.asn1.Asn1;
  try {
    asn1 = forge.asn1.fromDer(forge.util.createBuffer(der.toString("binary")));
  } catch {
    fail("file", "is not a PKCS#12 file (.p12/.pfx, base64)");
  }
  let p12: forge.pkcs12.Pkcs12Pfx;
  try {
    p12 = forge.pkcs12.pkcs12FromAsn1(asn1, false, password);
  } catch (error) {
    const problem = String((error as Error).message ?? error);
    if (/MAC could not be verified/i.test(problem)) fail("password", "cannot open the PKCS#12 file with this password");
    // node-forge hands the password as given both to the MAC (as a BMPString: right for any
    // password) and to PBES2 decryption, which OpenSSL 3 and Windows key with the password's UTF-8
    // bytes. The MAC just verified, so a non-ASCII password is right: decrypt with its UTF-8 bytes
    // (the MAC, already checked, is left out of this second reading). The wrong key usually fails
    // the padding check ("decrypt"), but about once in 256 files its padding looks right and the
    // garbage fails as DER instead: any error is retried (test/fixtures/pkcs12/).
    if (!/[^\x00-\x7f]/.test(password))
      fail(
        /decrypt/i.test(problem) ? "password" : "file",
        /decrypt/i.test(problem)
          ? "cannot open the PKCS#12 file with this password"
          : "is not a PKCS#12 file (.p12/.pfx, base64)",
      );
    try {
      const withoutMac = { ...asn1, value: (asn1.value as forge.asn1.Asn1[]).slice(0, 2) };
      p12 = forge.pkcs12.pkcs12FromAsn1(withoutMac, false, forge.util.encodeUtf8(password));
    } catch {
      fail("password", "cannot open the PKCS#12 file with this password");
    }
  }
  const keyBags = [
    ...(p12.getBags({ bagType: forge.pki.oids.pkcs8ShroudedKeyBag })[forge.pki.oids.pkcs8ShroudedKeyBag] ?? []),
    ...(p12.getBags({ bagType: forge.pki.oids.keyBag })[forge.pki.oids.keyBag] ?? []),
  ];
  const certBags = p12.getBags({ bagType: forge.pki.oids.certBag })[forge.pki.oids.certBag] ?? [];
  const key = keyBags.map((b) => b.key).find((k): k is forge.pki.rsa.PrivateKey => !!k && "n" in k);
  if (!key) fail("file", "the PKCS#12 file holds no RSA private key");
  // the certificate of the key (a file may also carry the CA chain)
  const certificate = certBags
    .map((b) => b.cert)
    .find((c): c is forge.pki.Certificate => !!c && (c.publicKey as forge.pki.rsa.PublicKey).n?.equals(key.n));
  if (!certificate) fail("file", "the PKCS#12 file holds no certificate for its private key");
  const subjectRut = certificateRut(certificate);
  if (!subjectRut) fail("file", "the certificate names no RUT (subjectAltName 1.3.6.1.4.1.8321.1, serialNumber or CN)");
  return {
    certificatePem: forge.pki.certificateToPem(certificate),
    privateKeyPem: forge.pki.privateKeyToPem(key),
    subjectRut,
    subjectName: String(certificate.subject.getField("CN")?.value ?? ""),
    validFrom: certificate.validity.notBefore,
    validTo: certificate.validity.notAfter,
  };
}
