/**
 * The tasks of the worker pool (infra/threads/pool.ts runs them in its threads): CPU-heavy pure
 * functions kept off the main event loop. Each task takes one structured-clonable input and
 * returns a `TaskOutcome`: the result, or the error it threw as a `ThreadError` (a thrown value
 * would lose a DomainError's class and fields on its way back). A task loads its module on first
 * use, so a thread that only renders PDFs never loads the signing code, and the other way round.
 */
import { move, transferableSymbol, valueSymbol } from "piscina";
import type { PdfDocumentData } from "../pdf.js";
import type { SwapPdfData } from "../swap-pdf.js";
import type { IssueJob, LocalFile } from "../taxagency/index.js";

/** An error as a thread sends it back: the name, message and (for DomainErrors) field errors. */
export interface ThreadError {
  name: string;
  message: string;
  fields?: Record<string, string[]>;
}

/** What a task sends back: `{ result }`, or `{ error }` for what it threw. */
export type TaskOutcome<Result> = { result: Result; error?: undefined } | { error: ThreadError };

/** What a thread sends back for a thrown value. */
export function threadError(e: unknown): ThreadError {
  if (e instanceof Error) {
    const fields = (e as { fields?: Record<string, string[]> }).fields;
    return { name: e.name, message: e.message, ...(fields ? { fields } : {}) };
  }
  return { name: "Error", message: String(e) };
}

/**
 * Runs `run` in the thread; the ArrayBuffers `buffers` names in its result are moved to the main
 * thread, not copied (piscina's transferable wrapper: the main thread receives the outcome itself).
 */
async function outcome<Result>(
  run: () => Promise<Result>,
  buffers: (result: Result) => ArrayBuffer[],
): Promise<TaskOutcome<Result>> {
  let done: TaskOutcome<Result>;
  try {
    done = { result: await run() };
  } catch (e) {
    return { error: threadError(e) };
  }
  const wrapped = { [transferableSymbol]: buffers(done.result), [valueSymbol]: done };
  return move(wrapped) as unknown as TaskOutcome<Result>;
}

/** The bytes of `pdf` in a Uint8Array of their own (moved back to the main thread, not copied). */
function ownBytes(pdf: Buffer): Uint8Array {
  return new Uint8Array(pdf.buffer, pdf.byteOffset, pdf.byteLength).slice();
}

const bytesBuffer = (bytes: Uint8Array) => [bytes.buffer as ArrayBuffer];

/** infra/pdf.ts `renderDocumentPdf`: the PDF's bytes. */
export function renderDocumentPdf(data: PdfDocumentData): Promise<TaskOutcome<Uint8Array>> {
  return outcome(async () => {
    const { renderDocumentPdf: render } = await import("../pdf.js");
    // a Buffer arrives as a Uint8Array (structured clone); pdfkit reads the PNG as a Buffer
    if (data.taxStamp) data.taxStamp.barcodePng = Buffer.from(data.taxStamp.barcodePng);
    return ownBytes(await render(data));
  }, bytesBuffer);
}

/** infra/swap-pdf.ts `renderSwapPdf`: the PDF's bytes. */
export function renderSwapPdf(data: SwapPdfData): Promise<TaskOutcome<Uint8Array>> {
  return outcome(async () => {
    const { renderSwapPdf: render } = await import("../swap-pdf.js");
    return ownBytes(await render(data));
  }, bytesBuffer);
}

/**
 * infra/taxagency/index.ts `issueLocalFiles` (SII: the DTE XML, its TED signed with the CAF's key
 * and the XMLDSig with the certificate): the files in the order of `job.documents`.
 */
export function issueLocalFiles(job: IssueJob): Promise<TaskOutcome<LocalFile[]>> {
  return outcome(
    async () => {
      const { issueLocalFiles: issue } = await import("../taxagency/index.js");
      return issue(job).map((f) => {
        const bytes = ownBytes(f.content);
        return { ...f, content: Buffer.from(bytes.buffer, 0, bytes.byteLength) };
      });
    },
    (files) => files.map((f) => f.content.buffer as ArrayBuffer),
  );
}

/** The tasks by name, as the pool runs them. */
export const tasks = { renderDocumentPdf, renderSwapPdf, issueLocalFiles };
