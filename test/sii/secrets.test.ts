import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ensureKeyFile,
  KEY_FILE_NAME,
  openSecret,
  parseEncryptionKey,
  requireKey,
  sealSecret,
} from "../../src/infra/secrets.js";
import { loadConfig } from "../../src/infra/config.js";

describe("AES-256-GCM sealing", () => {
  const key = randomBytes(32);
  it("round-trips, with a random IV each time", () => {
    const secret = Buffer.from("-----BEGIN RSA PRIVATE KEY----- ñ");
    const a = sealSecret(key, secret);
    const b = sealSecret(key, secret);
    expect(a.equals(b)).toBe(false);
    expect(a.length).toBe(1 + 12 + 16 + secret.length);
    expect(a.includes(secret)).toBe(false);
    expect(openSecret(key, a).equals(secret)).toBe(true);
  });
  it("fails with another key or a changed byte", () => {
    const sealed = sealSecret(key, Buffer.from("secret"));
    expect(() => openSecret(randomBytes(32), sealed)).toThrow(/wrong CERTIFICATE_ENCRYPTION_KEY/);
    const changed = Buffer.from(sealed);
    changed[changed.length - 1] ^= 1;
    expect(() => openSecret(key, changed)).toThrow(/corrupted/);
    expect(() => openSecret(key, Buffer.from([2, 0]))).toThrow(/unknown format/);
  });
});

describe("the key from configuration", () => {
  it("CERTIFICATE_ENCRYPTION_KEY must be 32 bytes of base64", () => {
    const key = randomBytes(32);
    expect(
      loadConfig({ CERTIFICATE_ENCRYPTION_KEY: key.toString("base64") }).settings.certificateEncryptionKey?.equals(key),
    ).toBe(true);
    expect(loadConfig({}).settings.certificateEncryptionKey).toBeUndefined();
    expect(() => loadConfig({ CERTIFICATE_ENCRYPTION_KEY: randomBytes(16).toString("base64") })).toThrow(/32 bytes/);
    expect(() => parseEncryptionKey("not base64!")).toThrow(/32 bytes/);
    expect(() => requireKey(undefined)).toThrow(/CERTIFICATE_ENCRYPTION_KEY/);
  });
  it("the embedded database's key file is made once (0600) and then reused", () => {
    const dir = mkdtempSync(join(tmpdir(), "keyfile-"));
    try {
      const first = ensureKeyFile(join(dir, "data"));
      const second = ensureKeyFile(join(dir, "data"));
      expect(first.length).toBe(32);
      expect(second.equals(first)).toBe(true);
      const file = join(dir, "data", KEY_FILE_NAME);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(Buffer.from(readFileSync(file, "utf8").trim(), "base64").equals(first)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
