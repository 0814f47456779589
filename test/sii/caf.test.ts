/** CAF parsing and checks (src/infra/taxagency/sii/caf.ts; chile-dte.md section 4). */
import { describe, it, expect } from "vitest";
import { generateKeyPairSync } from "node:crypto";
import { assertCafCovers, parseCaf } from "../../src/infra/taxagency/sii/caf.js";
import { generateCaf } from "../helpers/sii-fixtures.js";

const RUT = "76042235-5";

describe("parseCaf", () => {
  it("reads DA, keys and the CAF element (flattened, otherwise verbatim)", () => {
    const fake = generateCaf({
      rut: RUT,
      type: 33,
      from: 1,
      to: 200,
      authorizedOn: "2026-11-01",
      businessName: "COMPAÑIA DE PRUEBA",
    });
    const caf = parseCaf(fake.file, { siiPublicKey: fake.siiPublicKey });
    expect(caf).toMatchObject({
      rut: RUT,
      businessName: "COMPAÑIA DE PRUEBA",
      type: 33,
      from: 1,
      to: 200,
      authorizedOn: "2026-11-01",
      idk: 100,
      testMode: true,
      lastUsableDate: "2027-04-30",
    });
    const text = fake.file.toString("latin1");
    const original = /<CAF [\s\S]*<\/CAF>/.exec(text)![0];
    expect(caf.cafXml).toBe(original.replace(/>\s+</g, "><"));
    expect(caf.cafXml).toMatch(/^<CAF version="1.0"><DA><RE>76042235-5<\/RE><RS>COMPAÑIA DE PRUEBA<\/RS><TD>33<\/TD>/);
    expect(caf.privateKey.type).toBe("private");
    expect(caf.publicKey.asymmetricKeyDetails?.modulusLength).toBe(512);
  });

  it("rejects a FRMA that SII's key does not verify", () => {
    const fake = generateCaf({ rut: RUT, type: 33, authorizedOn: "2026-11-01" });
    const other = generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey;
    expect(() => parseCaf(fake.file, { siiPublicKey: other })).toThrow(/FRMA does not verify/);
  });

  it("lists every missing or malformed part", () => {
    const text = generateCaf({ rut: RUT, type: 33, authorizedOn: "2026-11-01" }).file.toString("latin1");
    const broken = text
      .replace(/<FRMA[^>]*>[^<]*<\/FRMA>/, "")
      .replace(/<D>1<\/D>/, "<D>x</D>")
      .replace(/<IDK>100<\/IDK>/, "");
    let error: unknown;
    try {
      parseCaf(broken);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: "validation_error" });
    expect((error as { fields: Record<string, string[]> }).fields.caf).toEqual(
      expect.arrayContaining(["RNG/D x is not a positive integer", "IDK is missing", "FRMA is missing"]),
    );
    expect(() => parseCaf("<AUTORIZACION/>")).toThrow(/no CAF element/);
  });

  it("rejects an RSASK that does not match RSAPK", () => {
    const a = generateCaf({ rut: RUT, type: 33, authorizedOn: "2026-11-01" }).file.toString("latin1");
    const b = generateCaf({ rut: RUT, type: 33, authorizedOn: "2026-11-01" }).file.toString("latin1");
    const swapped = a.replace(/<RSASK>[\s\S]*<\/RSASK>/, /<RSASK>[\s\S]*<\/RSASK>/.exec(b)![0]);
    expect(() => parseCaf(swapped)).toThrow(/RSASK does not match RSAPK/);
  });

  it("does not print the private key", () => {
    const caf = parseCaf(generateCaf({ rut: RUT, type: 33, authorizedOn: "2026-11-01" }).file);
    expect(JSON.stringify(caf)).not.toMatch(/PRIVATE KEY/);
  });
});

describe("assertCafCovers", () => {
  const caf = parseCaf(generateCaf({ rut: RUT, type: 61, from: 10, to: 20, authorizedOn: "2026-01-15" }).file);
  const doc = { rut: RUT, type: 61, folio: 10, issueDate: "2026-07-14" };

  it("accepts a folio of the range, same RUT and type, before expiry", () => {
    expect(() => assertCafCovers(caf, doc)).not.toThrow();
    expect(() => assertCafCovers(caf, { ...doc, folio: 20 })).not.toThrow();
  });

  it("rejects another RUT, type, a folio outside D..H, or an expired CAF", () => {
    expect(() => assertCafCovers(caf, { ...doc, rut: "77879240-0" })).toThrow(/for RUT 76042235-5, not 77879240-0/);
    expect(() => assertCafCovers(caf, { ...doc, type: 56 })).toThrow(/for type 61, not 56/);
    expect(() => assertCafCovers(caf, { ...doc, folio: 21 })).toThrow(/folio 21 is outside the CAF range 10..20/);
    expect(() => assertCafCovers(caf, { ...doc, issueDate: "2026-07-15" })).toThrow(/expired on 2026-07-14/);
    expect(() => assertCafCovers(caf, { ...doc, issueDate: "2026-01-14" })).toThrow(/before the CAF date/);
  });
});
