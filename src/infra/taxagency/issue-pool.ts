/**
 * Local files of tax documents built and signed in worker threads (infra/worker-pool.ts; the
 * thread is infra/taxagency/issue-thread.ts): the RSA signatures (SII: the TED with the CAF's key,
 * the XMLDSig with the certificate) are CPU work of a few milliseconds per document, which on the
 * main thread would hold every other request while a billing run issues hundreds. A batch is split
 * into one chunk per thread; the files come back in the order of the documents.
 */
import { InvalidStateError, ValidationError } from "../../domain/errors.js";
import { WorkerPool, type ThreadError } from "../worker-pool.js";
import type { IssueJob, LocalFile } from "./index.js";

function rebuild(error: ThreadError): Error {
  if (error.name === "ValidationError") return new ValidationError(error.message, error.fields ?? {});
  if (error.name === "InvalidStateError") return new InvalidStateError(error.message, error.fields);
  return new Error(error.message);
}

let pool: WorkerPool<IssueJob, LocalFile[]> | null = null;

function issuePool(): WorkerPool<IssueJob, LocalFile[]> {
  const fromSource = import.meta.url.endsWith(".ts");
  pool ??= new WorkerPool(new URL(fromSource ? "./issue-thread.ts" : "./issue-thread.js", import.meta.url), rebuild);
  return pool;
}

/**
 * infra/taxagency/index.ts `issueLocalFiles`, in the pool's threads: `job.documents` split into
 * one chunk per thread (at least `minChunk` documents each). Throws what issuing throws
 * (ValidationError with its fields when a document breaks a format rule).
 */
export async function issueLocalFilesOffThread(job: IssueJob, minChunk = 8): Promise<LocalFile[]> {
  const threads = issuePool();
  const n = job.documents.length;
  if (n === 0) return [];
  const chunks = Math.max(1, Math.min(threads.size, Math.ceil(n / minChunk)));
  const size = Math.ceil(n / chunks);
  const parts = await Promise.all(
    Array.from({ length: chunks }, (_, i) =>
      threads.run({ ...job, documents: job.documents.slice(i * size, (i + 1) * size) }),
    ),
  );
  return parts
    .flat()
    .map((f) => ({ ...f, content: Buffer.from(f.content.buffer, f.content.byteOffset, f.content.byteLength) }));
}
