/**
 * Test-only helpers for SII envelopes:
 * - `boletaDte`: a signed boleta (39/41) in EnvioBOLETA_v11.xsd's DTE layout, with a TED signed by
 *   the CAF key, so EnvioBOLETA can be built and checked (the DTE builder does 33/34/52/56/61);
 * - `xmlsecVerifyNode`: `xmlsec1 --verify` of one chosen Signature of an envelope.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  serializeDd,
  signDd,
  signDte,
  type Caf,
  type SigningCredentials,
} from "../../src/infra/taxagency/sii/index.js";
import { withTempDir, type ToolResult } from "./sii-fixtures.js";

/** A signed boleta: one taxable (39) or exempt (41) line of `total` pesos, gross. */
export function boletaDte(options: {
  type: 39 | 41;
  folio: number;
  rut: string;
  total: number;
  item: string;
  caf: Caf;
  credentials: SigningCredentials;
}): string {
  const { type, folio, rut, total, item, caf } = options;
  const net = type === 39 ? Math.round(total / 1.19) : 0;
  const iva = type === 39 ? total - net : 0;
  const ted = {
    emitterRut: rut,
    type,
    folio,
    issueDate: "2026-11-20",
    receiverRut: "66666666-6",
    receiverName: "Consumidor final",
    total: String(total),
    firstItemName: item,
    timestamp: "2026-11-20T10:00:00",
  };
  const dd = serializeDd(ted, caf);
  const totals = type === 39 ? `<MntNeto>${net}</MntNeto><IVA>${iva}</IVA>` : `<MntExe>${total}</MntExe>`;
  const unsigned =
    `<?xml version="1.0" encoding="ISO-8859-1"?>\n<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><Documento ID="B${folio}T${type}">` +
    `<Encabezado><IdDoc><TipoDTE>${type}</TipoDTE><Folio>${folio}</Folio><FchEmis>2026-11-20</FchEmis>` +
    `<IndServicio>3</IndServicio></IdDoc>` +
    `<Emisor><RUTEmisor>${rut}</RUTEmisor><RznSocEmisor>Compañía Ñandú SpA</RznSocEmisor>` +
    `<GiroEmisor>Software</GiroEmisor></Emisor>` +
    `<Receptor><RUTRecep>66666666-6</RUTRecep></Receptor><Totales>${totals}<MntTotal>${total}</MntTotal></Totales>` +
    `</Encabezado>` +
    `<Detalle><NroLinDet>1</NroLinDet>${type === 41 ? "<IndExe>1</IndExe>" : ""}<NmbItem>${item}</NmbItem>` +
    `<QtyItem>1</QtyItem><PrcItem>${total}</PrcItem><MontoItem>${total}</MontoItem></Detalle>` +
    `<TED version="1.0">${dd}<FRMT algoritmo="SHA1withRSA">${signDd(dd, caf)}</FRMT></TED>` +
    `<TmstFirma>2026-11-20T10:00:00</TmstFirma></Documento></DTE>`;
  return signDte(unsigned, options.credentials);
}

/**
 * `xmlsec1 --verify --enabled-key-data x509 --id-attr:ID <ns>:Documento --id-attr:ID <ns>:SetDTE
 * --node-xpath <signatureXpath> --trusted-pem cert.pem <file>`: verifies the Signature the XPath
 * selects (e.g. the envelope's, or the one of the 2nd DTE), in place in the envelope.
 */
export function xmlsecVerifyNode(file: Buffer, certificatePem: string, signatureXpath: string): ToolResult {
  return withTempDir((dir) => {
    const path = join(dir, "envio.xml");
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
        "http://www.sii.cl/SiiDte:SetDTE",
        "--node-xpath",
        signatureXpath,
        "--trusted-pem",
        cert,
        path,
      ],
      { encoding: "utf8" },
    );
    return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
  });
}

/** XPath of the envelope's own Signature (last child of the root). */
export const ENVELOPE_SIGNATURE = "/*/*[local-name()='Signature']";
/** XPath of the Signature of the `n`th (1-based) DTE inside SetDTE. */
export function dteSignature(n: number): string {
  return `/*/*[local-name()='SetDTE']/*[local-name()='DTE'][${n}]/*[local-name()='Signature']`;
}
