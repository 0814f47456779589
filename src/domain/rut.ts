/**
 * Chilean RUT (Rol Único Tributario), docs/sii-dte.md "Sources" (RUT).
 * Check digit: body digits right to left times 2,3,4,5,6,7,2,3...; r = 11 - (sum mod 11);
 * 11 -> 0, 10 -> K. Normal form (SII XML): digits, "-", check digit, no dots, uppercase K.
 * Examples: 76042235-5, 60803000-K (SII), 77879240-0.
 */
export function rutCheckDigit(body: string): string {
  let sum = 0;
  let factor = 2;
  for (let i = body.length - 1; i >= 0; i--) {
    sum += Number(body[i]) * factor;
    factor = factor === 7 ? 2 : factor + 1;
  }
  const r = 11 - (sum % 11);
  return r === 11 ? "0" : r === 10 ? "K" : String(r);
}

/**
 * Normalizes "76.042.235-5", "76042235-5" or "760422355" to "76042235-5".
 * Returns null when the text is not a RUT or its check digit is wrong.
 */
export function normalizeRut(text: string): string | null {
  const compact = text.replace(/[.\s]/g, "").toUpperCase();
  const match = /^(\d{1,8})-?([\dK])$/.exec(compact);
  if (!match) return null;
  const body = match[1].replace(/^0+(?=\d)/, "");
  return rutCheckDigit(body) === match[2] ? `${body}-${match[2]}` : null;
}
