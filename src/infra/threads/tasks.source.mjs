/**
 * The worker pool's thread module when the service runs from its TypeScript sources (tsx, vitest):
 * a worker thread does not inherit the main thread's TypeScript loader, so this plain module
 * registers tsx's loader (a devDependency, there whenever sources run) and then loads tasks.ts.
 * The build (dist/) loads tasks.js directly (infra/threads/pool.ts chooses).
 */
import { register } from "tsx/esm/api";

register();
const { tasks } = await import(new URL("./tasks.ts", import.meta.url).href);

export const { renderDocumentPdf, renderSwapPdf, issueLocalFiles } = tasks;
