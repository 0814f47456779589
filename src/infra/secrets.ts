/**
 * Encryption at rest of the organization's signing material (certificates, CAF private keys):
 * AES-256-GCM from node:crypto with a 32-byte key from configuration (`CERTIFICATE_ENCRYPTION_KEY`,
 * base64; on the embedded database a key file generated once in the data dir, docs/sii-setup.md).
 *
 * Sealed layout: `0x01` (version) | IV (12 bytes, random) | tag (16 bytes) | ciphertext.
 * A wrong key or any changed byte makes `openSecret` throw (GCM authenticates everything).
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { InvalidStateError } from "../domain/errors.js";

const VERSION = 1;
const IV_LENGTH = 12;
const TAG_LENGTH = 16;
export const ENCRYPTION_KEY_LENGTH = 32;

/** Name of the key file the embedded database uses when CERTIFICATE_ENCRYPTION_KEY is unset. */
export const KEY_FILE_NAME = "certificate-encryption.key";

/**
 * Parses a base64 key of exactly 32 bytes; throws an Error naming `source` otherwise (a startup
 * configuration error, never a silent fallback).
 */
export function parseEncryptionKey(base64: string, source = "CERTIFICATE_ENCRYPTION_KEY"): Buffer {
  const text = base64.trim();
  const key = Buffer.from(text, "base64");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || key.length !== ENCRYPTION_KEY_LENGTH) {
    throw new Error(`${source} must be ${ENCRYPTION_KEY_LENGTH} bytes in base64 (openssl rand -base64 32)`);
  }
  return key;
}

/**
 * The embedded database's key: reads `<dataDir>/certificate-encryption.key` (base64), creating it
 * with 32 random bytes (mode 0600) the first time. Losing the file makes stored certificates and
 * CAFs unreadable (they must be uploaded again).
 */
export function ensureKeyFile(dataDir: string): Buffer {
  const file = path.join(dataDir, KEY_FILE_NAME);
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, `${randomBytes(ENCRYPTION_KEY_LENGTH).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
    chmodSync(file, 0o600);
  }
  return parseEncryptionKey(readFileSync(file, "utf8"), file);
}

/** A configured key or a 409 saying how to configure one (nothing can be stored or signed without it). */
export function requireKey(key: Buffer | undefined): Buffer {
  if (!key) {
    throw new InvalidStateError(
      "no encryption key for certificates and CAFs is configured: set CERTIFICATE_ENCRYPTION_KEY (32 bytes, base64)",
    );
  }
  return key;
}

/** Encrypts `plaintext` with AES-256-GCM under `key` (32 bytes); returns the sealed bytes. */
export function sealSecret(key: Buffer, plaintext: Buffer): Buffer {
  const iv = randomBytes(IV_LENGTH);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
}

/** Decrypts what sealSecret produced; throws an Error when the key is wrong or the data changed. */
export function openSecret(key: Buffer, sealed: Buffer | Uint8Array): Buffer {
  const data = Buffer.from(sealed);
  if (data.length < 1 + IV_LENGTH + TAG_LENGTH || data[0] !== VERSION)
    throw new Error("not a sealed secret (unknown format)");
  const iv = data.subarray(1, 1 + IV_LENGTH);
  const tag = data.subarray(1 + IV_LENGTH, 1 + IV_LENGTH + TAG_LENGTH);
  const decipher = createDecipheriv("aes-256-gcm", key, iv);
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(data.subarray(1 + IV_LENGTH + TAG_LENGTH)), decipher.final()]);
  } catch {
    throw new Error("cannot decrypt a stored secret: wrong CERTIFICATE_ENCRYPTION_KEY or corrupted data");
  }
}

/**
 * `settings` with the certificate encryption key every process on this database must share:
 * the configured one, or on the embedded database the key file next to its data (ensureKeyFile).
 * Used by the server and every CLI command that may sign (docs/sii-setup.md).
 */
export function withEmbeddedKey<S extends { certificateEncryptionKey?: Buffer | null }>(
  settings: S,
  target: { kind: string; dir?: string },
): S {
  if (settings.certificateEncryptionKey || target.kind !== "pglite" || !target.dir) return settings;
  return { ...settings, certificateEncryptionKey: ensureKeyFile(path.dirname(target.dir)) };
}
