/**
 * Verification of received DTEs (src/infra/taxagency/sii/received-verification.ts;
 * docs/sii-receiving.md "Verification"): the issuer's XMLDSig signature and the TED.
 *
 * SII's published example (test/fixtures/sii/F60T33-ejemplo-oficial-SII.xml): its TED verifies,
 * its XMLDSig signatures do not (neither with xml-crypto here nor with `xmlsec1 --verify`, also
 * with the envelope's xsi declarations removed); presumably the published file was re-indented
 * after it was signed (whitespace is signed content under C14N), the TED being immune to that as
 * it is flattened before verifying. The untampered case is therefore a factura signed by the test helpers
 * (test/helpers/supplier-envelope.ts), checked with xmlsec1 as well.
 * The tampered copy (…-alterado.xml) is SII's example with MntTotal 119000 → 119001.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { parseEnvioDte, parseCaf, issueDte, verifyReceivedDte } from "../../src/infra/taxagency/sii/index.js";
import { generateCaf, generateCertificate, xmlsecVerify } from "../helpers/sii-fixtures.js";
import { SUPPLIER_RUT, supplierEnvelope, type SupplierEnvelope } from "../helpers/supplier-envelope.js";

const SAMPLE = readFileSync(new URL("../fixtures/sii/F60T33-ejemplo-oficial-SII.xml", import.meta.url));
const TAMPERED = readFileSync(new URL("../fixtures/sii/F60T33-ejemplo-oficial-SII-alterado.xml", import.meta.url));

const dteOf = (file: Buffer | string) => parseEnvioDte(file).documents[0].xml;

let supplier: SupplierEnvelope;
beforeAll(() => {
  supplier = supplierEnvelope({ receiverRut: "77777777-7", folio: 7 });
});

describe("SII's example", () => {
  it("its TED verifies with the CAF's key; its signature does not (changed after signing)", () => {
    expect(verifyReceivedDte(dteOf(SAMPLE))).toEqual({
      signatureValid: false,
      tedValid: true,
      reason: "signature: the signature does not verify",
    });
  });

  it("the tampered copy (MntTotal 119001) fails both, with the reasons", () => {
    expect(verifyReceivedDte(dteOf(TAMPERED))).toEqual({
      signatureValid: false,
      tedValid: false,
      reason: "signature: the signature does not verify; TED: the timbre's DD does not match the document (MNT)",
    });
  });
});

describe("a DTE signed by the test helpers", () => {
  it("verifies: signature and TED (and xmlsec1 agrees on the signature)", () => {
    expect(xmlsecVerify(supplier.dte, supplier.certificate.certificatePem).ok).toBe(true);
    expect(verifyReceivedDte(dteOf(supplier.file))).toEqual({ signatureValid: true, tedValid: true, reason: null });
  });

  it("an amount changed in the Detalle after signing breaks the signature only", () => {
    const text = supplier.file.toString("latin1");
    const tampered = text.replace("<PrcItem>500</PrcItem>", "<PrcItem>600</PrcItem>");
    expect(tampered).not.toBe(text);
    expect(verifyReceivedDte(dteOf(Buffer.from(tampered, "latin1")))).toEqual({
      signatureValid: false,
      tedValid: true,
      reason: "signature: the signature does not verify",
    });
  });

  it("a changed total breaks the signature and the TED", () => {
    const text = supplier.file.toString("latin1");
    const tampered = text.replace("<MntTotal>1190</MntTotal>", "<MntTotal>2380</MntTotal>");
    expect(tampered).not.toBe(text);
    const v = verifyReceivedDte(dteOf(Buffer.from(tampered, "latin1")));
    expect(v).toEqual({
      signatureValid: false,
      tedValid: false,
      reason: "signature: the signature does not verify; TED: the timbre's DD does not match the document (MNT)",
    });
  });

  it(
    "a timbre made with a forged CAF (same RUT, type, range; another key) re-signed by the issuer: signature " +
      "valid, TED not",
    () => {
      // a forger without the real CAF's private key: the DD copies the real CAF (its RSAPK), the FRMT
      // is made with another key
      const cert = generateCertificate("Falsificador");
      const real = parseCaf(
        generateCaf({ rut: SUPPLIER_RUT, type: 33, from: 1, to: 100, authorizedOn: "2026-11-01" }).file,
      );
      const forged = parseCaf(
        generateCaf({ rut: SUPPLIER_RUT, type: 33, from: 1, to: 100, authorizedOn: "2026-11-01" }).file,
      );
      // the TED's DD copies the real CAF, the FRMT is made with the forged CAF's private key
      const frankenCaf = { ...real, privateKey: forged.privateKey };
      const input = {
        type: 33 as const,
        folio: 9,
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
          rut: "77777777-7",
          name: "EMPRESA LTDA",
          address: "SAN DIEGO 2222",
          commune: "LA FLORIDA",
          city: "SANTIAGO",
        },
        lines: [{ name: "Resmas de papel", quantity: "1", unitPrice: "1000" }],
        timestamp: "2026-11-20T09:33:20",
      };
      const dte = issueDte(input, frankenCaf, cert);
      expect(xmlsecVerify(dte.file, cert.certificatePem).ok).toBe(true);
      expect(verifyReceivedDte(dte.xml.replace(/^<\?xml[^>]*>\s*/, ""))).toEqual({
        signatureValid: true,
        tedValid: false,
        reason: "TED: FRMT does not verify with the CAF's public key over the DD",
      });
    },
  );

  it("a folio outside the CAF's range: TED not valid", () => {
    const cert = generateCertificate("Otro");
    const caf = parseCaf(generateCaf({ rut: SUPPLIER_RUT, type: 33, from: 1, to: 5, authorizedOn: "2026-11-01" }).file);
    const dte = issueDte(
      {
        type: 33,
        folio: 3,
        issueDate: "2026-11-20",
        emitter: {
          rut: SUPPLIER_RUT,
          businessName: "Proveedora",
          activity: "Insumos",
          activityCodes: [469000],
          address: "Teatinos 120",
          commune: "Santiago",
          city: "Santiago",
        },
        receiver: {
          rut: "77777777-7",
          name: "EMPRESA LTDA",
          address: "SAN DIEGO 2222",
          commune: "LA FLORIDA",
          city: "SANTIAGO",
        },
        lines: [{ name: "Resma", quantity: "1", unitPrice: "1000" }],
        timestamp: "2026-11-20T09:33:20",
      },
      caf,
      cert,
    );
    // the same document claiming folio 30 (Documento and DD changed, so only the range gives it away)
    const moved = dte.xml
      .replace(/^<\?xml[^>]*>\s*/, "")
      .replace("<Folio>3</Folio>", "<Folio>30</Folio>")
      .replace("<F>3</F>", "<F>30</F>");
    expect(verifyReceivedDte(moved)).toMatchObject({
      signatureValid: false,
      tedValid: false,
      reason: expect.stringContaining("TED: folio 30 is outside the CAF's range 1..5"),
    });
  });

  it("not a DTE: both false", () => {
    expect(verifyReceivedDte("<Nada/>")).toEqual({
      signatureValid: false,
      tedValid: false,
      reason: "not a readable SII DTE",
    });
  });
});
