/**
 * Reading a signing certificate's PKCS#12 (src/infra/pkcs12.ts; docs/sii-setup.md): a non-ASCII
 * password opens what OpenSSL 3 wrote, whichever way the first, wrong-key reading fails.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readPkcs12 } from "../../src/infra/pkcs12.js";

const fixture = (name: string) => readFileSync(new URL(`../fixtures/pkcs12/${name}`, import.meta.url));

describe("readPkcs12", () => {
  it("opens a file whose wrong-key reading fails as DER, not as decryption, with its non-ASCII password", () => {
    const contents = readPkcs12(fixture("padding-looks-right.p12"), "clave ñandú");
    expect(contents.subjectRut).toBe("12345678-5");
    expect(contents.subjectName).toBe("Firmante de Prueba");
    expect(contents.privateKeyPem).toContain("PRIVATE KEY");
    expect(contents.validTo.getUTCFullYear()).toBeGreaterThan(2100);
  });

  it("still refuses that file with another password, on password", () => {
    expect(() => readPkcs12(fixture("padding-looks-right.p12"), "clave nandu")).toThrow(
      expect.objectContaining({ fields: { password: ["cannot open the PKCS#12 file with this password"] } }),
    );
  });
});
