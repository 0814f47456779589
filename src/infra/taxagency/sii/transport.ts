/**
 * HTTP transport to SII's DTE services (docs/sii-sending.md):
 *
 *   1. seed:   POST {base}/DTEWS/CrSeed.jws           SOAP getSeed                → SEMILLA, ESTADO 00
 *   2. token:  POST {base}/DTEWS/GetTokenFromSeed.jws SOAP getToken(pszXml)       → TOKEN, ESTADO 00
 *              pszXml = <getToken><item><Semilla>…</Semilla></item><Signature/></getToken>, enveloped
 *              XMLDSig (Reference URI="", enveloped-signature + C14N) with the certificate
 *   3. upload: POST {base}/cgi_dte/UPL/DTEUpload, multipart rutSender, dvSender, rutCompany,
 *              dvCompany, archivo; `Cookie: TOKEN=…`                             → RECEPCIONDTE STATUS, TRACKID
 *   4. status: POST {base}/DTEWS/QueryEstUp.jws       SOAP getEstUp(RutCompania, DvCompania, TrackId, Token)
 *              → RESP_HDR/ESTADO, GLOSA and, once processed (EPR), RESP_BODY counts per TIPO_DOCTO
 *   5. one DTE: POST {base}/DTEWS/QueryEstDte.jws     SOAP getEstDte(RutConsultante, DvConsultante,
 *              RutCompania, DvCompania, RutReceptor, DvReceptor, TipoDte, FolioDte,
 *              FechaEmisionDte DDMMAAAA, MontoDte, Token) → RESP_HDR/ESTADO (DOK, FAU, …), GLOSA_ESTADO
 *
 * `base` is `https://maullin.sii.cl` (certification, test mode) or `https://palena.sii.cl`
 * (production, live mode), from configuration (infra/config.ts `sii`). SOAP answers carry SII's
 * XML escaped inside `<…Return>`; both layers are parsed with @xmldom/xmldom.
 *
 * Errors are `SiiTransportError`: `network` (no connection, timeout, HTTP 5xx, unreadable answer),
 * `auth` (seed/token refused, token expired), or `sii` (SII answered with an error code).
 * Boletas (39/41) go to SII's separate REST API: boleta-transport.ts, which shares the helpers
 * exported here (request, answer parsing, seed signing).
 */
import { DOMParser } from "@xmldom/xmldom";
import { SignedXml } from "xml-crypto";
import { siiRut } from "../../../domain/dte-rules.js";
import { keyInfoContent, type SigningCredentials } from "./signature.js";

const C14N = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315";
const ENVELOPED = "http://www.w3.org/2000/09/xmldsig#enveloped-signature";
const RSA_SHA1 = "http://www.w3.org/2000/09/xmldsig#rsa-sha1";
const SHA1 = "http://www.w3.org/2000/09/xmldsig#sha1";
/** SII's upload page historically requires a browser-like User-Agent (LibreDTE, Odoo send this one). */
export const USER_AGENT = "Mozilla/4.0 (compatible; PROG 1.0; Windows NT 5.0; YComp 5.0.2.4)";

export type SiiErrorKind = "network" | "auth" | "sii";

export class SiiTransportError extends Error {
  constructor(
    message: string,
    readonly kind: SiiErrorKind,
    /** SII's code when it gave one (ESTADO, STATUS) */
    readonly code?: string,
  ) {
    super(message);
    this.name = "SiiTransportError";
  }
}

export interface SiiTransportOptions {
  /** `https://maullin.sii.cl` or `https://palena.sii.cl` (no trailing slash needed) */
  baseUrl: string;
  /** per request, default 30 s */
  timeoutMs?: number;
}

export interface Dom {
  getElementsByTagName(name: string): {
    length: number;
    item(i: number): { localName?: string; textContent: string | null } | null;
  };
}

/** Parses an answer of SII; `network` error when it is not XML. */
export function parse(xml: string, what: string): Dom {
  let failed = false;
  const doc = new DOMParser({
    errorHandler: { warning: () => undefined, error: () => (failed = true), fatalError: () => (failed = true) },
  }).parseFromString(xml, "text/xml") as unknown as Dom;
  if (failed || !doc) throw new SiiTransportError(`unreadable answer from SII (${what})`, "network");
  return doc;
}

/** Texts of every element named `localName` (any prefix). */
export function texts(doc: Dom, localName: string): string[] {
  const all = doc.getElementsByTagName("*");
  const out: string[] = [];
  for (let i = 0; i < all.length; i++) {
    const el = all.item(i)!;
    if (el.localName === localName) out.push((el.textContent ?? "").trim());
  }
  return out;
}

/** Text of the first element named `localName` (any prefix). */
export function text(doc: Dom, localName: string): string | undefined {
  return texts(doc, localName)[0];
}

function soapEnvelope(body: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>${body}</soapenv:Body></soapenv:Envelope>`;
}

export function escapeXml(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** `76042235-5` → `{ number: "76042235", dv: "5" }` (SII's forms and paths take them apart). */
export function splitRut(rut: string): { number: string; dv: string } {
  const normal = siiRut(rut, "rut");
  const [number, dv] = normal.split("-");
  return { number, dv };
}

/**
 * The seed signed for GetTokenFromSeed: `<getToken><item><Semilla>seed</Semilla></item>` with an
 * enveloped XMLDSig (Reference URI="", transforms enveloped-signature and C14N, rsa-sha1, sha1,
 * KeyValue + X509Certificate).
 */
export function signSeed(seed: string, credentials: SigningCredentials): string {
  const xml = `<getToken><item><Semilla>${escapeXml(seed)}</Semilla></item></getToken>`;
  const sig = new SignedXml({
    privateKey: credentials.privateKeyPem,
    publicCert: credentials.certificatePem,
    signatureAlgorithm: RSA_SHA1,
    canonicalizationAlgorithm: C14N,
    getKeyInfoContent: () => keyInfoContent(credentials.certificatePem),
  });
  sig.addReference({ xpath: "/*", transforms: [ENVELOPED, C14N], digestAlgorithm: SHA1, uri: "", isEmptyUri: true });
  sig.computeSignature(xml, { location: { reference: "/*", action: "append" } });
  return sig.getSignedXml();
}

/** The `SEMILLA` of SII's seed answer (DTE or boleta API). Throws `auth` when ESTADO is not 00. */
export function seedOf(doc: Dom): string {
  const estado = text(doc, "ESTADO");
  const seed = text(doc, "SEMILLA");
  if (estado !== "00" || !seed)
    throw new SiiTransportError(`SII refused a seed (ESTADO ${estado ?? "missing"})`, "auth", estado);
  return seed;
}

/** The `TOKEN` of SII's token answer (DTE or boleta API). Throws `auth`, with SII's GLOSA, when ESTADO is not 00. */
export function tokenOf(doc: Dom): string {
  const estado = text(doc, "ESTADO");
  const token = text(doc, "TOKEN");
  if (estado !== "00" || !token) {
    throw new SiiTransportError(
      `SII refused a token (ESTADO ${estado ?? "missing"}${text(doc, "GLOSA") ? `: ${text(doc, "GLOSA")}` : ""})`,
      "auth",
      estado,
    );
  }
  return token;
}

/** The state of an uploaded envelope (QueryEstUp). */
export interface UploadStatus {
  trackId: string;
  /** RESP_HDR/ESTADO: REC, SOK, …, EPR, RCH, …, or an error code */
  estado: string;
  glosa?: string;
  /** RESP_BODY per TIPO_DOCTO, once processed */
  counts: { type: number; reported: number; accepted: number; rejected: number; objections: number }[];
}

/** SII's record of one DTE (QueryEstDte). */
export interface DteRecordStatus {
  /**
   * DOK received and matching, DNK received but not matching, FAU not received, FNA not authorised, … or an error code
   */
  estado: string;
  glosa?: string;
}

export interface UploadReceipt {
  trackId: string;
  /** RECEPCIONDTE/STATUS ("0" received) */
  status: string;
  /** RECEPCIONDTE/TIMESTAMP as SII wrote it */
  timestamp?: string;
}

/**
 * One HTTP request to SII with the browser-like User-Agent and a timeout. Throws `network` when
 * SII cannot be reached or answers HTTP 5xx/4xx, except the statuses listed in `accept` (returned
 * for the caller to read, e.g. 401 for an expired boleta token).
 */
export async function siiRequest(
  url: string,
  init: { method: "GET" | "POST"; body?: string | FormData | Uint8Array; headers?: Record<string, string> },
  what: string,
  timeoutMs: number,
  accept: number[] = [],
): Promise<{ status: number; body: string }> {
  let response: Response;
  const origin = new URL(url).origin;
  try {
    response = await fetch(url, {
      method: init.method,
      body: init.body as BodyInit | undefined,
      headers: { "User-Agent": USER_AGENT, ...init.headers },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new SiiTransportError(
      `cannot reach SII at ${origin} (${what}): ${cause?.code ?? cause?.message ?? (e as Error).message}`,
      "network",
    );
  }
  const body = await response.text().catch(() => "");
  if (!response.ok && !accept.includes(response.status))
    throw new SiiTransportError(`SII answered HTTP ${response.status} (${what})`, "network", String(response.status));
  return { status: response.status, body };
}

/**
 * A client of one SII host. Keeps the token of the last authentication per certificate
 * and asks for a new one when SII says it is no longer valid.
 */
export class SiiTransport {
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  /** token per certificate (PEM) */
  private tokens = new Map<string, string>();

  constructor(options: SiiTransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  private post(
    path: string,
    init: { body: string | FormData; headers?: Record<string, string> },
    what: string,
  ): Promise<string> {
    return siiRequest(`${this.baseUrl}${path}`, { method: "POST", ...init }, what, this.timeoutMs).then((r) => r.body);
  }

  private async soap(service: string, body: string, what: string): Promise<Dom> {
    const answer = await this.post(
      `/DTEWS/${service}.jws`,
      { body: soapEnvelope(body), headers: { "Content-Type": "text/xml; charset=utf-8", SOAPAction: "" } },
      what,
    );
    const outer = parse(answer, what);
    const all = outer.getElementsByTagName("*");
    for (let i = 0; i < all.length; i++) {
      const el = all.item(i)!;
      if (el.localName?.endsWith("Return")) return parse(el.textContent ?? "", what);
    }
    const fault = text(outer, "faultstring");
    throw new SiiTransportError(`SII ${what}: ${fault ?? "no answer in the SOAP response"}`, fault ? "sii" : "network");
  }

  /** CrSeed.getSeed: a fresh seed. Throws `auth` when ESTADO is not 00. */
  async getSeed(): Promise<string> {
    return seedOf(await this.soap("CrSeed", "<getSeed/>", "seed"));
  }

  /** GetTokenFromSeed.getToken with the seed signed by `credentials`. Throws `auth` when refused. */
  async getToken(credentials: SigningCredentials): Promise<string> {
    const signed = signSeed(await this.getSeed(), credentials);
    const token = tokenOf(
      await this.soap("GetTokenFromSeed", `<getToken><pszXml><![CDATA[${signed}]]></pszXml></getToken>`, "token"),
    );
    this.tokens.set(credentials.certificatePem, token);
    return token;
  }

  /** The cached token of `credentials`, or a new one. */
  async token(credentials: SigningCredentials): Promise<string> {
    return this.tokens.get(credentials.certificatePem) ?? this.getToken(credentials);
  }

  /** Forgets the cached token (SII said it is invalid). */
  dropToken(credentials: SigningCredentials): void {
    this.tokens.delete(credentials.certificatePem);
  }

  /**
   * DTEUpload of an envelope file. `rutSender` is the certificate holder's RUT, `rutCompany` the
   * issuer's. Returns SII's STATUS and TRACKID (STATUS other than 0 is returned, not thrown: the
   * caller decides with domain/sii-sending.ts uploadOutcome). Throws `network`, or `auth` when SII
   * answers that the token is not valid (STATUS 5): then a new token is fetched once and retried.
   */
  async upload(
    credentials: SigningCredentials,
    input: { rutSender: string; rutCompany: string; file: Buffer; fileName: string },
  ): Promise<UploadReceipt> {
    const sender = splitRut(input.rutSender);
    const company = splitRut(input.rutCompany);
    const attempt = async (token: string) => {
      const form = new FormData();
      form.append("rutSender", sender.number);
      form.append("dvSender", sender.dv);
      form.append("rutCompany", company.number);
      form.append("dvCompany", company.dv);
      form.append("archivo", new Blob([new Uint8Array(input.file)], { type: "text/xml" }), input.fileName);
      const answer = await this.post(
        "/cgi_dte/UPL/DTEUpload",
        { body: form, headers: { Cookie: `TOKEN=${token}` } },
        "upload",
      );
      const doc = parse(answer, "upload");
      const status = text(doc, "STATUS");
      if (status === undefined) throw new SiiTransportError("SII's upload answer has no STATUS", "network");
      return { status, trackId: text(doc, "TRACKID") ?? "", timestamp: text(doc, "TIMESTAMP") };
    };
    let receipt = await attempt(await this.token(credentials));
    if (receipt.status === "5") {
      this.dropToken(credentials);
      receipt = await attempt(await this.getToken(credentials));
    }
    if (receipt.status === "0" && !receipt.trackId)
      throw new SiiTransportError("SII received the envelope but gave no TRACKID", "sii", "0");
    return receipt;
  }

  /**
   * QueryEstUp.getEstUp of an upload. A token SII no longer accepts (ESTADO 001–003) is renewed
   * once. Other codes are returned (domain/sii-sending.ts envelopeOutcome says what they mean).
   */
  async status(credentials: SigningCredentials, input: { rutCompany: string; trackId: string }): Promise<UploadStatus> {
    const company = splitRut(input.rutCompany);
    const attempt = async (token: string): Promise<UploadStatus> => {
      const doc = await this.soap(
        "QueryEstUp",
        `<getEstUp><RutCompania>${company.number}</RutCompania><DvCompania>${company.dv}</DvCompania>` +
          `<TrackId>${escapeXml(input.trackId)}</TrackId><Token>${escapeXml(token)}</Token></getEstUp>`,
        "status",
      );
      const estado = text(doc, "ESTADO");
      if (!estado) throw new SiiTransportError("SII's status answer has no ESTADO", "network");
      const types = texts(doc, "TIPO_DOCTO");
      const [reported, accepted, rejected, objections] = ["INFORMADOS", "ACEPTADOS", "RECHAZADOS", "REPAROS"].map((n) =>
        texts(doc, n).map(Number),
      );
      return {
        trackId: input.trackId,
        estado,
        glosa: text(doc, "GLOSA"),
        counts: types.map((t, i) => ({
          type: Number(t),
          reported: reported[i] ?? 0,
          accepted: accepted[i] ?? 0,
          rejected: rejected[i] ?? 0,
          objections: objections[i] ?? 0,
        })),
      };
    };
    let result = await attempt(await this.token(credentials));
    if (["001", "002", "003"].includes(result.estado)) {
      this.dropToken(credentials);
      result = await attempt(await this.getToken(credentials));
    }
    return result;
  }

  /**
   * QueryEstDte.getEstDte: what SII recorded for one DTE of `rutCompany`, asked by the
   * certificate holder `rutQuerier`, identified by its type, folio, receiver, issue date
   * (`yyyy-mm-dd`) and total. A token SII no longer accepts (ESTADO 001–003) is renewed once.
   */
  async documentStatus(
    credentials: SigningCredentials,
    input: {
      rutQuerier: string;
      rutCompany: string;
      rutReceiver: string;
      type: number;
      folio: number;
      issueDate: string;
      total: string;
    },
  ): Promise<DteRecordStatus> {
    const querier = splitRut(input.rutQuerier);
    const company = splitRut(input.rutCompany);
    const receiver = splitRut(input.rutReceiver);
    const [year, month, day] = input.issueDate.split("-");
    const attempt = async (token: string): Promise<DteRecordStatus> => {
      const doc = await this.soap(
        "QueryEstDte",
        `<getEstDte><RutConsultante>${querier.number}</RutConsultante><DvConsultante>${querier.dv}</DvConsultante>` +
          `<RutCompania>${company.number}</RutCompania><DvCompania>${company.dv}</DvCompania>` +
          `<RutReceptor>${receiver.number}</RutReceptor><DvReceptor>${receiver.dv}</DvReceptor>` +
          `<TipoDte>${input.type}</TipoDte><FolioDte>${input.folio}</FolioDte><FechaEmisionDte>${day}${month}${year}` +
          `</FechaEmisionDte>` +
          `<MontoDte>${escapeXml(input.total)}</MontoDte><Token>${escapeXml(token)}</Token></getEstDte>`,
        "document status",
      );
      const estado = text(doc, "ESTADO");
      if (!estado) throw new SiiTransportError("SII's document status answer has no ESTADO", "network");
      return { estado, glosa: text(doc, "GLOSA_ESTADO") ?? text(doc, "GLOSA") };
    };
    let result = await attempt(await this.token(credentials));
    if (["001", "002", "003"].includes(result.estado)) {
      this.dropToken(credentials);
      result = await attempt(await this.getToken(credentials));
    }
    return result;
  }
}
