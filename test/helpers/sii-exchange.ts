/**
 * Tool checks of the receiver's answers (docs/sii-receiving.md): xmllint against SII's response
 * schemas and xmlsec1 on one chosen signature (a file with several signatures is checked once per
 * signature with `--node-xpath`).
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { readFileSync, writeFileSync } from "node:fs";
import { SCHEMA_DIR, withTempDir, type ToolResult } from "./sii-fixtures.js";

export const RESPUESTA_XSD = join(SCHEMA_DIR, "RespuestaEnvioDTE_v10.xsd");
export const ENVIO_RECIBOS_XSD = join(SCHEMA_DIR, "EnvioRecibos_v10.xsd");
export const ENVIO_DTE_XSD = join(SCHEMA_DIR, "EnvioDTE_v10.xsd");

/**
 * `xmlsec1 --verify --enabled-key-data x509 --id-attr:ID <idNode> --trusted-pem cert.pem
 * [--node-xpath <xpath>] <file>`: the signature (the first one, or the one at `nodeXpath`) must
 * verify with the X509Certificate's key, which must be the trusted certificate.
 */
export function xmlsecVerifySignature(file: Buffer, certificatePem: string, idNodes: string[], nodeXpath?: string): ToolResult {
  return withTempDir((dir) => {
    const path = join(dir, "file.xml");
    const cert = join(dir, "cert.pem");
    writeFileSync(path, file);
    writeFileSync(cert, certificatePem);
    const args = ["--verify", "--enabled-key-data", "x509", ...idNodes.flatMap((n) => ["--id-attr:ID", `http://www.sii.cl/SiiDte:${n}`]), "--trusted-pem", cert];
    if (nodeXpath) args.push("--node-xpath", nodeXpath);
    const r = spawnSync("xmlsec1", [...args, path], { encoding: "utf8" });
    return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
  });
}

/**
 * A PKCS#12 (.p12) of a fresh self-signed RSA-2048 certificate whose subject serialNumber is
 * `rut` (how Chilean certificates name their holder), made with openssl using the legacy
 * SHA1/3DES algorithms node-forge reads. Returns the file (Base64 for the API) and the PEM pair.
 */
export function generatePkcs12(rut: string, password: string): { base64: string; certificatePem: string; privateKeyPem: string } {
  return withTempDir((dir) => {
    const key = join(dir, "key.pem");
    const cert = join(dir, "cert.pem");
    const p12 = join(dir, "cert.p12");
    const run = (args: string[]) => {
      const r = spawnSync("openssl", args, { encoding: "utf8" });
      if (r.status !== 0) throw new Error(`openssl ${args[0]}: ${r.stderr}`);
    };
    run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "2", "-subj", `/C=CL/O=Pruebas/CN=Firmante de Prueba/serialNumber=${rut}`, "-keyout", key, "-out", cert]);
    run(["pkcs12", "-export", "-inkey", key, "-in", cert, "-out", p12, "-passout", `pass:${password}`, "-keypbe", "PBE-SHA1-3DES", "-certpbe", "PBE-SHA1-3DES", "-macalg", "sha1"]);
    return { base64: readFileSync(p12).toString("base64"), certificatePem: readFileSync(cert, "utf8"), privateKeyPem: readFileSync(key, "utf8") };
  });
}
