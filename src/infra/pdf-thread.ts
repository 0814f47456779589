/**
 * The PDF render thread (infra/pdf-pool.ts starts it): renders documents and swaps with pdfkit off
 * the main event loop. Messages in: `{ id, kind: "document" | "swap", data }`; out: `{ id, pdf }`
 * (the bytes) or `{ id, error }`.
 */
import { parentPort } from "node:worker_threads";
import { renderDocumentPdf, type PdfDocumentData } from "./pdf.js";
import { renderSwapPdf, type SwapPdfData } from "./swap-pdf.js";

parentPort!.on("message", async (job: { id: number; kind: "document" | "swap"; data: unknown }) => {
  try {
    let pdf: Buffer;
    if (job.kind === "document") {
      const data = job.data as PdfDocumentData;
      // a Buffer arrives as a Uint8Array (structured clone); pdfkit reads the PNG as a Buffer
      if (data.taxStamp) data.taxStamp.barcodePng = Buffer.from(data.taxStamp.barcodePng);
      pdf = await renderDocumentPdf(data);
    } else {
      pdf = await renderSwapPdf(job.data as SwapPdfData);
    }
    const bytes = new Uint8Array(pdf.buffer, pdf.byteOffset, pdf.byteLength).slice();
    parentPort!.postMessage({ id: job.id, pdf: bytes }, [bytes.buffer]);
  } catch (e) {
    parentPort!.postMessage({ id: job.id, error: e instanceof Error ? e.message : String(e) });
  }
});
