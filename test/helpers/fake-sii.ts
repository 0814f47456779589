/**
 * A fake SII (node:http) speaking enough of CrSeed, GetTokenFromSeed, DTEUpload and QueryEstUp,
 * and of the boleta REST API (`/recursos/v1/boleta.electronica.semilla`, `.token`, `.envio` and
 * `.envio/{rut}-{dv}-{trackid}`), for the tests (SII itself cannot run here). It:
 * - hands out seeds and, for a seed it issued whose signed getToken verifies with xmlsec1 against
 *   `trustedCertificatePem` (when given), a token;
 * - takes uploads only with a valid `Cookie: TOKEN=`, optionally validates the envelope with
 *   xmllint (`schema`: STATUS 7 when invalid), keeps them (`uploads`) and answers a TRACKID (after
 *   `beforeUploadAnswer`, which a test can hold to make an upload slow);
 * - answers QueryEstDte with `documentStatusFor(query)` (default: DOK for a DTE found in an upload
 *   of that company, FAU otherwise), and keeps each query (`documentQueries`);
 * - answers QueryEstUp with `statusFor(upload)` (default: EPR, every document accepted), and the
 *   boleta status with `boletaStatusFor(upload)` (default: EPR, nothing objected or rejected);
 * - takes boleta uploads only with a Content-Length (SII's gateway reads one chunk of a chunked
 *   body) and answers HTTP 401 to a token it does not know, as SII's boleta API does;
 * - can be taken down (`down()`: connections refused) and brought back (`up()`) on the same port,
 *   or made to answer HTTP 500 (`failWith500 = true`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DOMParser } from "@xmldom/xmldom";
import { withTempDir } from "./sii-fixtures.js";
import type { SiiHosts } from "../../src/infra/config.js";

export interface FakeUpload {
  /** which API took it: DTEUpload, or the boleta API */
  api: "dte" | "boleta";
  trackId: string;
  rutSender: string;
  dvSender: string;
  rutCompany: string;
  dvCompany: string;
  fileName: string;
  file: Buffer;
  token: string;
}

export interface FakeStatus {
  estado: string;
  glosa?: string;
  counts?: { type: number; reported: number; accepted: number; rejected: number; objections: number }[];
}

export interface FakeSiiOptions {
  /** the certificate the token signature must verify with (xmlsec1 --trusted-pem) */
  trustedCertificatePem?: string;
  /** XSD an uploaded envelope must validate against, else STATUS 7 */
  schema?: string;
  /** XSD an uploaded EnvioBOLETA must validate against, else HTTP 400 */
  boletaSchema?: string;
}

/** The fields of a QueryEstDte call. */
export type FakeDocumentQuery = Record<
  | "RutConsultante"
  | "DvConsultante"
  | "RutCompania"
  | "DvCompania"
  | "RutReceptor"
  | "DvReceptor"
  | "TipoDte"
  | "FolioDte"
  | "FechaEmisionDte"
  | "MontoDte"
  | "Token",
  string
>;

/** The boleta API's envío status (JSON, as SII writes it). */
export interface FakeBoletaStatus {
  estado: string;
  estadistica?: { tipo: number; informados: number; aceptados: number; rechazados: number; reparos: number }[];
  detalle_rep_rech?: {
    tipo: number;
    folio: number;
    estado: string;
    descripcion: string;
    error?: { descripcion: string; detalle?: string }[];
  }[];
}

function escape(xml: string): string {
  return xml.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function soapAnswer(method: string, inner: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
    `<soapenv:Body><ns1:${method}Response soapenv:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/" xmlns:ns1="http://DefaultNamespace">` +
    `<${method}Return xsi:type="xsd:string">${escape(`<?xml version="1.0" encoding="UTF-8"?>${inner}`)}</${method}` +
    `Return></ns1:${method}Response></soapenv:Body></soapenv:Envelope>`
  );
}

function respuesta(body: string, hdr: string): string {
  return `<SII:RESPUESTA xmlns:SII="http://www.sii.cl/XMLSchema"><SII:RESP_BODY>${body}</SII:RESP_BODY><SII:RESP_HDR>${hdr}</SII:RESP_HDR></SII:RESPUESTA>`;
}

function tag(xml: string, name: string): string | undefined {
  return new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1];
}

function xmlsecOk(xml: string, certificatePem: string): boolean {
  return withTempDir((dir) => {
    writeFileSync(join(dir, "t.xml"), xml);
    writeFileSync(join(dir, "c.pem"), certificatePem);
    return (
      spawnSync("xmlsec1", [
        "--verify",
        "--enabled-key-data",
        "x509",
        "--trusted-pem",
        join(dir, "c.pem"),
        join(dir, "t.xml"),
      ]).status === 0
    );
  });
}

function xmllintOk(file: Buffer, xsd: string): boolean {
  return withTempDir((dir) => {
    writeFileSync(join(dir, "e.xml"), file);
    return spawnSync("xmllint", ["--noout", "--schema", xsd, join(dir, "e.xml")]).status === 0;
  });
}

export class FakeSii {
  private server: Server;
  private port = 0;
  private seeds = new Set<string>();
  private tokens = new Set<string>();
  private counter = 0;
  readonly uploads: FakeUpload[] = [];
  /** every request: "seed", "token", "upload", "status" */
  readonly calls: string[] = [];
  /** QueryEstUp answer for an upload */
  statusFor: (upload: FakeUpload) => FakeStatus = (upload) => ({
    estado: "EPR",
    glosa: "Envio Procesado",
    counts: countsOf(upload.file, "all-accepted"),
  });
  /** QueryEstDte queries received, with their SOAP fields */
  readonly documentQueries: FakeDocumentQuery[] = [];
  /** QueryEstDte answer */
  documentStatusFor: (query: FakeDocumentQuery) => { estado: string; glosa: string } = (q) =>
    this.uploads.some(
      (u) =>
        u.api === "dte" &&
        u.rutCompany === q.RutCompania &&
        u.file.toString("latin1").includes(`<Documento ID="F${q.FolioDte}T${q.TipoDte}">`),
    )
      ? { estado: "DOK", glosa: "Documento Recibido por el SII. Datos Coinciden con los Registrados" }
      : { estado: "FAU", glosa: "Documento No Recibido por el SII" };
  /** boleta API envío status for an upload */
  boletaStatusFor: (upload: FakeUpload) => FakeBoletaStatus = () => ({ estado: "EPR", detalle_rep_rech: [] });
  failWith500 = false;
  /**
   * awaited after an upload is kept and before it is answered (a slow upload: the test holds the
   * answer until it releases it); default: answered at once
   */
  beforeUploadAnswer: (upload: FakeUpload) => Promise<void> = async () => {};

  constructor(private readonly options: FakeSiiOptions = {}) {
    this.server = this.newServer();
  }

  private newServer(): Server {
    return createServer((req, res) => {
      this.handle(req, res).catch((e) => {
        res.statusCode = 500;
        res.end(String(e));
      });
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Every SII host of the settings pointing at this fake (DTE and boleta APIs, both environments). */
  get hosts(): SiiHosts {
    const boleta = `${this.url}/recursos/v1`;
    return {
      certificationUrl: this.url,
      productionUrl: this.url,
      boletaCertificationUrl: boleta,
      boletaCertificationUploadUrl: boleta,
      boletaProductionUrl: boleta,
      boletaProductionUploadUrl: boleta,
    };
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(this.port, "127.0.0.1", resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** Stops listening: connections are refused until `up()`. */
  async down(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server = this.newServer();
  }

  /** Listens again on the same port. */
  async up(): Promise<void> {
    await this.start();
  }

  async stop(): Promise<void> {
    if (!this.server.listening) return;
    await this.down();
  }

  /** Makes SII forget every token (the next upload or status answers "token invalid"). */
  expireTokens(): void {
    this.tokens.clear();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    if (this.failWith500) {
      res.statusCode = 500;
      res.end("Internal Server Error");
      return;
    }
    const path = (req.url ?? "").split("?")[0];
    const xml = (text: string) => {
      res.setHeader("Content-Type", "text/xml");
      res.end(text);
    };
    if (path === "/DTEWS/CrSeed.jws") {
      this.calls.push("seed");
      const seed = String(100_000_000_000 + ++this.counter);
      this.seeds.add(seed);
      return xml(soapAnswer("getSeed", respuesta(`<SEMILLA>${seed}</SEMILLA>`, "<ESTADO>00</ESTADO>")));
    }
    if (path === "/DTEWS/GetTokenFromSeed.jws") {
      this.calls.push("token");
      const soap = body.toString("utf8");
      const signed = /<!\[CDATA\[([\s\S]*?)\]\]>/.exec(soap)?.[1] ?? "";
      const token = this.tokenFor(signed);
      if (!token) return xml(soapAnswer("getToken", respuesta("", "<ESTADO>-07</ESTADO><GLOSA>Error Firma</GLOSA>")));
      return xml(
        soapAnswer("getToken", respuesta(`<TOKEN>${token}</TOKEN>`, "<ESTADO>00</ESTADO><GLOSA>Token Creado</GLOSA>")),
      );
    }
    if (path === "/cgi_dte/UPL/DTEUpload") {
      this.calls.push("upload");
      const token = /TOKEN=([^;\s]+)/.exec(req.headers.cookie ?? "")?.[1] ?? "";
      const form = await new Request("http://x/", {
        method: "POST",
        headers: { "content-type": req.headers["content-type"] ?? "" },
        body,
      }).formData();
      const archivo = form.get("archivo");
      const field = (n: string) => String(form.get(n) ?? "");
      const answer = (status: string, trackId?: string) =>
        xml(
          `<?xml version="1.0"?><RECEPCIONDTE><RUTSENDER>${field("rutSender")}-${field("dvSender")}</RUTSENDER>` +
            `<RUTCOMPANY>${field("rutCompany")}-${field("dvCompany")}</RUTCOMPANY>` +
            `<FILE>${archivo instanceof File ? archivo.name : ""}</FILE><TIMESTAMP>2026-11-23 10:00:00</TIMESTAMP>` +
            `<STATUS>${status}</STATUS>${trackId ? `<TRACKID>${trackId}</TRACKID>` : ""}</RECEPCIONDTE>`,
        );
      if (!this.tokens.has(token)) return answer("5");
      if (!(archivo instanceof File)) return answer("3");
      const file = Buffer.from(await archivo.arrayBuffer());
      if (this.options.schema && !xmllintOk(file, this.options.schema)) return answer("7");
      const trackId = String(4_000_000 + ++this.counter);
      this.uploads.push({
        api: "dte",
        trackId,
        rutSender: field("rutSender"),
        dvSender: field("dvSender"),
        rutCompany: field("rutCompany"),
        dvCompany: field("dvCompany"),
        fileName: archivo.name,
        file,
        token,
      });
      await this.beforeUploadAnswer(this.uploads[this.uploads.length - 1]);
      return answer("0", trackId);
    }
    if (path === "/DTEWS/QueryEstUp.jws") {
      this.calls.push("status");
      const soap = body.toString("utf8");
      const token = tag(soap, "Token") ?? "";
      const trackId = tag(soap, "TrackId") ?? "";
      if (!this.tokens.has(token))
        return xml(soapAnswer("getEstUp", respuesta("", "<ESTADO>001</ESTADO><GLOSA>TOKEN NO EXISTE</GLOSA>")));
      const upload = this.uploads.find((u) => u.trackId === trackId && u.rutCompany === tag(soap, "RutCompania"));
      if (!upload)
        return xml(soapAnswer("getEstUp", respuesta("", "<ESTADO>-11</ESTADO><GLOSA>TRACKID NO EXISTE</GLOSA>")));
      const s = this.statusFor(upload);
      const counts = (s.counts ?? [])
        .map(
          (c) =>
            `<TIPO_DOCTO>${c.type}</TIPO_DOCTO><INFORMADOS>${c.reported}</INFORMADOS><ACEPTADOS>${c.accepted}` +
            `</ACEPTADOS><RECHAZADOS>${c.rejected}</RECHAZADOS><REPAROS>${c.objections}</REPAROS>`,
        )
        .join("");
      return xml(
        soapAnswer(
          "getEstUp",
          respuesta(
            counts,
            `<TRACKID>${trackId}</TRACKID><ESTADO>${s.estado}</ESTADO>${s.glosa ? `<GLOSA>${s.glosa}</GLOSA>` : ""}` +
              `<NUM_ATENCION>1</NUM_ATENCION>`,
          ),
        ),
      );
    }
    if (path === "/DTEWS/QueryEstDte.jws") {
      this.calls.push("document-status");
      const soap = body.toString("utf8");
      const names = [
        "RutConsultante",
        "DvConsultante",
        "RutCompania",
        "DvCompania",
        "RutReceptor",
        "DvReceptor",
        "TipoDte",
        "FolioDte",
        "FechaEmisionDte",
        "MontoDte",
        "Token",
      ] as const;
      const query = Object.fromEntries(names.map((n) => [n, tag(soap, n) ?? ""])) as FakeDocumentQuery;
      if (!this.tokens.has(query.Token))
        return xml(soapAnswer("getEstDte", respuesta("", "<ESTADO>001</ESTADO><GLOSA>TOKEN NO EXISTE</GLOSA>")));
      this.documentQueries.push(query);
      const answer = this.documentStatusFor(query);
      return xml(
        soapAnswer(
          "getEstDte",
          respuesta(
            "",
            `<ESTADO>${answer.estado}</ESTADO><GLOSA_ESTADO>${answer.glosa}</GLOSA_ESTADO><ERR_CODE>0</ERR_CODE>` +
              `<NUM_ATENCION>1</NUM_ATENCION>`,
          ),
        ),
      );
    }
    if (path.startsWith("/recursos/v1/"))
      return this.handleBoletaApi(req, res, path.slice("/recursos/v1/".length), body);
    res.statusCode = 404;
    res.end("not found");
  }

  /** Issues a token for a signed getToken whose seed this fake gave out and whose signature verifies. */
  private tokenFor(signed: string): string | undefined {
    const seed = tag(signed, "Semilla");
    const valid =
      !!seed &&
      this.seeds.delete(seed) &&
      (!this.options.trustedCertificatePem || xmlsecOk(signed, this.options.trustedCertificatePem));
    if (!valid) return undefined;
    const token = `TOK${++this.counter}`;
    this.tokens.add(token);
    return token;
  }

  private async handleBoletaApi(
    req: IncomingMessage,
    res: ServerResponse,
    resource: string,
    body: Buffer,
  ): Promise<void> {
    const send = (status: number, contentType: string, text: string) => {
      res.statusCode = status;
      res.setHeader("Content-Type", contentType);
      res.end(text);
    };
    const json = (status: number, value: unknown) => send(status, "application/json", JSON.stringify(value));
    const token = /TOKEN=([^;\s]+)/.exec(req.headers.cookie ?? "")?.[1] ?? "";
    if (req.method === "GET" && resource === "boleta.electronica.semilla") {
      this.calls.push("boleta-seed");
      const seed = String(200_000_000_000 + ++this.counter);
      this.seeds.add(seed);
      return send(
        200,
        "application/xml",
        `<?xml version="1.0" encoding="UTF-8"?>${respuesta(`<SEMILLA>${seed}</SEMILLA>`, "<ESTADO>00</ESTADO>")}`,
      );
    }
    if (req.method === "POST" && resource === "boleta.electronica.token") {
      this.calls.push("boleta-token");
      const issued = this.tokenFor(body.toString("utf8"));
      if (!issued) return send(200, "application/xml", respuesta("", "<ESTADO>-07</ESTADO><GLOSA>Error Firma</GLOSA>"));
      return send(
        200,
        "application/xml",
        respuesta(`<TOKEN>${issued}</TOKEN>`, "<ESTADO>00</ESTADO><GLOSA>Token Creado</GLOSA>"),
      );
    }
    if (req.method === "POST" && resource === "boleta.electronica.envio") {
      this.calls.push("boleta-upload");
      if (!this.tokens.has(token)) return json(401, { message: "NO ESTA AUTENTICADO" });
      if (req.headers["transfer-encoding"] || !req.headers["content-length"])
        return json(400, { message: "chunked body: only the first chunk is read" });
      const form = await new Request("http://x/", {
        method: "POST",
        headers: { "content-type": req.headers["content-type"] ?? "" },
        body: new Uint8Array(body),
      }).formData();
      const archivo = form.get("archivo");
      const field = (n: string) => String(form.get(n) ?? "");
      if (!(archivo instanceof File)) return json(400, { message: "archivo is required" });
      const file = Buffer.from(await archivo.arrayBuffer());
      if (this.options.boletaSchema && !xmllintOk(file, this.options.boletaSchema))
        return json(400, { message: "EnvioBOLETA does not validate" });
      const trackId = String(7_000_000 + ++this.counter);
      this.uploads.push({
        api: "boleta",
        trackId,
        rutSender: field("rutSender"),
        dvSender: field("dvSender"),
        rutCompany: field("rutCompany"),
        dvCompany: field("dvCompany"),
        fileName: archivo.name,
        file,
        token,
      });
      await this.beforeUploadAnswer(this.uploads[this.uploads.length - 1]);
      return json(200, {
        rut_emisor: `${field("rutCompany")}-${field("dvCompany")}`,
        rut_envia: `${field("rutSender")}-${field("dvSender")}`,
        trackid: Number(trackId),
        fecha_recepcion: "2026-11-23 10:00:00",
        estado: "REC",
        file: archivo.name,
      });
    }
    const status = /^boleta\.electronica\.envio\/(\d+)-([\dkK])-(\d+)$/.exec(resource);
    if (req.method === "GET" && status) {
      this.calls.push("boleta-status");
      if (!this.tokens.has(token)) return json(401, { message: "NO ESTA AUTENTICADO" });
      const upload = this.uploads.find(
        (u) => u.api === "boleta" && u.trackId === status[3] && u.rutCompany === status[1],
      );
      if (!upload) return json(404, { message: "trackid no existe" });
      const answer = this.boletaStatusFor(upload);
      return json(200, {
        rut_emisor: `${upload.rutCompany}-${upload.dvCompany}`,
        rut_envia: `${upload.rutSender}-${upload.dvSender}`,
        trackid: Number(upload.trackId),
        fecha_recepcion: "2026-11-23 10:00:00",
        ...answer,
      });
    }
    json(404, { message: "not found" });
  }
}

/** SubTotDTE of an uploaded envelope as SII's counts: all accepted, all rejected, or all with objections. */
export function countsOf(
  file: Buffer,
  outcome: "all-accepted" | "all-rejected" | "all-objections",
): NonNullable<FakeStatus["counts"]> {
  const doc = new DOMParser().parseFromString(file.toString("latin1"), "text/xml");
  const subs = doc.getElementsByTagName("SubTotDTE");
  const out: NonNullable<FakeStatus["counts"]> = [];
  for (let i = 0; i < subs.length; i++) {
    const s = subs.item(i)!;
    const type = Number(s.getElementsByTagName("TpoDTE").item(0)?.textContent);
    const n = Number(s.getElementsByTagName("NroDTE").item(0)?.textContent);
    out.push({
      type,
      reported: n,
      accepted: outcome === "all-accepted" ? n : 0,
      rejected: outcome === "all-rejected" ? n : 0,
      objections: outcome === "all-objections" ? n : 0,
    });
  }
  return out;
}

export async function startFakeSii(options: FakeSiiOptions = {}): Promise<FakeSii> {
  return new FakeSii(options).start();
}
