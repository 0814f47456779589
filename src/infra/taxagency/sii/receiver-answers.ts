/**
 * Reading a receiver's answer to DTEs we issued (docs/sii-exchange.md "Inbound"): SII's three
 * exchange files, validated against SII's schemas in process (xmllint-wasm) and their signatures
 * verified (xml-crypto, signature.ts verifyEnvelopedSignature):
 *
 *   RespuestaDTE > Resultado ID > Caratula, RecepcionEnvio > RecepcionDTE*   (reception)  RespuestaEnvioDTE_v10.xsd
 *   RespuestaDTE > Resultado ID > Caratula, ResultadoDTE*                    (result)     RespuestaEnvioDTE_v10.xsd
 *   EnvioRecibos > SetRecibos ID > Caratula, Recibo* (each signed)           (receipt)    EnvioRecibos_v10.xsd
 *
 * The files responses.ts builds for our own answers are exactly these; a receiver's come the same way.
 */
import { DOMParser } from "@xmldom/xmldom";
import { ValidationError } from "../../../domain/errors.js";
import { SII_NAMESPACE } from "./dte.js";
import { decodeXmlFile, validateSiiXml } from "./received-envelope.js";
import { verifyEnvelopedSignature } from "./signature.js";

export type ReceiverAnswerKind = "reception" | "result" | "receipt";

/** One document an answer is about, with the receiver's verdict on it. */
export interface AnsweredDte {
  type: number;
  folio: number;
  issueDate: string;
  /** `RUTEmisor` (must be us) and `RUTRecep` (the receiver), upper case */
  issuerRut: string;
  receiverRut: string;
  total: string;
  /** EstadoRecepDTE (reception) or EstadoDTE (result); null for a receipt */
  code: number | null;
  /** RecepDTEGlosa / EstadoDTEGlosa (+ CodRchDsc); for a receipt its Recinto and RutFirma */
  text: string | null;
}

export interface ReceiverAnswer {
  kind: ReceiverAnswerKind;
  /** Caratula `RutResponde` (the receiver) and `RutRecibe` (us, the issuer), upper case */
  responderRut: string;
  recipientRut: string;
  documents: AnsweredDte[];
}

function elements(parent: Element, name: string): Element[] {
  const out: Element[] = [];
  for (let n = parent.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1 && (n as Element).localName === name) out.push(n as Element);
  }
  return out;
}
function child(parent: Element | null | undefined, name: string): Element | null {
  return parent ? (elements(parent, name)[0] ?? null) : null;
}
function text(parent: Element | null, name: string): string {
  return child(parent, name)?.textContent?.trim() ?? "";
}

/** Throws a 400 on `xml` naming the signature when it does not verify. */
function requireSignature(xml: string, signature: Element | null, id: string, what: string): void {
  if (!signature) throw ValidationError.field("xml", `${what} is not signed`);
  const check = verifyEnvelopedSignature(xml, signature, id);
  if (!check.valid) throw ValidationError.field("xml", `the signature of ${what} does not verify: ${check.reason}`);
}

function documentOf(
  el: Element,
  typeName: "TipoDTE" | "TipoDoc",
  code: number | null,
  note: string | null,
): AnsweredDte {
  return {
    type: Number(text(el, typeName)),
    folio: Number(text(el, "Folio")),
    issueDate: text(el, "FchEmis"),
    issuerRut: text(el, "RUTEmisor").toUpperCase(),
    receiverRut: text(el, "RUTRecep").toUpperCase(),
    total: text(el, "MntTotal"),
    code,
    text: note,
  };
}

/**
 * The answer file's root element, from its first 300 characters after the XML declaration: a
 * `RespuestaDTE` or an `EnvioRecibos` (any namespace prefix); a 400 on field `xml` otherwise.
 */
function answerRoot(xml: string): "RespuestaDTE" | "EnvioRecibos" {
  const root = /<(?:[A-Za-z]+:)?(RespuestaDTE|EnvioRecibos)[\s>]/.exec(
    xml
      .replace(/<\?xml[^>]*\?>/, "")
      .trimStart()
      .slice(0, 300),
  )?.[1];
  if (!root)
    throw ValidationError.field(
      "xml",
      "must be a RespuestaDTE (RecepcionDTE, ResultadoDTE) or an EnvioRecibos of SII's exchange",
    );
  return root as "RespuestaDTE" | "EnvioRecibos";
}

/** Validates the file against its SII schema, RespuestaEnvioDTE_v10.xsd or EnvioRecibos_v10.xsd (400 when invalid). */
async function validateAnswer(file: Buffer | string, root: "RespuestaDTE" | "EnvioRecibos"): Promise<void> {
  if (root === "RespuestaDTE")
    await validateSiiXml(
      file,
      "RespuestaEnvioDTE_v10.xsd",
      ["SiiTypes_v10.xsd", "xmldsignature_v10.xsd"],
      "RespuestaDTE",
    );
  else
    await validateSiiXml(
      file,
      "EnvioRecibos_v10.xsd",
      ["Recibos_v10.xsd", "SiiTypes_v10.xsd", "xmldsignature_v10.xsd"],
      "EnvioRecibos",
    );
}

/** The Caratula's `RutResponde` and `RutRecibe`, upper case ("" when missing). */
function caratulaRuts(caratula: Element | null): Pick<ReceiverAnswer, "responderRut" | "recipientRut"> {
  return {
    responderRut: text(caratula, "RutResponde").toUpperCase(),
    recipientRut: text(caratula, "RutRecibe").toUpperCase(),
  };
}

/**
 * A `RespuestaDTE` (RespuestaEnvioDTE_v10.xsd), its signature over `Resultado` verified: a
 * reception (`RecepcionEnvio/RecepcionDTE`: EstadoRecepDTE, RecepDTEGlosa) or a result
 * (`ResultadoDTE`: EstadoDTE, EstadoDTEGlosa and CodRchDsc); a 400 when it has neither.
 */
function readRespuestaDte(xml: string, top: Element): ReceiverAnswer {
  const resultado = child(top, "Resultado")!;
  const id = resultado.getAttribute("ID") ?? "";
  requireSignature(xml, child(top, "Signature"), id, `the RespuestaDTE (Resultado ${id})`);
  const caratula = child(resultado, "Caratula");
  const recepcion = child(resultado, "RecepcionEnvio");
  const results = elements(resultado, "ResultadoDTE");
  const base = caratulaRuts(caratula);
  if (recepcion) {
    return {
      kind: "reception",
      ...base,
      documents: elements(recepcion, "RecepcionDTE").map((d) =>
        documentOf(d, "TipoDTE", Number(text(d, "EstadoRecepDTE")), text(d, "RecepDTEGlosa") || null),
      ),
    };
  }
  if (results.length) {
    return {
      kind: "result",
      ...base,
      documents: results.map((d) => {
        const reason = text(d, "CodRchDsc");
        const note = [text(d, "EstadoDTEGlosa"), reason ? `CodRchDsc ${reason}` : ""].filter(Boolean).join("; ");
        return documentOf(d, "TipoDTE", Number(text(d, "EstadoDTE")), note || null);
      }),
    };
  }
  throw ValidationError.field("xml", "the RespuestaDTE has neither RecepcionEnvio nor ResultadoDTE");
}

/**
 * An `EnvioRecibos` (EnvioRecibos_v10.xsd), the signatures of `SetRecibos` and of each `Recibo`
 * verified: a receipt per `DocumentoRecibo`, its text the Recinto and RutFirma.
 */
function readEnvioRecibos(xml: string, top: Element): ReceiverAnswer {
  const set = child(top, "SetRecibos")!;
  const setId = set.getAttribute("ID") ?? "";
  requireSignature(xml, child(top, "Signature"), setId, `the EnvioRecibos (SetRecibos ${setId})`);
  const caratula = child(set, "Caratula");
  const documents = elements(set, "Recibo").map((recibo) => {
    const documento = child(recibo, "DocumentoRecibo")!;
    const id = documento.getAttribute("ID") ?? "";
    requireSignature(xml, child(recibo, "Signature"), id, `the Recibo ${id}`);
    return documentOf(
      documento,
      "TipoDoc",
      null,
      `Recinto: ${text(documento, "Recinto")}; RutFirma: ${text(documento, "RutFirma")}`,
    );
  });
  return { kind: "receipt", ...caratulaRuts(caratula), documents };
}

/**
 * Reads a receiver's answer file (text, or bytes decoded as their XML declaration says): its
 * kind, Caratula and documents. Errors, all 400 on field `xml`: not well-formed; not a
 * RespuestaDTE or EnvioRecibos; not valid against SII's schema; a RespuestaDTE with neither
 * RecepcionEnvio nor ResultadoDTE; a signature (the Resultado's, the SetRecibos', any Recibo's)
 * that does not verify.
 */
export async function readReceiverAnswer(file: Buffer | string): Promise<ReceiverAnswer> {
  const xml = decodeXmlFile(file);
  const root = answerRoot(xml);
  await validateAnswer(file, root);
  const doc = new DOMParser().parseFromString(xml, "text/xml");
  const top = doc.documentElement!;
  if (top.namespaceURI !== SII_NAMESPACE) throw ValidationError.field("xml", `must be in namespace ${SII_NAMESPACE}`);
  return root === "RespuestaDTE" ? readRespuestaDte(xml, top) : readEnvioRecibos(xml, top);
}
