/**
 * Chile's SII as a library (docs/sii-dte.md): build a DTE with its TED, sign it and encode
 * it as the ISO-8859-1 file SII expects. Folios, issuing and sending are the services' (docs/sii-sending.md).
 */
import { buildDte, type DteInput } from "./dte.js";
import { dteSigner, type SigningCredentials } from "./signature.js";
import { encodeIso88591 } from "./encoding.js";
import type { Caf } from "./caf.js";
import type { DocumentTotals } from "../../../domain/totals.js";

export { buildDte, documentId, SII_NAMESPACE, FINAL_CONSUMER_RUT } from "./dte.js";
export type { BuiltDte, DteInput, DteEmitter, DteReceiver, DteLine, DteReference, DteTransport } from "./dte.js";
export { parseCaf, assertCafCovers, flattenXml, type Caf } from "./caf.js";
export { verifyTed, extractTed, compactTed, serializeDd, signDd } from "./ted.js";
export { timbrePng, timbreCaption, cedibleLabel } from "./timbre.js";
export { dteExport, dteParties, type DteParty } from "./dte-parties.js";
export { signDte, dteSigner, signEnveloped, keyInfoContent, type SigningCredentials } from "./signature.js";
export { encodeIso88591, decodeIso88591 } from "./encoding.js";

export interface SignedDte {
  id: string;
  /** the signed XML as a string */
  xml: string;
  /** the file: ISO-8859-1 bytes of `xml` */
  file: Buffer;
  totals: DocumentTotals;
}

/** Builds, stamps (TED with `caf`) and signs (with `credentials`) one DTE. */
export function issueDte(input: DteInput, caf: Caf, credentials: SigningCredentials): SignedDte {
  return dteIssuer(credentials)(input, caf);
}

/**
 * issueDte for many DTEs signed with one certificate: the key is checked and parsed once
 * (signature.ts dteSigner). Pass the same parsed `caf` object for DTEs of one CAF (its element is
 * parsed once for all their TEDs).
 */
export function dteIssuer(credentials: SigningCredentials): (input: DteInput, caf: Caf) => SignedDte {
  const sign = dteSigner(credentials);
  return (input, caf) => {
    const built = buildDte(input, caf);
    const xml = sign(built.xml);
    return { id: built.id, xml, file: encodeIso88591(xml), totals: built.totals };
  };
}
export {
  readEnvioDte,
  parseEnvioDte,
  validateEnvioDte,
  decodeXmlFile,
  SII_SCHEMA_DIR,
  type ReceivedDte,
  type ReceivedEnvelope,
} from "./received-envelope.js";
export {
  buildRecepcionDte,
  buildResultadoDte,
  buildEnvioRecibos,
  RECIBO_DECLARATION,
  type SignedXmlFile,
  type ResponseHeader,
  type AnsweredDocument,
  type RecepcionInput,
  type ResultadoInput,
  type RecibosInput,
} from "./responses.js";
export { verifyReceivedDte, type DteVerification } from "./received-verification.js";
export { verifyEnvelopedSignature, type SignatureCheck } from "./signature.js";
