/**
 * Files the service produces for an organization (DTE XML, SII envelopes and responses): stored as
 * StoredFile rows and served at `/v1/files/<name>` to their organization and mode only
 * (docs/sii-setup.md "Files"). Bytes go through Prisma (pglite-prisma-adapter 0.7 and
 * @prisma/adapter-pg turn them into bytea).
 */
import type { Tx } from "./context.js";

export interface NewFile {
  name: string;
  organizationId: string;
  testMode: boolean;
  contentType: string;
  content: Buffer;
}

/** Writes a StoredFile inside `tx` (Prisma Bytes). */
export async function storeFile(tx: Pick<Tx, "storedFile">, file: NewFile): Promise<void> {
  await tx.storedFile.create({ data: { ...file, content: new Uint8Array(file.content) } });
}

/**
 * The absolute URL of stored file `name`: `<baseUrl>/v1/files/<name>` (null stays null). Rows keep
 * the file name and the URL is built when read, with the request's base URL, so a document issued
 * without a request (the billing run) gets the same URL as one finalized over the API.
 */
export function fileUrl(baseUrl: string, name: string): string;
export function fileUrl(baseUrl: string, name: string | null): string | null;
export function fileUrl(baseUrl: string, name: string | null): string | null {
  return name === null ? null : `${baseUrl}/v1/files/${encodeURIComponent(fileNameOfUrl(name))}`;
}

/** The stored file name a `fileUrl` (or a bare name) points at: its last path segment. */
export function fileNameOfUrl(url: string): string {
  return decodeURIComponent(url.split("/").filter(Boolean).pop() ?? "");
}
