/**
 * Local files of tax documents built and signed in the worker pool's threads (infra/threads/pool.ts,
 * task `issueLocalFiles`): the RSA signatures (SII: the TED with the CAF's key, the XMLDSig with the
 * certificate) are CPU work of a few milliseconds per document, which on the main thread would hold
 * every other request while a billing run issues hundreds. A batch is split into one chunk per
 * thread; the files come back in the order of the documents.
 */
import { runInThread, THREADS, type RunOptions } from "../threads/pool.js";
import type { IssueJob, LocalFile } from "./index.js";

/**
 * infra/taxagency/index.ts `issueLocalFiles`, in the pool's threads: `job.documents` split into
 * one chunk per thread (at least `minChunk` documents each). Throws what issuing throws
 * (ValidationError with its fields when a document breaks a format rule), and what the pool
 * throws (ServiceUnavailableError when its queue is full, AbortError when `options.signal` aborts).
 */
export async function issueLocalFilesOffThread(
  job: IssueJob,
  minChunk = 8,
  options: RunOptions = {},
): Promise<LocalFile[]> {
  const n = job.documents.length;
  if (n === 0) return [];
  const chunks = Math.max(1, Math.min(THREADS, Math.ceil(n / minChunk)));
  const size = Math.ceil(n / chunks);
  const parts = await Promise.all(
    Array.from({ length: chunks }, (_, i) =>
      runInThread("issueLocalFiles", { ...job, documents: job.documents.slice(i * size, (i + 1) * size) }, options),
    ),
  );
  return parts
    .flat()
    .map((f) => ({ ...f, content: Buffer.from(f.content.buffer, f.content.byteOffset, f.content.byteLength) }));
}
