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

/**
 * Parses a CAF file (a Buffer is decoded as ISO-8859-1, as SII issues them; a string is taken as
 * is). Throws ValidationError with field `caf` listing every problem. With `siiPublicKey`, also
 * verifies SII's `FRMA` signature over `DA`.
 */
export function parseCaf(file: string | Buffer, options: { siiPublicKey?: KeyLike } = {}): Caf {
  const xml = typeof file === "string" ? file : file.toString("latin1");
  const problems: string[] = [];
  const fail = (): never => {
    throw new ValidationError(`invalid CAF: ${problems.join("; ")}`, { caf: problems });
  };

  const cafMatch = /<CAF\b[^>]*>[\s\S]*?<\/CAF>/.exec(xml);
  if (!cafMatch) {
    problems.push("no CAF element");
    fail();
  }
  const cafXml = flattenXml(cafMatch![0]);

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
    fail();
  }
  const root = doc.documentElement as unknown as XmlElement;
  const first = (parent: XmlElement, name: string): XmlElement | null => parent.getElementsByTagName(name).item(0);
  const text = (parent: XmlElement | null, name: string): string | undefined => {
    const el = parent ? first(parent, name) : null;
    const value = el?.textContent?.trim();
    if (!value) problems.push(`${name} is missing`);
    return value || undefined;
  };

  const caf = first(root, "CAF");
  const da = caf ? first(caf, "DA") : null;
  if (!caf || !da) {
    problems.push("CAF/DA is missing");
    fail();
  }
  const reText = text(da, "RE");
  const rut = reText ? normalizeRut(reText) : null;
  if (reText && rut !== reText) problems.push(`RE ${reText} is not a RUT in normal form`);
  const businessName = text(da, "RS") ?? "";
  const integer = (name: string, value: string | undefined): number => {
    if (value === undefined) return 0;
    if (!/^\d+$/.test(value)) problems.push(`${name} ${value} is not a positive integer`);
    return Number(value);
  };
  const type = integer("TD", text(da, "TD"));
  const rng = first(da!, "RNG");
  const from = integer("RNG/D", text(rng, "D"));
  const to = integer("RNG/H", text(rng, "H"));
  if (from < 1 || to < from) problems.push(`RNG ${from}..${to} is not a folio range`);
  let authorizedOn = text(da, "FA") ?? "";
  try {
    if (authorizedOn) authorizedOn = siiDate(authorizedOn, "FA");
  } catch {
    problems.push(`FA ${authorizedOn} is not a date`);
  }
  const idk = integer("IDK", text(da, "IDK"));
  const rsapk = first(da!, "RSAPK");
  if (!rsapk) problems.push("RSAPK is missing (DSA CAFs are not supported)");
  const m = text(rsapk, "M")?.replace(/\s+/g, "");
  const e = text(rsapk, "E")?.replace(/\s+/g, "");
  if ((m && !base64.test(m)) || (e && !base64.test(e))) problems.push("RSAPK M/E are not base64");
  const frma = first(caf!, "FRMA");
  const frmaValue = frma?.textContent?.replace(/\s+/g, "");
  if (!frma || !frmaValue) problems.push("FRMA is missing");
  else if (frma.getAttribute("algoritmo") !== "SHA1withRSA")
    problems.push(`FRMA algoritmo ${frma.getAttribute("algoritmo")} is not SHA1withRSA`);
  const rsask = text(root, "RSASK");
  if (problems.length > 0) fail();

  let publicKey: KeyObject;
  let privateKey: KeyObject;
  try {
    publicKey = createPublicKey({ key: { kty: "RSA", n: b64url(m!), e: b64url(e!) }, format: "jwk" });
  } catch {
    problems.push("RSAPK is not an RSA public key");
    return fail();
  }
  try {
    privateKey = createPrivateKey(rsask!);
  } catch {
    problems.push("RSASK is not a PEM private key");
    return fail();
  }
  const privateModulus = privateKey.export({ format: "jwk" }).n;
  const publicModulus = stripLeadingZeros(Buffer.from(m!, "base64")).toString("base64url");
  if (privateModulus !== publicModulus) problems.push("RSASK does not match RSAPK");

  if (options.siiPublicKey) {
    const daXml = /<DA>[\s\S]*?<\/DA>/.exec(cafXml)?.[0] ?? "";
    const ok = verify("sha1", Buffer.from(daXml, "latin1"), options.siiPublicKey, Buffer.from(frmaValue!, "base64"));
    if (!ok) problems.push("FRMA does not verify with SII's key");
  }
  if (problems.length > 0) fail();

  return {
    rut: rut!,
    businessName,
    type,
    from,
    to,
    authorizedOn,
    idk,
    testMode: idk === 100,
    lastUsableDate: cafLastUsableDate(type, authorizedOn),
    publicKey: publicKey!,
    privateKey: privateKey!,
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
