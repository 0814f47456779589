/**
 * CAF (Código de Autorización de Folios), docs/sii-dte.md "CAF": the XML SII
 * issues for one folio range of one document type of one issuer.
 *
 *   AUTORIZACION > CAF version="1.0" > DA (RE, RS, TD, RNG/D..H, FA, RSAPK M/E, IDK) + FRMA
 *                > RSASK (issuer's private key, PEM) > RSAPUBK (its public key, PEM)
 *
 * `parseCaf` checks every part and exposes the values, the private key that signs the TED and the
 * `CAF` element to copy into `TED/DD`. The private key is secret: it is never printed (the parsed
 * object keeps it as a KeyObject, whose inspection does not show the key).
 */
import { createPrivateKey, createPublicKey, verify, type KeyLike, type KeyObject } from "node:crypto";
import { DOMParser } from "@xmldom/xmldom";
import { ValidationError } from "../../../domain/errors.js";
import { normalizeRut } from "../../../domain/rut.js";
import { cafLastUsableDate, siiDate } from "../../../domain/dte-rules.js";

export interface Caf {
  /** issuer RUT (`DA/RE`) */
  rut: string;
  /** issuer name (`DA/RS`) */
  businessName: string;
  /** document type (`DA/TD`) */
  type: number;
  /** first and last authorised folio (`DA/RNG/D`, `DA/RNG/H`) */
  from: number;
  to: number;
  /** authorisation date yyyy-mm-dd (`DA/FA`) */
  authorizedOn: string;
  /** SII key id (`DA/IDK`): 100 certification, 300 production */
  idk: number;
  /** true for certification (IDK 100) */
  testMode: boolean;
  /** last usable date (6 months from FA for 33, 43, 46, 56, 61), null when it does not expire */
  lastUsableDate: string | null;
  /** public key of `DA/RSAPK`: verifies the TED's FRMT */
  publicKey: KeyObject;
  /** `RSASK`: signs the TED */
  privateKey: KeyObject;
  /** the `CAF` element exactly as in the file, without whitespace between tags */
  cafXml: string;
}

interface XmlElement {
  tagName: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
  getElementsByTagName(name: string): { length: number; item(i: number): XmlElement | null };
}

const base64 = /^[A-Za-z0-9+/]+={0,2}$/;

function b64url(b64: string): string {
  return b64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function stripLeadingZeros(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  return bytes.subarray(i);
}

/** Removes whitespace between tags (the form TED signatures are computed over). */
export function flattenXml(xml: string): string {
  return xml.replace(/>\s+</g, "><").trim();
}

/** Throws the ValidationError of an invalid CAF, field `caf` listing every problem found. */
function invalidCaf(problems: string[]): never {
  throw new ValidationError(`invalid CAF: ${problems.join("; ")}`, { caf: problems });
}

function firstElement(parent: XmlElement, name: string): XmlElement | null {
  return parent.getElementsByTagName(name).item(0);
}

/** The trimmed text of `parent`'s first `name` element; a missing or empty one adds "`name` is missing". */
function requiredText(parent: XmlElement | null, name: string, problems: string[]): string | undefined {
  const el = parent ? firstElement(parent, name) : null;
  const value = el?.textContent?.trim();
  if (!value) problems.push(`${name} is missing`);
  return value || undefined;
}

/** A whole number of the CAF (TD, RNG/D, RNG/H, IDK); 0 when missing (already a problem). */
function cafInteger(name: string, value: string | undefined, problems: string[]): number {
  if (value === undefined) return 0;
  if (!/^\d+$/.test(value)) problems.push(`${name} ${value} is not a positive integer`);
  return Number(value);
}

/**
 * The `CAF` element, flattened (`cafXml`, the form the TED copies), and the file's root element;
 * throws at once when there is no CAF element or the file is not well-formed XML.
 */
function cafDocument(xml: string, problems: string[]): { cafXml: string; root: XmlElement } {
  const cafMatch = /<CAF\b[^>]*>[\s\S]*?<\/CAF>/.exec(xml);
  if (!cafMatch) {
    problems.push("no CAF element");
    invalidCaf(problems);
  }
  const errors: string[] = [];
  const doc = new DOMParser({
    errorHandler: {
      warning: () => {},
      error: (m: string) => errors.push(m),
      fatalError: (m: string) => errors.push(m),
    },
  }).parseFromString(xml.replace(/^<\?xml[^>]*\?>/, ""), "text/xml");
  if (errors.length > 0 || !doc.documentElement) {
    problems.push(`not well-formed XML (${errors[0] ?? "empty"})`);
    invalidCaf(problems);
  }
  return { cafXml: flattenXml(cafMatch[0]), root: doc.documentElement as unknown as XmlElement };
}

/** The values of `DA` before its key: RE (a RUT in normal form), RS, TD, RNG D..H, FA (yyyy-mm-dd), IDK. */
type CafAuthorization = Pick<Caf, "businessName" | "type" | "from" | "to" | "authorizedOn" | "idk"> & {
  rut: string | null;
};

/** Reads `DA`'s values, adding a problem for each one missing or malformed. */
function readAuthorization(da: XmlElement, problems: string[]): CafAuthorization {
  const reText = requiredText(da, "RE", problems);
  const rut = reText ? normalizeRut(reText) : null;
  if (reText && rut !== reText) problems.push(`RE ${reText} is not a RUT in normal form`);
  const businessName = requiredText(da, "RS", problems) ?? "";
  const type = cafInteger("TD", requiredText(da, "TD", problems), problems);
  const rng = firstElement(da, "RNG");
  const from = cafInteger("RNG/D", requiredText(rng, "D", problems), problems);
  const to = cafInteger("RNG/H", requiredText(rng, "H", problems), problems);
  if (from < 1 || to < from) problems.push(`RNG ${from}..${to} is not a folio range`);
  let authorizedOn = requiredText(da, "FA", problems) ?? "";
  try {
    if (authorizedOn) authorizedOn = siiDate(authorizedOn, "FA");
  } catch {
    problems.push(`FA ${authorizedOn} is not a date`);
  }
  const idk = cafInteger("IDK", requiredText(da, "IDK", problems), problems);
  return { rut, businessName, type, from, to, authorizedOn, idk };
}

/**
 * The key parts of a CAF as text: `DA/RSAPK` modulus and exponent (base64, RSA only), SII's
 * `FRMA` (base64, SHA1withRSA) and the issuer's `RSASK` (PEM); a problem for each one missing or
 * malformed.
 */
function readKeyTexts(
  root: XmlElement,
  caf: XmlElement,
  da: XmlElement,
  problems: string[],
): { m?: string; e?: string; frmaValue?: string; rsask?: string } {
  const rsapk = firstElement(da, "RSAPK");
  if (!rsapk) problems.push("RSAPK is missing (DSA CAFs are not supported)");
  const m = requiredText(rsapk, "M", problems)?.replace(/\s+/g, "");
  const e = requiredText(rsapk, "E", problems)?.replace(/\s+/g, "");
  if ((m && !base64.test(m)) || (e && !base64.test(e))) problems.push("RSAPK M/E are not base64");
  const frma = firstElement(caf, "FRMA");
  const frmaValue = frma?.textContent?.replace(/\s+/g, "");
  if (!frma || !frmaValue) problems.push("FRMA is missing");
  else if (frma.getAttribute("algoritmo") !== "SHA1withRSA")
    problems.push(`FRMA algoritmo ${frma.getAttribute("algoritmo")} is not SHA1withRSA`);
  const rsask = requiredText(root, "RSASK", problems);
  return { m, e, frmaValue, rsask };
}

/**
 * The CAF's keys: the public key of RSAPK (modulus `m`, exponent `e`, base64) and the private key
 * of RSASK (PEM). Throws at once when either is not a key; adds a problem when they do not match.
 */
function cafKeys(
  texts: { m: string; e: string; rsask: string },
  problems: string[],
): { publicKey: KeyObject; privateKey: KeyObject } {
  let publicKey: KeyObject;
  let privateKey: KeyObject;
  try {
    publicKey = createPublicKey({ key: { kty: "RSA", n: b64url(texts.m), e: b64url(texts.e) }, format: "jwk" });
  } catch {
    problems.push("RSAPK is not an RSA public key");
    return invalidCaf(problems);
  }
  try {
    privateKey = createPrivateKey(texts.rsask);
  } catch {
    problems.push("RSASK is not a PEM private key");
    return invalidCaf(problems);
  }
  const privateModulus = privateKey.export({ format: "jwk" }).n;
  const publicModulus = stripLeadingZeros(Buffer.from(texts.m, "base64")).toString("base64url");
  if (privateModulus !== publicModulus) problems.push("RSASK does not match RSAPK");
  return { publicKey, privateKey };
}

/**
 * Parses a CAF file (a Buffer is decoded as ISO-8859-1, as SII issues them; a string is taken as
 * is). Throws ValidationError with field `caf` listing every problem. With `siiPublicKey`, also
 * verifies SII's `FRMA` signature (SHA1withRSA) over `DA` as the file has it, flattened.
 */
export function parseCaf(file: string | Buffer, options: { siiPublicKey?: KeyLike } = {}): Caf {
  const xml = typeof file === "string" ? file : file.toString("latin1");
  const problems: string[] = [];
  const { cafXml, root } = cafDocument(xml, problems);
  const caf = firstElement(root, "CAF");
  const da = caf ? firstElement(caf, "DA") : null;
  if (!caf || !da) {
    problems.push("CAF/DA is missing");
    return invalidCaf(problems);
  }
  const authorization = readAuthorization(da, problems);
  const { m, e, frmaValue, rsask } = readKeyTexts(root, caf, da, problems);
  if (problems.length > 0) invalidCaf(problems);
  const { publicKey, privateKey } = cafKeys({ m: m!, e: e!, rsask: rsask! }, problems);
  if (options.siiPublicKey) {
    const daXml = /<DA>[\s\S]*?<\/DA>/.exec(cafXml)?.[0] ?? "";
    const ok = verify("sha1", Buffer.from(daXml, "latin1"), options.siiPublicKey, Buffer.from(frmaValue!, "base64"));
    if (!ok) problems.push("FRMA does not verify with SII's key");
  }
  if (problems.length > 0) invalidCaf(problems);
  const { type, authorizedOn, idk } = authorization;
  return {
    ...authorization,
    rut: authorization.rut!,
    testMode: idk === 100,
    lastUsableDate: cafLastUsableDate(type, authorizedOn),
    publicKey,
    privateKey,
    cafXml,
  };
}

/**
 * Checks that `caf` may stamp folio `folio` of type `type` issued by `rut` on `issueDate`: same
 * RUT and type, folio inside D..H, date not before FA and not after the CAF's last usable date.
 */
export function assertCafCovers(caf: Caf, doc: { rut: string; type: number; folio: number; issueDate: string }): void {
  const problems: string[] = [];
  if (caf.rut !== doc.rut) problems.push(`the CAF is for RUT ${caf.rut}, not ${doc.rut}`);
  if (caf.type !== doc.type) problems.push(`the CAF is for type ${caf.type}, not ${doc.type}`);
  if (doc.folio < caf.from || doc.folio > caf.to)
    problems.push(`folio ${doc.folio} is outside the CAF range ${caf.from}..${caf.to}`);
  if (doc.issueDate < caf.authorizedOn)
    problems.push(`issue date ${doc.issueDate} is before the CAF date ${caf.authorizedOn}`);
  if (caf.lastUsableDate && doc.issueDate > caf.lastUsableDate)
    problems.push(`the CAF expired on ${caf.lastUsableDate}`);
  if (problems.length > 0)
    throw new ValidationError(`CAF does not cover the document: ${problems.join("; ")}`, { caf: problems });
}
