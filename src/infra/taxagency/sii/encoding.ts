/**
 * SII's DTE files are ISO-8859-1 (docs/sii-dte.md "Encoding").
 * `encodeIso88591` turns the XML string into those bytes; the XML declaration must say so.
 */

/**
 * ISO-8859-1 bytes of `xml`. Makes sure the declaration says encoding="ISO-8859-1" (adds one when
 * missing, rewrites another encoding). Characters outside ISO-8859-1 (the DTE builder never emits
 * them: dte-rules.ts siiText replaces them) become numeric character references, so nothing is
 * lost or silently turned into "?".
 */
export function encodeIso88591(xml: string): Buffer {
  const declaration = /^<\?xml\s[^?]*\?>/.exec(xml);
  let text: string;
  if (!declaration) text = `<?xml version="1.0" encoding="ISO-8859-1"?>\n${xml}`;
  else if (/encoding\s*=/.test(declaration[0])) {
    text = xml.replace(/^(<\?xml\s[^?]*encoding\s*=\s*)(["'])[^"']*\2/, '$1"ISO-8859-1"');
  } else text = xml.replace(/^<\?xml(\s+version\s*=\s*(["'])[^"']*\2)?/, (m) => `${m} encoding="ISO-8859-1"`);
  let out = "";
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    out += code > 0xff ? `&#${code};` : ch;
  }
  return Buffer.from(out, "latin1");
}

/** Decodes an ISO-8859-1 DTE file back to a string (what a reader of SII files does). */
export function decodeIso88591(file: Buffer): string {
  return file.toString("latin1");
}
