/**
 * Reading timbres back (docs/sii-dte.md "The printed timbre"): the PDF417 barcodes of a PDF,
 * extracted with pdf-parse and decoded with an independent reader (@zxing/library).
 */
import { PNG } from "pngjs";
import { PDFParse } from "pdf-parse";
import {
  BarcodeFormat,
  BinaryBitmap,
  DecodeHintType,
  HybridBinarizer,
  PDF417Reader,
  RGBLuminanceSource,
  ZXingStringEncoding,
} from "@zxing/library";

// @zxing/library 0.21 (the last release that supports Node 20, docs/decisions.md) decodes
// ISO-8859-1 text through a decodeURIComponent fallback outside browsers, which throws on accents.
// Node's TextDecoder reads ISO-8859-1 itself; 0.23 does exactly this for every encoding.
ZXingStringEncoding.customDecoder = (bytes, encodingName) => new TextDecoder(encodingName).decode(bytes);

/** Decodes the single PDF417 barcode of a grayscale or RGB(A) image. */
export function decodePdf417(pixels: { width: number; height: number; channels: number; data: Uint8Array }): string {
  const luminance = new Uint8ClampedArray(pixels.width * pixels.height);
  for (let i = 0; i < luminance.length; i++) {
    const o = i * pixels.channels;
    luminance[i] =
      pixels.channels < 3
        ? pixels.data[o]
        : (pixels.data[o] * 299 + pixels.data[o + 1] * 587 + pixels.data[o + 2] * 114) / 1000;
  }
  const bitmap = new BinaryBitmap(new HybridBinarizer(new RGBLuminanceSource(luminance, pixels.width, pixels.height)));
  const hints = new Map<DecodeHintType, unknown>([
    [DecodeHintType.POSSIBLE_FORMATS, [BarcodeFormat.PDF_417]],
    [DecodeHintType.PURE_BARCODE, true],
  ]);
  return new PDF417Reader().decode(bitmap, hints).getText();
}

/** The decoded text of the one barcode on each page of `pdf` (pages without an image are left out). */
export async function pdfTimbres(pdf: Buffer): Promise<string[]> {
  const parser = new PDFParse({ data: new Uint8Array(pdf) });
  try {
    const images = await parser.getImage({ imageDataUrl: false });
    // pdf-parse hands each image back as a PNG file: read its pixels, then decode the barcode
    return images.pages
      .filter((page) => page.images.length > 0)
      .map((page) => {
        const png = PNG.sync.read(Buffer.from(page.images[0].data));
        return decodePdf417({ width: png.width, height: png.height, channels: 4, data: png.data });
      });
  } finally {
    await parser.destroy();
  }
}
