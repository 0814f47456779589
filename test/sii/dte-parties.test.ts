/** Reading a DTE's Emisor and Receptor back (src/infra/taxagency/sii/dte-parties.ts), what a DTE's PDF prints. */
import { describe, expect, it } from "vitest";
import { buildDte, dteParties, parseCaf, type DteInput } from "../../src/infra/taxagency/sii/index.js";
import { generateCaf } from "../helpers/sii-fixtures.js";

const input = (type: DteInput["type"], receiver: DteInput["receiver"]): DteInput => ({
  type,
  folio: 1,
  issueDate: "2026-11-20",
  emitter: {
    rut: "76.042.235-5",
    businessName: "Compañía “Ñandú” SpA & Cía",
    activity: "Software",
    activityCodes: [620200],
    address: "Teatinos 120",
    commune: "Santiago",
    city: "Santiago",
  },
  receiver,
  lines: [{ name: "Consultoría", quantity: 1, unitPrice: 1000 }],
  timestamp: "2026-11-20T09:33:20",
});
const caf = (type: number) =>
  parseCaf(generateCaf({ rut: "76042235-5", type, from: 1, to: 5, authorizedOn: "2026-11-01" }).file);

describe("dteParties", () => {
  it("reads the parties as the DTE wrote them (normalized RUT, SII text, XML entities decoded)", () => {
    const built = buildDte(
      input(33, {
        rut: "77.777.777-7",
        name: "Empresa <Uno> Ltda",
        activity: "Computación",
        email: "a@b.cl",
        address: "San Diego 2222",
        commune: "La Florida",
      }),
      caf(33),
    );
    expect(dteParties(built.xml)).toEqual({
      issuer: {
        rut: "76042235-5",
        name: 'Compañía "Ñandú" SpA & Cía',
        activity: "Software",
        address: "Teatinos 120",
        commune: "Santiago",
        city: "Santiago",
        email: null,
      },
      receiver: {
        rut: "77777777-7",
        name: "Empresa <Uno> Ltda",
        activity: "Computación",
        address: "San Diego 2222",
        commune: "La Florida",
        city: null,
        email: "a@b.cl",
      },
    });
  });

  it("boletas name the issuer RznSocEmisor and GiroEmisor", () => {
    const built = buildDte(input(39, { rut: "66666666-6", name: "Consumidor final" }), caf(39));
    expect(dteParties(built.xml)).toMatchObject({
      issuer: { name: 'Compañía "Ñandú" SpA & Cía', activity: "Software" },
      receiver: { rut: "66666666-6", name: "Consumidor final" },
    });
  });

  it("null for what is not a DTE", () => {
    expect(dteParties("<a>not a dte</a>")).toBeNull();
    expect(dteParties("not xml at all <")).toBeNull();
  });
});
