/**
 * The receiver's XML answers to a supplier's EnvioDTE (docs/sii-receiving.md "Files";
 * SII's schemas `schema/sii/RespuestaEnvioDTE_v10.xsd`, `EnvioRecibos_v10.xsd`, `Recibos_v10.xsd`;
 * docs/sii-receiving.md):
 *
 *   buildRecepcionDte  RespuestaDTE > Resultado ID > Caratula, RecepcionEnvio (RecepcionDTE per DTE); Signature
 *   buildResultadoDte  RespuestaDTE > Resultado ID > Caratula, ResultadoDTE per DTE; Signature
 *   buildEnvioRecibos  EnvioRecibos > SetRecibos ID > Caratula, Recibo+ (each signed); Signature
 *
 * Every signature is SII's enveloped XMLDSig (signature.ts: inclusive C14N, rsa-sha1, KeyValue and
 * X509Certificate) over the element with the `ID`, as last child of its parent. Returns the XML
 * text and the ISO-8859-1 file. Texts go through siiText (ISO-8859-1-safe, cut to SII's lengths).
 */
import { siiRut, siiText, siiTimestamp } from "../../../domain/dte-rules.js";
import { SII_NAMESPACE } from "./dte.js";
import { encodeIso88591 } from "./encoding.js";
import { signEnveloped, type SigningCredentials } from "./signature.js";

/** The legal sentence `Recibos_v10.xsd` fixes for `Declaracion` (Ley 19.983). */
export const RECIBO_DECLARATION =
  "El acuse de recibo que se declara en este acto, de acuerdo a lo dispuesto en la letra b) del Art. 4, y la letra " +
  "c) del Art. 5 de la Ley 19.983, acredita que la entrega de mercaderias o servicio(s) prestado(s) ha(n) sido " +
  "recibido(s).";

export interface SignedXmlFile {
  xml: string;
  /** ISO-8859-1 bytes with the declaration */
  file: Buffer;
}

function esc(value: string | number): string {
  return String(value).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
function el(name: string, value: string | number | null | undefined): string {
  return value === null || value === undefined || value === "" ? "" : `<${name}>${esc(value)}</${name}>`;
}

function finish(xml: string): SignedXmlFile {
  return { xml, file: encodeIso88591(xml) };
}

/** Who answers whom: the `Caratula` common to RespuestaDTE and EnvioRecibos. */
export interface ResponseHeader {
  /** our RUT (the DTEs' receiver): `RutResponde` */
  responderRut: string;
  /** the supplier's RUT (the DTEs' issuer): `RutRecibe` */
  recipientRut: string;
  contactName?: string | null;
  contactPhone?: string | null;
  contactEmail?: string | null;
  /** signing time (`TmstFirmaResp` / `TmstFirmaEnv`), a Date is written in America/Santiago time */
  signedAt: Date | string;
}

/** The document fields every answer repeats (from the received DTE). */
export interface AnsweredDocument {
  type: number;
  folio: number;
  issueDate: string;
  issuerRut: string;
  receiverRut: string;
  /** whole pesos */
  total: string | number;
}

function contact(h: ResponseHeader): string {
  return (
    el("NmbContacto", siiText(h.contactName, 40)) +
    el("FonoContacto", siiText(h.contactPhone, 40)) +
    el("MailContacto", siiText(h.contactEmail, 80))
  );
}

function respuestaCaratula(h: ResponseHeader, responseId: number, details: number): string {
  return (
    `<Caratula version="1.0">${el("RutResponde", siiRut(h.responderRut, "responderRut"))}` +
    `${el("RutRecibe", siiRut(h.recipientRut, "recipientRut"))}` +
    `${el("IdRespuesta", responseId)}${el("NroDetalles", details)}${contact(h)}` +
    `${el("TmstFirmaResp", siiTimestamp(h.signedAt))}</Caratula>`
  );
}

function documentFields(d: AnsweredDocument): string {
  return (
    el("TipoDTE", d.type) +
    el("Folio", d.folio) +
    el("FchEmis", d.issueDate) +
    el("RUTEmisor", siiRut(d.issuerRut, "issuerRut")) +
    el("RUTRecep", siiRut(d.receiverRut, "receiverRut")) +
    el("MntTotal", String(d.total))
  );
}

export interface RecepcionInput {
  header: ResponseHeader;
  /** `IdRespuesta`, 1..9999999999 */
  responseId: number;
  /** the received file's name (`NmbEnvio`, at most 80) */
  fileName: string;
  /** when we received it (`FchRecep`) */
  receivedAt: Date | string;
  /** our number for the envelope (`CodEnvio`, 1..9999999999) */
  envelopeCode: number;
  /** `SetDTE/@ID` of the envelope (`EnvioDTEID`) */
  envelopeId: string;
  /** SetDTE signature's DigestValue (`Digest`), optional */
  digest?: string | null;
  /** Caratula RutEmisor / RutReceptor of the envelope */
  envelopeIssuerRut: string;
  envelopeReceiverRut: string;
  /** `EstadoRecepEnv`: 0 ok, 1 schema, 2 signature, 3 wrong receiver RUT, 90 repeated, 91 unreadable, 99 other */
  status: 0 | 1 | 2 | 3 | 90 | 91 | 99;
  statusText: string;
  /** per DTE, `EstadoRecepDTE`: 0 ok, 1 signature, 2 issuer RUT, 3 receiver RUT, 4 repeated, 99 other */
  documents: (AnsweredDocument & { status: 0 | 1 | 2 | 3 | 4 | 99; statusText: string })[];
}

/** The signed reception acknowledgement (RespuestaDTE with one RecepcionEnvio), Resultado ID `RecepcionEnvio`. */
export function buildRecepcionDte(input: RecepcionInput, credentials: SigningCredentials): SignedXmlFile {
  const details = input.documents
    .map(
      (d) =>
        `<RecepcionDTE>${documentFields(d)}${el("EstadoRecepDTE", d.status)}` +
        `${el("RecepDTEGlosa", siiText(d.statusText, 256))}</RecepcionDTE>`,
    )
    .join("");
  const recepcion =
    `<RecepcionEnvio>${el("NmbEnvio", siiText(input.fileName, 80))}` +
    `${el("FchRecep", siiTimestamp(input.receivedAt))}${el("CodEnvio", input.envelopeCode)}` +
    `${el("EnvioDTEID", siiText(input.envelopeId, 80))}${el("Digest", input.digest ?? null)}` +
    `${el("RutEmisor", siiRut(input.envelopeIssuerRut, "envelopeIssuerRut"))}` +
    `${el("RutReceptor", siiRut(input.envelopeReceiverRut, "envelopeReceiverRut"))}` +
    `${el("EstadoRecepEnv", input.status)}${el("RecepEnvGlosa", siiText(input.statusText, 256))}` +
    `${input.documents.length ? el("NroDTE", input.documents.length) : ""}${details}</RecepcionEnvio>`;
  const xml =
    `<RespuestaDTE version="1.0" xmlns="${SII_NAMESPACE}"><Resultado ID="RecepcionEnvio">` +
    `${respuestaCaratula(input.header, input.responseId, 1)}${recepcion}</Resultado></RespuestaDTE>`;
  return finish(signEnveloped(xml, "Resultado", credentials));
}

export interface ResultadoInput {
  header: ResponseHeader;
  responseId: number;
  /** our number for the envelope (`CodEnvio`) */
  envelopeCode: number;
  /**
   * per DTE, `EstadoDTE` 0 accepted, 1 accepted with discrepancies, 2 rejected; `CodRchDsc` negative reason code when
   * rejected
   */
  documents: (AnsweredDocument & { status: 0 | 1 | 2; statusText: string; reasonCode?: number | null })[];
}

/** The signed commercial result (RespuestaDTE with one ResultadoDTE per document), Resultado ID `ResultadoDTE`. */
export function buildResultadoDte(input: ResultadoInput, credentials: SigningCredentials): SignedXmlFile {
  const details = input.documents
    .map(
      (d) =>
        `<ResultadoDTE>${documentFields(d)}${el("CodEnvio", input.envelopeCode)}${el("EstadoDTE", d.status)}` +
        `${el("EstadoDTEGlosa", siiText(d.statusText, 256))}${d.reasonCode ? el("CodRchDsc", d.reasonCode) : ""}` +
        `</ResultadoDTE>`,
    )
    .join("");
  const xml =
    `<RespuestaDTE version="1.0" xmlns="${SII_NAMESPACE}"><Resultado ID="ResultadoDTE">` +
    `${respuestaCaratula(input.header, input.responseId, input.documents.length)}${details}</Resultado></RespuestaDTE>`;
  return finish(signEnveloped(xml, "Resultado", credentials));
}

export interface RecibosInput {
  header: ResponseHeader;
  /** where the goods or services were received (`Recinto`, at most 80) */
  place: string;
  /** RUT of the person signing (the certificate's holder): `RutFirma` */
  signerRut: string;
  documents: AnsweredDocument[];
}

/**
 * The signed receipt of goods or services (Ley 19.983): one `Recibo` per document, each signed
 * over its `DocumentoRecibo` (ID `R<type>F<folio>`), and the `SetRecibos` (ID `SetRecibos`) signed
 * as a whole.
 */
export function buildEnvioRecibos(input: RecibosInput, credentials: SigningCredentials): SignedXmlFile {
  const signedAt = siiTimestamp(input.header.signedAt);
  const place = siiText(input.place, 80) ?? "";
  const recibos = input.documents.map((d) => {
    const recibo =
      `<Recibo version="1.0" xmlns="${SII_NAMESPACE}"><DocumentoRecibo ID="R${d.type}F${d.folio}">` +
      `${documentFields(d).replace(/^<TipoDTE>(\d+)<\/TipoDTE>/, "<TipoDoc>$1</TipoDoc>")}${el("Recinto", place)}` +
      `${el("RutFirma", siiRut(input.signerRut, "signerRut"))}${el("Declaracion", RECIBO_DECLARATION)}` +
      `${el("TmstFirmaRecibo", signedAt)}</DocumentoRecibo></Recibo>`;
    return signEnveloped(recibo, "DocumentoRecibo", credentials);
  });
  const h = input.header;
  const xml =
    `<EnvioRecibos version="1.0" xmlns="${SII_NAMESPACE}"><SetRecibos ID="SetRecibos"><Caratula version="1.0">` +
    `${el("RutResponde", siiRut(h.responderRut, "responderRut"))}` +
    `${el("RutRecibe", siiRut(h.recipientRut, "recipientRut"))}${contact(h)}` +
    `${el("TmstFirmaEnv", signedAt)}</Caratula>${recibos.join("")}</SetRecibos></EnvioRecibos>`;
  return finish(signEnveloped(xml, "SetRecibos", credentials));
}
