/**
 * Files the service produces for an organization (DTE XML, SII envelopes and responses): stored as
 * StoredFile rows and served at `/v1/files/<name>` to their organization and mode only
 * (docs/sii-setup.md "Files"). Bytes go through Prisma (on PGlite, driver-adapter.ts
 * pgliteBytesFix makes the adapter accept them).
 */
import type { Tx } from "./context.js";

export interface NewFile {
  name: string;
  organizationId: string;
  testMode: boolean;
  contentType: string;
  content: Buffer;
}

/** Writes a StoredFile inside `tx` (Prisma Bytes; on PGlite through driver-adapter.ts pgliteBytesFix). */
export async function storeFile(tx: Pick<Tx, "storedFile">, file: NewFile): Promise<void> {
  await tx.storedFile.create({ data: { ...file, content: new Uint8Array(file.content) } });
}

/** The absolute URL of stored file `name`: `<baseUrl>/v1/files/<name>`. */
export function fileUrl(baseUrl: string, name: string): string {
  return `${baseUrl}/v1/files/${encodeURIComponent(name)}`;
}

/** The stored file name a `fileUrl` points at (its last path segment). */
export function fileNameOfUrl(url: string): string {
  return decodeURIComponent(url.split("/").filter(Boolean).pop() ?? "");
}
