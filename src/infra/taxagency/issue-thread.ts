/**
 * The tax-document thread (infra/taxagency/issue-pool.ts starts it): builds and signs local files
 * (SII: the DTE XML, its TED signed with the CAF's key and the XMLDSig with the certificate) off
 * the main event loop. Messages in: `{ id, job: IssueJob }`; out: `{ id, result: IssuedFile[] }`
 * (in the order of `job.documents`) or `{ id, error }`.
 */
import { parentPort } from "node:worker_threads";
import { threadError } from "../worker-pool.js";
import { issueLocalFiles, type IssueJob } from "./index.js";

parentPort!.on("message", (message: { id: number; job: IssueJob }) => {
  try {
    const files = issueLocalFiles(message.job);
    const result = files.map((f) => ({
      ...f,
      content: new Uint8Array(f.content.buffer, f.content.byteOffset, f.content.byteLength).slice(),
    }));
    parentPort!.postMessage(
      { id: message.id, result },
      result.map((f) => f.content.buffer as ArrayBuffer),
    );
  } catch (e) {
    parentPort!.postMessage({ id: message.id, error: threadError(e) });
  }
});
