/**
 * Tool checks of the receiver's answers (docs/sii-receiving.md): xmllint against SII's response
 * schemas and xmlsec1 on one chosen signature (a file with several signatures is checked once per
 * signature with `--node-xpath`).
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { SCHEMA_DIR, withTempDir, type ToolResult } from "./sii-fixtures.js";

export const RESPUESTA_XSD = join(SCHEMA_DIR, "RespuestaEnvioDTE_v10.xsd");
export const ENVIO_RECIBOS_XSD = join(SCHEMA_DIR, "EnvioRecibos_v10.xsd");
export const ENVIO_DTE_XSD = join(SCHEMA_DIR, "EnvioDTE_v10.xsd");

/**
 * `xmlsec1 --verify --enabled-key-data x509 --id-attr:ID <idNode> --trusted-pem cert.pem
 * [--node-xpath <xpath>] <file>`: the signature (the first one, or the one at `nodeXpath`) must
 * verify with the X509Certificate's key, which must be the trusted certificate.
 */
export function xmlsecVerifySignature(
  file: Buffer,
  certificatePem: string,
  idNodes: string[],
  nodeXpath?: string,
): ToolResult {
  return withTempDir((dir) => {
    const path = join(dir, "file.xml");
    const cert = join(dir, "cert.pem");
    writeFileSync(path, file);
    writeFileSync(cert, certificatePem);
    const args = [
      "--verify",
      "--enabled-key-data",
      "x509",
      ...idNodes.flatMap((n) => ["--id-attr:ID", `http://www.sii.cl/SiiDte:${n}`]),
      "--trusted-pem",
      cert,
    ];
    if (nodeXpath) args.push("--node-xpath", nodeXpath);
    const r = spawnSync("xmlsec1", [...args, path], { encoding: "utf8" });
    return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
  });
}
