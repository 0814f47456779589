/**
 * A supplier's EnvioDTE made with the project's own builders and test material (fake CAF and
 * self-signed certificate, sii-fixtures.ts): one signed factura (33) addressed to `receiverRut`,
 * enveloped and signed like an envelope e-mailed to a receiver (`RutReceptor` = the receiver).
 * Its signatures and timbre verify, unlike SII's published example (docs/sii-receiving.md
 * "Verification").
 */
import { buildEnvioDte } from "../../src/infra/taxagency/sii/envelope.js";
import { issueDte, parseCaf } from "../../src/infra/taxagency/sii/index.js";
import { generateCaf, generateCertificate, type FakeCertificate } from "./sii-fixtures.js";

export const SUPPLIER_RUT = "96790240-3";

export interface SupplierEnvelope {
  /** the ISO-8859-1 file */
  file: Buffer;
  /** the signed DTE alone (ISO-8859-1 file) */
  dte: Buffer;
  certificate: FakeCertificate;
}

/** A signed factura of `SUPPLIER_RUT` to `receiverRut`, folio `folio` (1 000 + 19 % = 1 190), in a signed EnvioDTE. */
export function supplierEnvelope(options: {
  receiverRut: string;
  folio: number;
  certificate?: FakeCertificate;
}): SupplierEnvelope {
  const certificate = options.certificate ?? generateCertificate("Proveedor de Prueba");
  const caf = parseCaf(generateCaf({ rut: SUPPLIER_RUT, type: 33, from: 1, to: 100, authorizedOn: "2026-11-01" }).file);
  const dte = issueDte(
    {
      type: 33,
      folio: options.folio,
      issueDate: "2026-11-20",
      emitter: {
        rut: SUPPLIER_RUT,
        businessName: "Proveedora Ñandú SpA",
        activity: "Venta de insumos",
        activityCodes: [469000],
        address: "Teatinos 120",
        commune: "Santiago",
        city: "Santiago",
      },
      receiver: {
        rut: options.receiverRut,
        name: "EMPRESA LTDA",
        activity: "COMPUTACION",
        address: "SAN DIEGO 2222",
        commune: "LA FLORIDA",
        city: "SANTIAGO",
      },
      lines: [{ name: "Resmas de papel", quantity: "2", unitPrice: "500" }],
      timestamp: "2026-11-20T09:33:20",
    },
    caf,
    certificate,
  );
  const envelope = buildEnvioDte({
    dtes: [dte.file],
    caratula: {
      rutEmisor: SUPPLIER_RUT,
      rutEnvia: "7880442-4",
      rutReceptor: options.receiverRut,
      fchResol: "2026-01-15",
      nroResol: 0,
    },
    credentials: certificate,
    timestamp: "2026-11-20T09:40:00",
  });
  return { file: envelope.file, dte: dte.file, certificate };
}
