/**
 * TED (timbre electrónico), docs/sii-dte.md "TED (timbre)":
 *
 *   TED version="1.0" > DD (RE, TD, F, FE, RR, RSR, MNT, IT1, CAF, TSTED)
 *                     > FRMT algoritmo="SHA1withRSA"
 *
 * FRMT is the base64 RSA-SHA1 signature, made with the CAF's private key (RSASK), of the `DD`
 * element serialized without whitespace between tags and without namespace declarations, as
 * ISO-8859-1 bytes (LibreDTE, Odoo). The DTE is serialized compactly, so the `DD` bytes inside
 * the document are exactly the signed ones (`extractTed` + `verifyTed` check that).
 */
import { sign, verify, type KeyLike } from "node:crypto";
import { create } from "xmlbuilder2";
import { DOMParser } from "@xmldom/xmldom";
import { SII_MAX_LENGTH, requiredSiiText } from "../../../domain/dte-rules.js";
import type { Caf } from "./caf.js";

export type XMLBuilder = ReturnType<typeof create>;

export interface TedData {
  /** issuer RUT, normal form */
  emitterRut: string;
  type: number;
  folio: number;
  /** yyyy-mm-dd */
  issueDate: string;
  receiverRut: string;
  /** receiver name; cut to 40 */
  receiverName: string;
  /** MntTotal, whole pesos */
  total: string;
  /** first line's NmbItem; cut to 40 */
  firstItemName: string;
  /** TSTED, yyyy-mm-ddThh:mm:ss */
  timestamp: string;
}

interface DomNode {
  nodeType: number;
  nodeName: string;
  nodeValue: string | null;
  childNodes: { length: number; item(i: number): DomNode | null };
  attributes?: { length: number; item(i: number): { name: string; value: string } | null };
}

/** Re-creates a parsed element (names, attributes in order, texts) under `parent`. */
function copyElement(parent: XMLBuilder, node: DomNode): void {
  const attrs: Record<string, string> = {};
  for (let i = 0; i < (node.attributes?.length ?? 0); i++) {
    const a = node.attributes!.item(i)!;
    attrs[a.name] = a.value;
  }
  const el = parent.ele(node.nodeName, attrs);
  for (let i = 0; i < node.childNodes.length; i++) {
    const child = node.childNodes.item(i)!;
    if (child.nodeType === 1) copyElement(el, child);
    else if (child.nodeType === 3 && child.nodeValue && child.nodeValue.trim() !== "") el.txt(child.nodeValue);
  }
}

/** The parsed `CAF` element of each CAF, parsed once (a TED copies it into every DD it stamps). */
const parsedCafs = new WeakMap<Caf, DomNode>();

function cafElement(caf: Caf): DomNode {
  let element = parsedCafs.get(caf);
  if (!element) {
    element = new DOMParser().parseFromString(caf.cafXml, "text/xml").documentElement as unknown as DomNode;
    parsedCafs.set(caf, element);
  }
  return element;
}

/** Appends `DD` with its children to `parent` (in the parent's namespace, if any). */
export function appendDd(parent: XMLBuilder, data: TedData, caf: Caf): void {
  const dd = parent.ele("DD");
  dd.ele("RE").txt(data.emitterRut);
  dd.ele("TD").txt(String(data.type));
  dd.ele("F").txt(String(data.folio));
  dd.ele("FE").txt(data.issueDate);
  dd.ele("RR").txt(data.receiverRut);
  dd.ele("RSR").txt(requiredSiiText(data.receiverName, SII_MAX_LENGTH.RSR, "receiver.name"));
  dd.ele("MNT").txt(data.total);
  dd.ele("IT1").txt(requiredSiiText(data.firstItemName, SII_MAX_LENGTH.IT1, "lines.0.name"));
  copyElement(dd, cafElement(caf));
  dd.ele("TSTED").txt(data.timestamp);
}

/** The `DD` element as signed: compact, no namespace declaration. */
export function serializeDd(data: TedData, caf: Caf): string {
  const doc = create();
  appendDd(doc, data, caf);
  return doc.end({ headless: true, prettyPrint: false });
}

/** base64 SHA1withRSA signature of `dd` (ISO-8859-1 bytes) with the CAF's private key. */
export function signDd(dd: string, caf: Caf): string {
  return sign("sha1", Buffer.from(dd, "latin1"), caf.privateKey).toString("base64");
}

/** Appends `TED version="1.0"` (DD + FRMT) to `parent`. */
export function appendTed(parent: XMLBuilder, data: TedData, caf: Caf): void {
  const frmt = signDd(serializeDd(data, caf), caf);
  const ted = parent.ele("TED", { version: "1.0" });
  appendDd(ted, data, caf);
  ted.ele("FRMT", { algoritmo: "SHA1withRSA" }).txt(frmt);
}

/** The `DD` text and the `FRMT` value of the TED inside a DTE (as serialized, no reformatting). */
export function extractTed(xml: string): { dd: string; frmt: string } {
  const dd = /<DD>[\s\S]*?<\/DD>/.exec(xml)?.[0];
  const frmt = /<FRMT algoritmo="SHA1withRSA">([^<]*)<\/FRMT>/.exec(xml)?.[1];
  if (!dd || !frmt) throw new Error("no TED DD/FRMT found");
  return { dd, frmt };
}

/**
 * The whole TED element of a DTE as the printed barcode carries it (chile-dte.md §9): the
 * `<TED version="1.0">...</TED>` text as signed, without whitespace between tags.
 */
export function compactTed(xml: string): string {
  const ted = /<TED\b[^>]*>[\s\S]*?<\/TED>/.exec(xml)?.[0];
  if (!ted) throw new Error("no TED found");
  return ted.replace(/>\s+</g, "><");
}

/** Verifies a DTE's TED: FRMT over the flattened DD with the CAF public key (`DA/RSAPK`). */
export function verifyTed(xml: string, cafPublicKey: KeyLike): boolean {
  const { dd, frmt } = extractTed(xml);
  return verify(
    "sha1",
    Buffer.from(dd.replace(/>\s+</g, "><"), "latin1"),
    cafPublicKey,
    Buffer.from(frmt.replace(/\s+/g, ""), "base64"),
  );
}
