/**
 * HTTP transport to SII's boleta REST API (Resolución 74/2020; docs/sii-sending.md "Boletas"):
 * boletas 39 and 41 travel in an EnvioBOLETA to other hosts than DTEs, with JSON answers.
 *
 *   1. seed:   GET  {api}/boleta.electronica.semilla                      → XML SEMILLA, ESTADO 00
 *   2. token:  POST {api}/boleta.electronica.token, body the signed
 *              `<getToken><item><Semilla>…` (transport.ts signSeed), application/xml → XML TOKEN, ESTADO 00
 *   3. upload: POST {upload}/boleta.electronica.envio, multipart rutSender, dvSender, rutCompany,
 *              dvCompany, archivo; `Cookie: TOKEN=…`                        → JSON trackid, estado (REC)
 *   4. status: GET  {api}/boleta.electronica.envio/{rut}-{dv}-{trackid}; `Cookie: TOKEN=…`
 *              → JSON estado, estadistica [{tipo, informados, aceptados, rechazados, reparos}],
 *                detalle_rep_rech [{tipo, folio, estado, descripcion, error: [{descripcion, detalle}]}]
 *
 * Hosts (infra/config.ts `sii`): certification `https://apicert.sii.cl/recursos/v1` (upload
 * `https://pangal.sii.cl/recursos/v1`), production `https://api.sii.cl/recursos/v1` (upload
 * `https://rahue.sii.cl/recursos/v1`). The multipart body is serialized to bytes before sending, so
 * it always goes with a Content-Length whatever the runtime does with a FormData body: SII's upload
 * gateway is reported to read only the first chunk of a chunked body.
 * HTTP 401/403 means the token is not (or no longer) valid: a new one is fetched once.
 *
 * Errors are transport.ts `SiiTransportError` (`network`, `auth`, `sii`), as for DTEs.
 */
import type { SigningCredentials } from "./signature.js";
import { SiiTransportError, parse, seedOf, signSeed, siiRequest, splitRut, tokenOf } from "./transport.js";

export interface BoletaTransportOptions {
  /** seed, token and status: `https://apicert.sii.cl/recursos/v1` or `https://api.sii.cl/recursos/v1` */
  apiUrl: string;
  /** upload: `https://pangal.sii.cl/recursos/v1` or `https://rahue.sii.cl/recursos/v1` */
  uploadUrl: string;
  /** per request, default 30 s */
  timeoutMs?: number;
}

export interface BoletaUploadReceipt {
  trackId: string;
  /** `estado` of the upload answer (REC: received) */
  estado: string;
  /** `fecha_recepcion` as SII wrote it */
  receivedAt?: string;
}

/** A boleta SII objected to or rejected (`detalle_rep_rech`). */
export interface BoletaDetail {
  type: number;
  folio: number;
  /** RCH rejected, RPR/RLV accepted with objections, … */
  estado: string;
  /** `descripcion` and the errors' `descripcion`/`detalle`, joined */
  message: string;
}

export interface BoletaEnvelopeStatus {
  trackId: string;
  /** REC, SOK, …, EPR, RCH, … (the codes of envelope statuses; domain/sii-sending.ts envelopeOutcome) */
  estado: string;
  counts: { type: number; reported: number; accepted: number; rejected: number; objections: number }[];
  /** only the boletas with objections or rejected; the others of a processed envelope are accepted */
  details: BoletaDetail[];
}

const TOKEN_REFUSED = [401, 403];

function json(body: string, what: string): Record<string, unknown> {
  try {
    const value = JSON.parse(body);
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new SiiTransportError(`unreadable answer from SII (${what})`, "network");
}

function number(value: unknown): number {
  const n = Number(value);
  return Number.isFinite(n) ? n : 0;
}

function list(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter((v): v is Record<string, unknown> => !!v && typeof v === "object") : [];
}

/** The multipart body SII's upload form takes, as bytes (so it is sent with a Content-Length). */
async function multipart(
  fields: Record<string, string>,
  file: Buffer,
  fileName: string,
): Promise<{ body: Uint8Array; contentType: string }> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append("archivo", new Blob([new Uint8Array(file)], { type: "application/xml" }), fileName);
  // the platform's own serializer (boundary, escaping), read into one buffer
  const encoded = new Response(form);
  return { body: new Uint8Array(await encoded.arrayBuffer()), contentType: encoded.headers.get("content-type")! };
}

/** A client of SII's boleta API in one environment; keeps the token per certificate. */
export class SiiBoletaTransport {
  private readonly apiUrl: string;
  private readonly uploadUrl: string;
  private readonly timeoutMs: number;
  private tokens = new Map<string, string>();

  constructor(options: BoletaTransportOptions) {
    this.apiUrl = options.apiUrl.replace(/\/+$/, "");
    this.uploadUrl = options.uploadUrl.replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** boleta.electronica.semilla: a fresh seed. Throws `auth` when ESTADO is not 00. */
  async getSeed(): Promise<string> {
    const answer = await siiRequest(
      `${this.apiUrl}/boleta.electronica.semilla`,
      { method: "GET", headers: { Accept: "application/xml" } },
      "boleta seed",
      this.timeoutMs,
    );
    return seedOf(parse(answer.body, "boleta seed"));
  }

  /** boleta.electronica.token with the seed signed by `credentials`. Throws `auth` when refused. */
  async getToken(credentials: SigningCredentials): Promise<string> {
    const signed = signSeed(await this.getSeed(), credentials);
    const answer = await siiRequest(
      `${this.apiUrl}/boleta.electronica.token`,
      {
        method: "POST",
        body: `<?xml version="1.0" encoding="UTF-8"?>${signed}`,
        headers: { "Content-Type": "application/xml", Accept: "application/xml" },
      },
      "boleta token",
      this.timeoutMs,
    );
    const token = tokenOf(parse(answer.body, "boleta token"));
    this.tokens.set(credentials.certificatePem, token);
    return token;
  }

  private async withToken<T>(
    credentials: SigningCredentials,
    what: string,
    call: (token: string) => Promise<{ status: number; value?: T }>,
  ): Promise<T> {
    const cached = this.tokens.get(credentials.certificatePem);
    let result = await call(cached ?? (await this.getToken(credentials)));
    if (TOKEN_REFUSED.includes(result.status)) {
      this.tokens.delete(credentials.certificatePem);
      result = await call(await this.getToken(credentials));
      if (TOKEN_REFUSED.includes(result.status))
        throw new SiiTransportError(
          `SII did not accept a fresh token (${what}: HTTP ${result.status})`,
          "auth",
          String(result.status),
        );
    }
    return result.value as T;
  }

  /**
   * boleta.electronica.envio of an EnvioBOLETA. `rutSender` is the certificate holder's RUT,
   * `rutCompany` the issuer's. Throws `network` (no answer, HTTP error, unreadable JSON), `auth`,
   * or `sii` when SII answers without a track id.
   */
  async upload(
    credentials: SigningCredentials,
    input: { rutSender: string; rutCompany: string; file: Buffer; fileName: string },
  ): Promise<BoletaUploadReceipt> {
    const sender = splitRut(input.rutSender);
    const company = splitRut(input.rutCompany);
    const form = await multipart(
      { rutSender: sender.number, dvSender: sender.dv, rutCompany: company.number, dvCompany: company.dv },
      input.file,
      input.fileName,
    );
    return this.withToken(credentials, "boleta upload", async (token) => {
      const answer = await siiRequest(
        `${this.uploadUrl}/boleta.electronica.envio`,
        {
          method: "POST",
          body: form.body,
          headers: { "Content-Type": form.contentType, Accept: "application/json", Cookie: `TOKEN=${token}` },
        },
        "boleta upload",
        this.timeoutMs,
        TOKEN_REFUSED,
      );
      if (TOKEN_REFUSED.includes(answer.status)) return { status: answer.status };
      const body = json(answer.body, "boleta upload");
      const trackId = body.trackid ?? body.trackId;
      if (trackId === undefined || trackId === null || String(trackId) === "") {
        throw new SiiTransportError(
          `SII did not take the boletas (estado ${String(body.estado ?? "missing")})`,
          "sii",
          String(body.estado ?? ""),
        );
      }
      return {
        status: answer.status,
        value: {
          trackId: String(trackId),
          estado: String(body.estado ?? ""),
          receivedAt: body.fecha_recepcion ? String(body.fecha_recepcion) : undefined,
        },
      };
    });
  }

  /**
   * boleta.electronica.envio/{rut}-{dv}-{trackid}: the state of an upload, with the boletas SII objected to or
   * rejected.
   */
  async status(
    credentials: SigningCredentials,
    input: { rutCompany: string; trackId: string },
  ): Promise<BoletaEnvelopeStatus> {
    const company = splitRut(input.rutCompany);
    const url =
      `${this.apiUrl}/boleta.electronica.envio/${company.number}-${company.dv}` +
      `-${encodeURIComponent(input.trackId)}`;
    return this.withToken(credentials, "boleta status", async (token) => {
      const answer = await siiRequest(
        url,
        { method: "GET", headers: { Accept: "application/json", Cookie: `TOKEN=${token}` } },
        "boleta status",
        this.timeoutMs,
        TOKEN_REFUSED,
      );
      if (TOKEN_REFUSED.includes(answer.status)) return { status: answer.status };
      const body = json(answer.body, "boleta status");
      if (typeof body.estado !== "string" || !body.estado)
        throw new SiiTransportError("SII's boleta status answer has no estado", "network");
      return {
        status: answer.status,
        value: {
          trackId: input.trackId,
          estado: body.estado,
          counts: list(body.estadistica).map((c) => ({
            type: number(c.tipo),
            reported: number(c.informados),
            accepted: number(c.aceptados),
            rejected: number(c.rechazados),
            objections: number(c.reparos),
          })),
          details: list(body.detalle_rep_rech).map((d) => ({
            type: number(d.tipo),
            folio: number(d.folio),
            estado: String(d.estado ?? ""),
            message: [d.descripcion, ...list(d.error).map((e) => [e.descripcion, e.detalle].filter(Boolean).join(": "))]
              .filter(Boolean)
              .map(String)
              .join("; "),
          })),
        },
      };
    });
  }
}
