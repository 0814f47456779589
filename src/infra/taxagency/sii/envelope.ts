/**
 * The envelopes SII receives (docs/sii-sending.md "What is sent"; schemas
 * schema/sii/EnvioDTE_v10.xsd and schema/sii/EnvioBOLETA_v11.xsd):
 *
 *   EnvioDTE|EnvioBOLETA version="1.0" xmlns="http://www.sii.cl/SiiDte"
 *   ├─ SetDTE ID="SetDoc"
 *   │  ├─ Caratula version="1.0"
 *   │  │    RutEmisor, RutEnvia, RutReceptor, FchResol, NroResol, TmstFirmaEnv,
 *   │  │    SubTotDTE (TpoDTE, NroDTE) per document type, in ascending type order
 *   │  └─ DTE … (the signed DTEs, byte for byte)
 *   └─ Signature over #SetDoc (same shape as the DTE signature: inclusive C14N, rsa-sha1, sha1,
 *      KeyValue + X509Certificate)
 *
 * Namespaces: every DTE is signed standalone with `xmlns="http://www.sii.cl/SiiDte"` on its root
 * (signature.ts). Inclusive C14N renders every namespace in scope of the signed `Documento`, so
 * the envelope declares exactly that default namespace and nothing else (no `xmlns:xsi` /
 * `xsi:schemaLocation`, which would enter each Documento's canonical form and break its digest).
 * The DTE texts are concatenated, never re-serialized, and only the envelope `Signature` is
 * inserted before the closing tag, so each embedded DTE keeps its bytes and its signature.
 */
import { ValidationError } from "../../../domain/errors.js";
import { siiDate, siiRut, siiTimestamp } from "../../../domain/dte-rules.js";
import { SII_NAMESPACE } from "./dte.js";
import { decodeIso88591, encodeIso88591 } from "./encoding.js";
import { signEnveloped, type SigningCredentials } from "./signature.js";

/** SII's own RUT: `RutReceptor` of an envelope uploaded to SII. */
export const SII_RUT = "60803000-K";
/** `SetDTE/@ID` (SII's example and LibreDTE use "SetDoc"). */
export const SET_ID = "SetDoc";

/** The `Caratula` fields the caller knows; `TmstFirmaEnv` and `SubTotDTE` are computed. */
export interface Caratula {
  /** issuer RUT (any input form; written normalized, e.g. "76042235-5"); every DTE must be its */
  rutEmisor: string;
  /** RUT of the person whose certificate signs (the sender) */
  rutEnvia: string;
  /** who receives the envelope: SII_RUT when uploading to SII, the customer's RUT when e-mailing */
  rutReceptor: string;
  /** date of SII's resolution authorising the issuer, yyyy-mm-dd */
  fchResol: string;
  /** number of that resolution; 0 in certification */
  nroResol: number;
}

export interface EnvelopeInput {
  /** signed DTEs: strings (with or without XML declaration) or their ISO-8859-1 files */
  dtes: (string | Buffer)[];
  caratula: Caratula;
  credentials: SigningCredentials;
  /** TmstFirmaEnv; a Date is written in America/Santiago time; default now */
  timestamp?: Date | string;
}

export interface BuiltEnvelope {
  /** the signed envelope as a string */
  xml: string;
  /** the file to upload: ISO-8859-1 bytes of `xml` */
  file: Buffer;
  /** SubTotDTE: number of documents per type, ascending type */
  subtotals: { type: number; count: number }[];
}

interface EnvelopeKind {
  root: "EnvioDTE" | "EnvioBOLETA";
  types: readonly number[];
  maxDocuments: number;
  maxTypes: number;
}

const ENVIO_DTE: EnvelopeKind = {
  root: "EnvioDTE",
  types: [33, 34, 43, 46, 52, 56, 61, 110, 111, 112],
  maxDocuments: 2000,
  maxTypes: 20,
};
const ENVIO_BOLETA: EnvelopeKind = { root: "EnvioBOLETA", types: [39, 41], maxDocuments: 500, maxTypes: 2 };

/** One signed DTE as the text to embed (declaration and surrounding whitespace removed) and its fields. */
function embeddable(dte: string | Buffer, index: number): { text: string; type: number; rut: string } {
  const xml = (typeof dte === "string" ? dte : decodeIso88591(dte)).replace(/^\uFEFF?\s*<\?xml[^?]*\?>/, "").trim();
  const field = `dtes.${index}`;
  const open = /^<DTE(\s[^>]*)?>/.exec(xml);
  if (!open || !xml.endsWith("</DTE>")) throw ValidationError.field(field, "must be a DTE element");
  const xmlns = /\sxmlns="([^"]*)"/.exec(open[1] ?? "")?.[1];
  if (xmlns !== SII_NAMESPACE)
    throw ValidationError.field(field, `the DTE must declare xmlns="${SII_NAMESPACE}" (it is signed standalone)`);
  if (/\sxmlns:/.test(open[1] ?? ""))
    throw ValidationError.field(field, "the DTE must not declare prefixed namespaces");
  if (!/<Signature[\s>]/.test(xml)) throw ValidationError.field(field, "the DTE is not signed");
  const type = Number(/<TipoDTE>(\d+)<\/TipoDTE>/.exec(xml)?.[1]);
  const rut = /<RUTEmisor>([^<]+)<\/RUTEmisor>/.exec(xml)?.[1];
  if (!type || !rut) throw ValidationError.field(field, "the DTE has no TipoDTE or RUTEmisor");
  return { text: xml, type, rut };
}

function buildEnvelope(kind: EnvelopeKind, input: EnvelopeInput): BuiltEnvelope {
  if (input.dtes.length < 1 || input.dtes.length > kind.maxDocuments) {
    throw ValidationError.field("dtes", `an ${kind.root} holds 1 to ${kind.maxDocuments} documents`);
  }
  const c = input.caratula;
  const rutEmisor = siiRut(c.rutEmisor, "caratula.rutEmisor");
  const rutEnvia = siiRut(c.rutEnvia, "caratula.rutEnvia");
  const rutReceptor = siiRut(c.rutReceptor, "caratula.rutReceptor");
  const fchResol = siiDate(c.fchResol, "caratula.fchResol");
  if (!Number.isInteger(c.nroResol) || c.nroResol < 0 || c.nroResol > 999_999) {
    throw ValidationError.field("caratula.nroResol", "must be an integer from 0 to 999999");
  }
  const dtes = input.dtes.map(embeddable);
  const counts = new Map<number, number>();
  dtes.forEach((d, i) => {
    if (!kind.types.includes(d.type))
      throw ValidationError.field(
        `dtes.${i}`,
        `type ${d.type} does not go in an ${kind.root} (${kind.types.join(", ")})`,
      );
    if (siiRut(d.rut, `dtes.${i}`) !== rutEmisor)
      throw ValidationError.field(`dtes.${i}`, `issued by ${d.rut}, not by the envelope's RutEmisor ${rutEmisor}`);
    counts.set(d.type, (counts.get(d.type) ?? 0) + 1);
  });
  const subtotals = [...counts.entries()].sort(([a], [b]) => a - b).map(([type, count]) => ({ type, count }));
  if (subtotals.length > kind.maxTypes)
    throw ValidationError.field("dtes", `at most ${kind.maxTypes} document types per ${kind.root}`);

  const caratula =
    `<Caratula version="1.0"><RutEmisor>${rutEmisor}</RutEmisor><RutEnvia>${rutEnvia}</RutEnvia>` +
    `<RutReceptor>${rutReceptor}</RutReceptor><FchResol>${fchResol}</FchResol><NroResol>${c.nroResol}</NroResol>` +
    `<TmstFirmaEnv>${siiTimestamp(input.timestamp ?? new Date())}</TmstFirmaEnv>` +
    subtotals.map((s) => `<SubTotDTE><TpoDTE>${s.type}</TpoDTE><NroDTE>${s.count}</NroDTE></SubTotDTE>`).join("") +
    `</Caratula>`;
  const unsigned =
    `<?xml version="1.0" encoding="ISO-8859-1"?>\n<${kind.root} xmlns="${SII_NAMESPACE}" version="1.0">` +
    `<SetDTE ID="${SET_ID}">${caratula}${dtes.map((d) => d.text).join("")}</SetDTE></${kind.root}>`;
  const xml = signEnveloped(unsigned, "SetDTE", input.credentials);
  return { xml, file: encodeIso88591(xml), subtotals };
}

/**
 * `EnvioDTE` of signed DTEs of types 33, 34, 43, 46, 52, 56, 61, 110–112 (up to 2000, 20 types),
 * signed with `credentials`. Throws ValidationError (field `dtes.<i>` or `caratula.<name>`) for a
 * DTE that is not a signed SiiDte DTE of the issuer, a boleta, or a bad Caratula field.
 */
export function buildEnvioDte(input: EnvelopeInput): BuiltEnvelope {
  return buildEnvelope(ENVIO_DTE, input);
}

/** `EnvioBOLETA` (EnvioBOLETA_v11.xsd) of signed boletas, types 39 and 41 (up to 500). Same errors. */
export function buildEnvioBoleta(input: EnvelopeInput): BuiltEnvelope {
  return buildEnvelope(ENVIO_BOLETA, input);
}

/** Whether a DTE type goes in an EnvioBOLETA (39, 41) rather than an EnvioDTE. */
export function isBoletaType(type: number): boolean {
  return ENVIO_BOLETA.types.includes(type);
}
