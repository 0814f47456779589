/**
 * signature.ts dteSigner signs a DTE as dte.ts builds it without parsing it (the canonical
 * Documento read off the text, a SignedInfo template): its output must be byte for byte what
 * xml-crypto (signEnveloped) makes of the same DTE, for texts with every character C14N treats
 * specially, and fall back to xml-crypto for a text it cannot read that way (a carriage return).
 */
import { beforeAll, describe, expect, it, vi } from "vitest";
import { SignedXml } from "xml-crypto";
import {
  buildDte,
  dteSigner,
  encodeIso88591,
  parseCaf,
  signEnveloped,
  type Caf,
  type DteInput,
} from "../../src/infra/taxagency/sii/index.js";
import {
  generateCaf,
  generateCertificate,
  xmllintValidate,
  xmlsecVerify,
  type FakeCertificate,
} from "../helpers/sii-fixtures.js";

const RUT = "76042235-5";
let cert: FakeCertificate;
const cafs = new Map<number, Caf>();
const cafFor = (type: number) => {
  if (!cafs.has(type))
    cafs.set(type, parseCaf(generateCaf({ rut: RUT, type, from: 1, to: 100, authorizedOn: "2026-11-01" }).file));
  return cafs.get(type)!;
};

beforeAll(() => {
  cert = generateCertificate();
});

const emitter = {
  rut: RUT,
  businessName: 'Ñandú & Hijos "Ltda" <SpA>',
  activity: "Servicios 'informáticos'",
  activityCodes: ["620200"],
  address: "Av. Matta 100 > 99",
  commune: "Santiago",
  city: "Santiago",
};

const inputs: [string, DteInput][] = [
  [
    "33 with &, <, >, quotes, Ñ, a newline and a tab",
    {
      type: 33,
      folio: 1,
      issueDate: "2026-11-20",
      emitter,
      receiver: { rut: RUT, name: "Cliente & Cía <A> \"B\" 'C'" },
      lines: [
        {
          name: "Plan > Pro",
          description: "línea 1\nlínea 2\tfin",
          quantity: "2.5",
          unitPrice: "1000",
          discount: "10",
          discountScheme: "%",
        },
        { name: "Crédito", quantity: "1", unitPrice: "-500" },
      ],
      discount: { value: "5", scheme: "%" },
      timestamp: "2026-11-20T09:33:20",
    },
  ],
  [
    "34 exempt",
    {
      type: 34,
      folio: 2,
      issueDate: "2026-11-20",
      emitter,
      receiver: { rut: RUT, name: "Exento" },
      lines: [{ name: "Curso", quantity: "1", unitPrice: "50000" }],
      timestamp: "2026-11-20T09:33:20",
    },
  ],
  [
    "39 boleta to the final consumer",
    {
      type: 39,
      folio: 3,
      issueDate: "2026-11-20",
      emitter,
      receiver: { rut: "66666666-6", name: "Consumidor final" },
      lines: [{ name: "Café", quantity: "3", unitPrice: "1190" }],
      timestamp: new Date("2026-11-20T12:00:00Z"),
    },
  ],
  [
    "52 guía with transport",
    {
      type: 52,
      folio: 4,
      issueDate: "2026-11-20",
      emitter,
      receiver: { rut: RUT, name: "Bodega" },
      lines: [{ name: "Router", quantity: "3", unitPrice: "20000" }],
      shippingType: "1",
      transport: { plate: "ABCD12", address: "Av. Matta 100" },
      timestamp: "2026-11-20T09:33:20",
    },
  ],
  [
    "61 credit note with a reference",
    {
      type: 61,
      folio: 5,
      issueDate: "2026-11-20",
      emitter,
      receiver: { rut: RUT, name: "Nota" },
      lines: [{ name: "Anula", quantity: "1", unitPrice: "1000" }],
      references: [{ type: 33, folio: 1, date: "2026-11-20", code: 1, reason: "Anula & corrige <todo>" }],
      timestamp: "2026-11-20T09:33:20",
    },
  ],
  [
    "33 with a carriage return (signed by xml-crypto)",
    {
      type: 33,
      folio: 6,
      issueDate: "2026-11-20",
      emitter,
      receiver: { rut: RUT, name: "CR" },
      lines: [{ name: "Línea", description: "uno\r\ndos", quantity: "1", unitPrice: "1000" }],
      timestamp: "2026-11-20T09:33:20",
    },
  ],
];

describe("dteSigner", () => {
  it.each(inputs)("%s: the same bytes as xml-crypto, XSD-valid, signature verified", (_, input) => {
    const built = buildDte(input, cafFor(input.type));
    // xml-crypto runs only for the text the template cannot take (the carriage return)
    const xmlCrypto = vi.spyOn(SignedXml.prototype, "computeSignature");
    const fast = dteSigner(cert)(built.xml);
    expect(xmlCrypto).toHaveBeenCalledTimes(built.xml.includes("\r") ? 1 : 0);
    xmlCrypto.mockRestore();
    expect(fast).toBe(signEnveloped(built.xml, "Documento", cert));
    const file = encodeIso88591(fast);
    const signature = xmlsecVerify(file, cert.certificatePem);
    expect(signature.ok, signature.output).toBe(true);
    if (input.type !== 39) {
      const schema = xmllintValidate(file);
      expect(schema.ok, schema.output).toBe(true);
    }
  });

  it("refuses a key that is not the certificate's, once, before signing anything", () => {
    const other = generateCertificate("Otro");
    expect(() => dteSigner({ certificatePem: cert.certificatePem, privateKeyPem: other.privateKeyPem })).toThrow(
      "the private key does not match the certificate",
    );
  });
});
