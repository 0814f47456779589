/**
 * The printed timbre of a DTE: its TED as a PDF417 barcode (chile-dte.md §9 "Printed
 * representation": the TED XML compact, without inter-tag whitespace, ISO-8859-1, error
 * correction level 5, 13 columns as LibreDTE and Odoo print it), drawn with bwip-js.
 */
import bwipjs from "bwip-js";

/**
 * PNG of the PDF417 barcode carrying `ted` (one module = `scale` pixels, rows 3 modules high).
 * Characters are encoded one byte each (ISO-8859-1, the DTE's encoding).
 */
export function timbrePng(ted: string, scale = 2): Promise<Buffer> {
  // eclevel, columns and rowmult are BWIPP's pdf417 options, which bwip-js's types do not list
  const pdf417Options = { eclevel: 5, columns: 13, rowmult: 3 };
  return bwipjs.toBuffer({
    bcid: "pdf417",
    text: ted,
    scale,
    binarytext: true,
    backgroundcolor: "FFFFFF",
    paddingwidth: 2,
    paddingheight: 2,
    ...pdf417Options,
  });
}

/** Caption printed under the timbre (chile-dte.md §9): resolution number and year, and where to verify. */
export function timbreCaption(resolution: { number: number | null; date: Date | null }): string[] {
  const lines = ["Timbre Electrónico SII"];
  if (resolution.number !== null && resolution.date !== null)
    lines.push(`Res. ${resolution.number} de ${resolution.date.getUTCFullYear()}`);
  lines.push("Verifique documento: www.sii.cl");
  return lines;
}

/**
 * The assignable copy's label (chile-dte.md §9 CEDIBLE): `CEDIBLE` for invoices 33, 34, 43, 46,
 * `CEDIBLE CON SU FACTURA` for dispatch guides 52; null for types printed without one (boletas,
 * notes).
 */
export function cedibleLabel(documentCode: number): string | null {
  if ([33, 34, 43, 46].includes(documentCode)) return "CEDIBLE";
  if (documentCode === 52) return "CEDIBLE CON SU FACTURA";
  return null;
}
