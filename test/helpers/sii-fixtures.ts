/**
 * Test-only SII material, generated at test time (no private key is ever committed):
 * - the fake CAF, certificate and PKCS#12 of src/infra/taxagency/sii/test-material.ts (shared with
 *   the demo), re-exported;
 * - the two command-line checks: `xmllintValidate` (SII's XSD) and
 *   `xmlsecVerify` (the XMLDSig signature).
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { withTempDir } from "../../src/infra/taxagency/sii/test-material.js";

export {
  generateCaf,
  generateCertificate,
  generatePkcs12,
  withTempDir,
  type FakeCaf,
  type FakeCertificate,
  type FakePkcs12,
} from "../../src/infra/taxagency/sii/test-material.js";

export const SCHEMA_DIR = fileURLToPath(new URL("../../schema/sii/", import.meta.url));
export const DTE_XSD = join(SCHEMA_DIR, "DTE_v10.xsd");

export interface ToolResult {
  ok: boolean;
  output: string;
}

/** `xmllint --noout --schema schema/sii/DTE_v10.xsd <file>` */
export function xmllintValidate(file: Buffer, xsd = DTE_XSD): ToolResult {
  return withTempDir((dir) => {
    const path = join(dir, "dte.xml");
    writeFileSync(path, file);
    const r = spawnSync("xmllint", ["--noout", "--schema", xsd, path], { encoding: "utf8" });
    return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
  });
}

/**
 * `xmlsec1 --verify --enabled-key-data x509 --id-attr:ID http://www.sii.cl/SiiDte:Documento
 * --id-attr:ID http://www.sii.cl/SiiDte:Exportaciones --trusted-pem cert.pem <file>` (an export
 * DTE, 110-112, signs its `Exportaciones`):
 * the signature must verify with the key of the X509Certificate, which must be the trusted
 * (self-signed) certificate; without `--enabled-key-data x509` xmlsec1 would accept the bare
 * RSAKeyValue and trust nothing.
 */
export function xmlsecVerify(file: Buffer, certificatePem: string): ToolResult {
  return withTempDir((dir) => {
    const path = join(dir, "dte.xml");
    const cert = join(dir, "cert.pem");
    writeFileSync(path, file);
    writeFileSync(cert, certificatePem);
    const r = spawnSync(
      "xmlsec1",
      [
        "--verify",
        "--enabled-key-data",
        "x509",
        "--id-attr:ID",
        "http://www.sii.cl/SiiDte:Documento",
        "--id-attr:ID",
        "http://www.sii.cl/SiiDte:Exportaciones",
        "--trusted-pem",
        cert,
        path,
      ],
      {
        encoding: "utf8",
      },
    );
    return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
  });
}
