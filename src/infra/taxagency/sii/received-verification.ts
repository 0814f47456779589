/**
 * Verifying a supplier's DTE on import (docs/sii-receiving.md "Verification"):
 *
 * - the issuer's XMLDSig signature (signature.ts verifyEnvelopedSignature): the DTE's `Signature`
 *   must reference its `Documento` and verify with the certificate in its KeyInfo. The DTE is
 *   checked as the standalone document the issuer signed (the `DTE` element with its own default
 *   namespace, as dte.ts signs and envelope.ts embeds it), so an envelope's extra namespace
 *   declarations do not count against the issuer.
 * - the TED (timbre, ted.ts): `FRMT` (SHA1withRSA) must verify over `TED/DD` flattened exactly as
 *   ted.ts signs it (no whitespace between tags, no namespace declaration, ISO-8859-1 bytes) with
 *   the CAF's public key `DD/CAF/DA/RSAPK`; the DD must describe this document (RE, TD, F, FE, RR,
 *   MNT equal to the Encabezado's), and the CAF must be the issuer's, of this type, and cover the
 *   folio. The CAF's own signature (FRMA, by SII's key) is not checked: SII publishes no key for it.
 */
import { createPublicKey, verify, type KeyObject } from "node:crypto";
import { DOMParser, XMLSerializer } from "@xmldom/xmldom";
import { SII_NAMESPACE } from "./dte.js";
import { verifyEnvelopedSignature } from "./signature.js";

/** Per DTE: `signatureValid` (XMLDSig), `tedValid` (timbre) and the reasons when either is false. */
export interface DteVerification {
  signatureValid: boolean;
  tedValid: boolean;
  /**
   * null when both are true; otherwise the reasons, e.g. "signature: the signature does not verify; TED: FRMT does not
   * verify with the CAF's key"
   */
  reason: string | null;
}

function child(parent: Element | null | undefined, name: string): Element | null {
  if (!parent) return null;
  for (let n = parent.firstChild; n; n = n.nextSibling) {
    if (n.nodeType === 1 && (n as Element).localName === name) return n as Element;
  }
  return null;
}
function path(parent: Element | null, ...names: string[]): Element | null {
  return names.reduce<Element | null>((el, name) => child(el, name), parent);
}
function text(el: Element | null): string {
  return el?.textContent?.trim() ?? "";
}
function b64url(value: string): string {
  return Buffer.from(value.replace(/\s+/g, ""), "base64").toString("base64url");
}

/** The TED check of a parsed DTE; null when valid, else the reason. */
function tedProblem(dte: Element): string | null {
  const documento = child(dte, "Documento");
  const ted = child(documento, "TED");
  const dd = child(ted, "DD");
  const frmt = child(ted, "FRMT");
  if (!ted || !dd || !frmt) return "the DTE has no TED (DD and FRMT)";
  if (frmt.getAttribute("algoritmo") !== "SHA1withRSA")
    return `FRMT algorithm ${frmt.getAttribute("algoritmo")} is not supported (SHA1withRSA)`;
  const encabezado = child(documento, "Encabezado");
  const idDoc = child(encabezado, "IdDoc");
  const expected: [string, string][] = [
    ["RE", text(path(encabezado, "Emisor", "RUTEmisor"))],
    ["TD", text(child(idDoc, "TipoDTE"))],
    ["F", text(child(idDoc, "Folio"))],
    ["FE", text(child(idDoc, "FchEmis"))],
    ["RR", text(path(encabezado, "Receptor", "RUTRecep"))],
    ["MNT", text(path(encabezado, "Totales", "MntTotal"))],
  ];
  const mismatched = expected
    .filter(([name, value]) => text(child(dd, name)).toUpperCase() !== value.toUpperCase())
    .map(([name]) => name);
  if (mismatched.length) return `the timbre's DD does not match the document (${mismatched.join(", ")})`;
  const da = path(dd, "CAF", "DA");
  const m = text(path(da, "RSAPK", "M"));
  const e = text(path(da, "RSAPK", "E"));
  if (!m || !e) return "the CAF in the timbre has no RSAPK";
  if (text(child(da, "RE")).toUpperCase() !== expected[0][1].toUpperCase() || text(child(da, "TD")) !== expected[1][1])
    return "the CAF in the timbre belongs to another issuer or document type";
  const folio = Number(expected[2][1]);
  const [from, to] = [Number(text(path(da, "RNG", "D"))), Number(text(path(da, "RNG", "H")))];
  if (!(folio >= from && folio <= to)) return `folio ${folio} is outside the CAF's range ${from}..${to}`;
  let ok = false;
  try {
    const key = createPublicKey({ key: { kty: "RSA", n: b64url(m), e: b64url(e) }, format: "jwk" });
    const flattened = new XMLSerializer()
      .serializeToString(dd)
      .replace(/^<DD xmlns="[^"]*"/, "<DD")
      .replace(/>\s+</g, "><");
    ok = verifyRsaSha1(flattened, text(frmt), key);
  } catch {
    return "the CAF's RSAPK is not an RSA public key";
  }
  return ok ? null : "FRMT does not verify with the CAF's public key over the DD";
}

function verifyRsaSha1(data: string, signatureB64: string, key: KeyObject): boolean {
  return verify("sha1", Buffer.from(data, "latin1"), key, Buffer.from(signatureB64.replace(/\s+/g, ""), "base64"));
}

/**
 * Verifies one received DTE: `dteXml` is the `DTE` element as the import stores it (received-envelope.ts
 * parseEnvioDte `xml`: serialized with its own `xmlns="http://www.sii.cl/SiiDte"`). Never throws.
 */
export function verifyReceivedDte(dteXml: string): DteVerification {
  const problems: string[] = [];
  const doc = new DOMParser({
    errorHandler: {
      warning: () => {},
      error: (m: string) => problems.push(m),
      fatalError: (m: string) => problems.push(m),
    },
  }).parseFromString(dteXml, "text/xml");
  const dte = doc.documentElement;
  if (problems.length || !dte || dte.localName !== "DTE" || dte.namespaceURI !== SII_NAMESPACE) {
    return { signatureValid: false, tedValid: false, reason: "not a readable SII DTE" };
  }
  const documento = child(dte, "Documento");
  const id = documento?.getAttribute("ID") ?? "";
  const signature = child(dte, "Signature");
  const sig =
    !signature || !id
      ? { valid: false, reason: "the DTE has no Signature or no Documento ID" }
      : verifyEnvelopedSignature(dteXml, signature, id);
  const ted = tedProblem(dte);
  const reasons = [sig.valid ? null : `signature: ${sig.reason}`, ted ? `TED: ${ted}` : null].filter(Boolean);
  return { signatureValid: sig.valid, tedValid: ted === null, reason: reasons.length ? reasons.join("; ") : null };
}
