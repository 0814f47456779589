/**
 * Reading a received EnvioDTE (docs/sii-receiving.md):
 *
 *   EnvioDTE > SetDTE ID="SetDoc" > Caratula (RutEmisor, RutEnvia, RutReceptor, FchResol,
 *              NroResol, TmstFirmaEnv, SubTotDTE*) , DTE+ ; Signature
 *
 * `validateEnvioDte(file)` checks the file against SII's `schema/sii/EnvioDTE_v10.xsd` with
 * libxml2 compiled to WebAssembly (npm `xmllint-wasm`), so the server needs no native tool;
 * `parseEnvioDte(file)` turns it into plain objects (one per DTE: type, folio, issuer, receiver,
 * date, amounts, the DTE element's XML). `readEnvioDte` does both and is what the service calls.
 * Errors are `ValidationError`s on field `xml` naming the reason (malformed XML, schema error).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DOMParser, XMLSerializer } from "@xmldom/xmldom";
import { validateXML, type XMLFileInfo } from "xmllint-wasm";
import { ValidationError } from "../../../domain/errors.js";
import { SII_NAMESPACE } from "./dte.js";

/** schema/sii/ (SII's XSDs, kept together: they include each other by relative path). */
export const SII_SCHEMA_DIR = fileURLToPath(new URL("../../../../schema/sii/", import.meta.url));

/** One DTE of a received envelope, as read from its `Encabezado` and `Totales`. */
export interface ReceivedDte {
  /** `Documento/@ID`, e.g. `F60T33` */
  id: string;
  /** `TipoDTE` (33, 34, 52, 56, 61, ...) */
  type: number;
  folio: number;
  /** `FchEmis` yyyy-mm-dd */
  issueDate: string;
  /** `RUTEmisor`, normal form `97975000-5` */
  issuerRut: string;
  /** `RznSoc` (or `RznSocEmisor` on boletas) */
  issuerName: string | null;
  /** `RUTRecep` */
  receiverRut: string;
  receiverName: string | null;
  /** whole pesos as decimal strings: `MntNeto`, `MntExe`, `IVA`, `MntTotal` ("0" when absent) */
  netAmount: string;
  exemptAmount: string;
  tax: string;
  total: string;
  /** the `DTE` element serialized (with its Signature) */
  xml: string;
}

/** A received EnvioDTE. */
export interface ReceivedEnvelope {
  /** `SetDTE/@ID` (RecepcionEnvio's `EnvioDTEID`) */
  setId: string;
  /** Caratula `RutEmisor`, `RutEnvia`, `RutReceptor`, `TmstFirmaEnv` */
  issuerRut: string;
  senderRut: string;
  receiverRut: string;
  signedAt: string;
  /** SetDTE signature's `DigestValue` (RecepcionEnvio's optional `Digest`), null when absent */
  digest: string | null;
  documents: ReceivedDte[];
}

/**
 * The file's text: decoded as its XML declaration says (ISO-8859-1, SII's encoding, when it says
 * so or says nothing else; UTF-8 otherwise). A string is returned as is.
 */
export function decodeXmlFile(file: Buffer | string): string {
  if (typeof file === "string") return file;
  const head = file.subarray(0, 200).toString("latin1");
  const declared = /^\s*<\?xml[^?]*encoding\s*=\s*["']([^"']+)["']/i.exec(head)?.[1]?.toLowerCase();
  return declared === "utf-8" || declared === "utf8" ? file.toString("utf8") : file.toString("latin1");
}

const schemaCache = new Map<string, XMLFileInfo>();
function schemaFile(fileName: string): XMLFileInfo {
  let info = schemaCache.get(fileName);
  if (!info)
    schemaCache.set(
      fileName,
      (info = { fileName, contents: new Uint8Array(readFileSync(`${SII_SCHEMA_DIR}${fileName}`)) }),
    );
  return info;
}

/**
 * Validates an SII file against `schema/sii/<main>` (with the schemas it includes, `preload`) in
 * process (xmllint-wasm). Resolves when valid; rejects with a ValidationError on field `xml`:
 * "is not well-formed XML: ..." or "does not match SII's <label> schema (<main>): ..." (the first
 * libxml2 messages).
 */
export async function validateSiiXml(
  file: Buffer | string,
  main: string,
  preload: string[],
  label: string,
): Promise<void> {
  const bytes = typeof file === "string" ? Buffer.from(file, "utf8") : file;
  const text = decodeXmlFile(file);
  // xmllint reads the bytes by the declaration; a string is UTF-8, so its declaration must say so
  const contents =
    typeof file === "string"
      ? Buffer.from(text.replace(/^(\s*<\?xml[^?]*encoding\s*=\s*)(["'])[^"']*\2/i, '$1"UTF-8"'), "utf8")
      : bytes;
  const result = await validateXML({
    xml: { fileName: "file.xml", contents: new Uint8Array(contents) },
    schema: schemaFile(main),
    preload: preload.map(schemaFile),
  });
  if (result.valid) return;
  const parserError = result.errors.some((e) => /parser error/i.test(e.rawMessage));
  const messages = result.errors.slice(0, 3).map((e) => e.message.trim());
  if (parserError) throw ValidationError.field("xml", `is not well-formed XML: ${messages.join("; ")}`);
  throw ValidationError.field("xml", `does not match SII's ${label} schema (${main}): ${messages.join("; ")}`);
}

/**
 * Validates an EnvioDTE file against EnvioDTE_v10.xsd (which includes DTE_v10.xsd). Resolves
 * when valid; rejects with a ValidationError on field `xml`: "is not well-formed XML: ..." or
 * "does not match SII's EnvioDTE schema: ..." (the first libxml2 messages).
 */
export async function validateEnvioDte(file: Buffer | string): Promise<void> {
  return validateSiiXml(
    file,
    "EnvioDTE_v10.xsd",
    ["DTE_v10.xsd", "SiiTypes_v10.xsd", "xmldsignature_v10.xsd"],
    "EnvioDTE",
  );
}

function child(parent: Element | null | undefined, name: string): Element | null {
  if (!parent) return null;
  for (let n = parent.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1 && (n as Element).localName === name && (n as Element).namespaceURI === SII_NAMESPACE)
      return n as Element;
  }
  return null;
}
function children(parent: Element, name: string): Element[] {
  const out: Element[] = [];
  for (let n = parent.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1 && (n as Element).localName === name && (n as Element).namespaceURI === SII_NAMESPACE)
      out.push(n as Element);
  }
  return out;
}
function text(parent: Element | null, name: string): string | null {
  const value = child(parent, name)?.textContent?.trim();
  return value ? value : null;
}

/**
 * Parses an EnvioDTE (does not validate it: call validateEnvioDte first, or readEnvioDte).
 * Throws a ValidationError on field `xml` when it is not well-formed or not an EnvioDTE.
 */
export function parseEnvioDte(file: Buffer | string): ReceivedEnvelope {
  const problems: string[] = [];
  const doc = new DOMParser({
    locator: {},
    errorHandler: {
      warning: () => {},
      error: (m: string) => problems.push(m),
      fatalError: (m: string) => problems.push(m),
    },
  }).parseFromString(decodeXmlFile(file), "text/xml");
  if (problems.length) throw ValidationError.field("xml", `is not well-formed XML: ${problems[0]}`);
  const root = doc.documentElement;
  if (!root || root.localName !== "EnvioDTE" || root.namespaceURI !== SII_NAMESPACE) {
    throw ValidationError.field(
      "xml",
      `must be an EnvioDTE in namespace ${SII_NAMESPACE}, not ${root?.localName ?? "empty"}`,
    );
  }
  const set = child(root, "SetDTE");
  const caratula = child(set, "Caratula");
  if (!set || !caratula) throw ValidationError.field("xml", "has no SetDTE/Caratula");
  let digest: string | null = null;
  for (let n = root.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1 && (n as Element).localName === "Signature") {
      const value = (n as Element)
        .getElementsByTagNameNS("http://www.w3.org/2000/09/xmldsig#", "DigestValue")[0]
        ?.textContent?.replace(/\s+/g, "");
      digest = value || null;
    }
  }
  const serializer = new XMLSerializer();
  const documents = children(set, "DTE").map((dte, i): ReceivedDte => {
    const documento = child(dte, "Documento");
    const encabezado = child(documento, "Encabezado");
    const idDoc = child(encabezado, "IdDoc");
    const emisor = child(encabezado, "Emisor");
    const receptor = child(encabezado, "Receptor");
    const totales = child(encabezado, "Totales");
    const type = Number(text(idDoc, "TipoDTE"));
    const folio = Number(text(idDoc, "Folio"));
    const issuerRut = text(emisor, "RUTEmisor");
    const receiverRut = text(receptor, "RUTRecep");
    const issueDate = text(idDoc, "FchEmis");
    if (!documento || !Number.isInteger(type) || !Number.isInteger(folio) || !issuerRut || !receiverRut || !issueDate) {
      throw ValidationError.field(`xml`, `DTE ${i + 1} lacks TipoDTE, Folio, FchEmis, RUTEmisor or RUTRecep`);
    }
    return {
      id: documento.getAttribute("ID") ?? "",
      type,
      folio,
      issueDate,
      issuerRut: issuerRut.toUpperCase(),
      issuerName: text(emisor, "RznSoc") ?? text(emisor, "RznSocEmisor"),
      receiverRut: receiverRut.toUpperCase(),
      receiverName: text(receptor, "RznSocRecep"),
      netAmount: text(totales, "MntNeto") ?? "0",
      exemptAmount: text(totales, "MntExe") ?? "0",
      tax: text(totales, "IVA") ?? "0",
      total: text(totales, "MntTotal") ?? "0",
      xml: serializer.serializeToString(dte),
    };
  });
  if (documents.length === 0) throw ValidationError.field("xml", "has no DTE");
  return {
    setId: set.getAttribute("ID") ?? "",
    issuerRut: (text(caratula, "RutEmisor") ?? "").toUpperCase(),
    senderRut: (text(caratula, "RutEnvia") ?? "").toUpperCase(),
    receiverRut: (text(caratula, "RutReceptor") ?? "").toUpperCase(),
    signedAt: text(caratula, "TmstFirmaEnv") ?? "",
    digest,
    documents,
  };
}

/** Validates against the schema (validateEnvioDte), then parses (parseEnvioDte). */
export async function readEnvioDte(file: Buffer | string): Promise<ReceivedEnvelope> {
  await validateEnvioDte(file); // libxml2 reports every well-formedness error (xmldom is lenient)
  return parseEnvioDte(file);
}
