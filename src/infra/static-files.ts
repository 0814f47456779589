/**
 * Files the service serves from memory (GraphiQL's and Redoc's code, their pages): compressed
 * once, validated by ETag, cached by the browser (docs/operations.md "Pages and their files").
 *
 * - **Compression**: brotli or gzip as the request's `Accept-Encoding` allows (negotiator: q-values,
 *   `*`, `identity;q=0`), brotli first when both are taken equally; each file is compressed at most
 *   once per encoding, at its first request in that encoding, off the event loop (zlib's thread
 *   pool), and the bytes kept: never again per request. Files under COMPRESS_MIN_BYTES go as they
 *   are. `Vary: Accept-Encoding` on every answer of a file that may be compressed.
 * - **Validation**: each file's ETag is the hash of its content, with the encoding as a suffix
 *   when it is sent compressed (`"<hash>-br"`): a strong validator names one representation (RFC
 *   9110), and the brotli and gzip bytes are two. A request whose `If-None-Match` matches gets 304
 *   with no body (the `fresh` package: lists, `W/`, `*`, and `Cache-Control: no-cache` of the
 *   request).
 * - **Caching**: the caller says `Cache-Control`: `IMMUTABLE` for a file whose name carries its
 *   hash (the name changes when the content does), `REVALIDATE` for a page at a fixed address.
 */
import { createHash } from "node:crypto";
import { promisify } from "node:util";
import zlib from "node:zlib";
import Negotiator from "negotiator";
import fresh from "fresh";

/** A file whose name carries its hash: kept a year, never revalidated. */
export const IMMUTABLE = "public, max-age=31536000, immutable";
/** A page at a fixed address: stored, but asked again (If-None-Match) at each use. */
export const REVALIDATE = "no-cache";

/** Bodies smaller than this go uncompressed (the encoding would cost more than it saves). */
export const COMPRESS_MIN_BYTES = 1024;

/** The encodings the service compresses to, in the order taken when the client takes both equally. */
export const ENCODINGS = ["br", "gzip"] as const;
export type Encoding = (typeof ENCODINGS)[number];

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/**
 * Brotli quality 6 with a 16 MiB window: GraphiQL's 5 MB script compresses in about 0.35 s (quality
 * 9: 1 s, 3 % smaller; 11: 16 s), which its first request waits for once per process.
 */
const COMPRESS: Record<Encoding, (body: Buffer) => Promise<Buffer>> = {
  br: (body) =>
    brotli(body, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 6,
        [zlib.constants.BROTLI_PARAM_LGWIN]: 24,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }),
  gzip: (body) => gzip(body, { level: 9 }),
};

/** A file served from memory. */
export interface StaticFile {
  /** the content as it is */
  readonly body: Buffer;
  readonly contentType: string;
  /** 16 hex digits of the content's SHA-256: in the file's name when it is IMMUTABLE */
  readonly hash: string;
  /** the content in `encoding`, compressed at the first call and kept */
  encoded(encoding: Encoding): Promise<Buffer>;
}

/** Hex SHA-256 of `content`, first 16 digits (64 bits: a name no other version of a file will have). */
export function contentHash(content: Buffer | string): string {
  return createHash("sha256").update(content).digest("hex").slice(0, 16);
}

/** A file of `content` (UTF-8 when a string) served as `contentType`. */
export function staticFile(content: Buffer | string, contentType: string): StaticFile {
  const body = typeof content === "string" ? Buffer.from(content, "utf8") : content;
  const encoded = new Map<Encoding, Promise<Buffer>>();
  return {
    body,
    contentType,
    hash: contentHash(body),
    encoded(encoding) {
      let found = encoded.get(encoding);
      if (!found) {
        found = COMPRESS[encoding](body);
        // a failure is not kept: the next request tries again
        found.catch(() => encoded.delete(encoding));
        encoded.set(encoding, found);
      }
      return found;
    },
  };
}

/**
 * The encoding to send `file` in for `request`: the best its Accept-Encoding takes of brotli and
 * gzip (brotli on a tie), or null for the content as it is (small files, clients that take neither,
 * or that prefer `identity`).
 */
export function chooseEncoding(request: Request, file: StaticFile): Encoding | null {
  if (file.body.length < COMPRESS_MIN_BYTES) return null;
  const accept = request.headers.get("accept-encoding");
  if (!accept) return null;
  // negotiator 1.x's `preferred` breaks ties in q by our order (its types are of 0.6, without the option)
  const negotiator = new Negotiator({ headers: { "accept-encoding": accept } }) as unknown as {
    encoding(available: readonly string[], options: { preferred: readonly string[] }): string | undefined;
  };
  const chosen = negotiator.encoding([...ENCODINGS, "identity"], { preferred: ENCODINGS });
  return chosen === "br" || chosen === "gzip" ? chosen : null;
}

export interface ServeOptions {
  /** Cache-Control of the answer: IMMUTABLE or REVALIDATE */
  cacheControl: string;
  /** more headers of the answer (a page's Content-Security-Policy, `Vary: Accept`) */
  headers?: Record<string, string>;
}

/**
 * The answer to a GET of `file` (HEAD is answered as GET by http-server.ts, without the body): 200
 * with the content in the chosen encoding, or 304 when `If-None-Match` names this representation.
 * Both carry ETag, Cache-Control and Vary (RFC 9110: a 304 has the headers a 200 would).
 */
export async function serveFile(request: Request, file: StaticFile, options: ServeOptions): Promise<Response> {
  const encoding = chooseEncoding(request, file);
  const headers = new Headers(options.headers);
  headers.set("content-type", file.contentType);
  headers.set("cache-control", options.cacheControl);
  headers.set("etag", `"${file.hash}${encoding ? `-${encoding}` : ""}"`);
  if (file.body.length >= COMPRESS_MIN_BYTES) headers.append("vary", "Accept-Encoding");
  const ifNoneMatch = request.headers.get("if-none-match");
  const cacheControl = request.headers.get("cache-control");
  if (
    ifNoneMatch &&
    fresh(
      { "if-none-match": ifNoneMatch, ...(cacheControl ? { "cache-control": cacheControl } : {}) },
      { etag: headers.get("etag")! },
    )
  )
    return new Response(null, { status: 304, headers });
  if (!encoding) return new Response(view(file.body), { headers });
  headers.set("content-encoding", encoding);
  return new Response(view(await file.encoded(encoding)), { headers });
}

/** The bytes of `buffer` as a Uint8Array over the same memory (no copy). */
const view = (buffer: Buffer) => new Uint8Array(buffer.buffer as ArrayBuffer, buffer.byteOffset, buffer.byteLength);
