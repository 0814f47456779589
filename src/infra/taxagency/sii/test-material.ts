/**
 * Made-up SII signing material for tests and the demo, generated on the spot (no private key is
 * ever committed, and none of it is a real taxpayer's):
 * - a fake CAF in SII's layout (AUTORIZACION > CAF > DA + FRMA, RSASK, RSAPUBK), its DA signed by a
 *   fake "SII" key whose public half a test can use to check FRMA;
 * - a self-signed X.509 certificate and key, and a PKCS#12 like a Chilean CA's, made with openssl
 *   (the `openssl` command must be installed).
 * SII would reject all of it; it only lets the service be tried end to end (npm run demo).
 */
import { execFileSync } from "node:child_process";
import { generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

function b64(jwkValue: string): string {
  return Buffer.from(jwkValue, "base64url").toString("base64");
}

export interface FakeCaf {
  /** the CAF file as SII would hand it over (ISO-8859-1 bytes) */
  file: Buffer;
  /** the fake SII key's public half: verifies FRMA */
  siiPublicKey: KeyObject;
}

/** A CAF for `rut`, `type`, folios from..to, authorised on `authorizedOn`; RSA-512 like SII's. */
export function generateCaf(options: {
  rut: string;
  type: number;
  from?: number;
  to?: number;
  authorizedOn: string;
  businessName?: string;
  idk?: number;
}): FakeCaf {
  const caf = generateKeyPairSync("rsa", { modulusLength: 512, publicExponent: 3 });
  const sii = generateKeyPairSync("rsa", { modulusLength: 1024 });
  const jwk = caf.publicKey.export({ format: "jwk" });
  const da =
    `<DA><RE>${options.rut}</RE><RS>${options.businessName ?? "EMPRESA DE PRUEBA"}</RS><TD>${options.type}</TD>` +
    `<RNG><D>${options.from ?? 1}</D><H>${options.to ?? 100}</H></RNG><FA>${options.authorizedOn}</FA>` +
    `<RSAPK><M>${b64(jwk.n!)}</M><E>${b64(jwk.e!)}</E></RSAPK><IDK>${options.idk ?? 100}</IDK></DA>`;
  const frma = sign("sha1", Buffer.from(da, "latin1"), sii.privateKey).toString("base64");
  // indented like SII's files: the CAF copied into the TED must come out without that whitespace
  const xml =
    `<?xml version="1.0"?>\n<AUTORIZACION>\n<CAF version="1.0">\n${da.replace(/></g, ">\n<")}\n` +
    `<FRMA algoritmo="SHA1withRSA">${frma}</FRMA>\n</CAF>\n` +
    `<RSASK>${caf.privateKey.export({ type: "pkcs1", format: "pem" }).toString().trim()}</RSASK>\n` +
    `<RSAPUBK>${caf.publicKey.export({ type: "spki", format: "pem" }).toString().trim()}</RSAPUBK>\n</AUTORIZACION>\n`;
  return { file: Buffer.from(xml, "latin1"), siiPublicKey: sii.publicKey };
}

export interface FakeCertificate {
  certificatePem: string;
  privateKeyPem: string;
}

/** A self-signed RSA-2048 certificate valid for two days, made with openssl. */
export function generateCertificate(commonName = "Firmante de Prueba"): FakeCertificate {
  return withTempDir((dir) => {
    const key = join(dir, "key.pem");
    const cert = join(dir, "cert.pem");
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-sha256",
        "-days",
        "2",
        "-subj",
        `/C=CL/O=Pruebas/CN=${commonName}`,
        "-keyout",
        key,
        "-out",
        cert,
      ],
      { stdio: "pipe" },
    );
    return { certificatePem: readFileSync(cert, "utf8"), privateKeyPem: readFileSync(key, "utf8") };
  });
}

/** Runs `fn` with a new temporary directory, removed afterwards. */
export function withTempDir<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), "sii-test-"));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface FakePkcs12 extends FakeCertificate {
  /** the PKCS#12 file (OpenSSL 3 defaults: AES-256-CBC, PBKDF2, HMAC-SHA256) */
  file: Buffer;
  password: string;
}

/**
 * A PKCS#12 like a Chilean CA's: a self-signed RSA-2048 certificate whose subjectAltName carries
 * the holder's RUT as otherName 1.3.6.1.4.1.8321.1 (omitted when `rut` is null), made with openssl.
 */
export function generatePkcs12(
  options: { rut?: string | null; password?: string; commonName?: string; days?: number } = {},
): FakePkcs12 {
  const password = options.password ?? "secreto";
  return withTempDir((dir) => {
    const key = join(dir, "key.pem");
    const cert = join(dir, "cert.pem");
    const p12 = join(dir, "cert.p12");
    const rut = options.rut === undefined ? "12345678-5" : options.rut;
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-sha256",
        "-days",
        String(options.days ?? 2),
        "-subj",
        `/C=CL/O=Pruebas/CN=${options.commonName ?? "Firmante de Prueba"}`,
        ...(rut ? ["-addext", `subjectAltName=otherName:1.3.6.1.4.1.8321.1;IA5STRING:${rut}`] : []),
        "-keyout",
        key,
        "-out",
        cert,
      ],
      { stdio: "pipe" },
    );
    execFileSync(
      "openssl",
      ["pkcs12", "-export", "-inkey", key, "-in", cert, "-passout", `pass:${password}`, "-out", p12],
      { stdio: "pipe" },
    );
    return {
      file: readFileSync(p12),
      password,
      certificatePem: readFileSync(cert, "utf8"),
      privateKeyPem: readFileSync(key, "utf8"),
    };
  });
}
