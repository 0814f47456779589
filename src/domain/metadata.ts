/**
 * Metadata merge (spec Payment.metadata, applied to every resource with metadata): an update
 * merges its keys into the stored object; a key sent with an empty value ("" or null) is removed.
 * Keys are strings of at most 40 characters and values strings of at most 500 (Stripe's limits);
 * at most 50 keys.
 */
import { FieldErrorCollector, ValidationError } from "./errors.js";

export type Metadata = Record<string, string>;
export type MetadataPatch = Record<string, unknown>;

export const METADATA_LIMITS = { keys: 50, keyLength: 40, valueLength: 500 } as const;

/** Validates a metadata patch (field path `metadata.<key>`); throws ValidationError. */
export function validateMetadataPatch(patch: MetadataPatch, path = "metadata"): void {
  const errors = new FieldErrorCollector();
  for (const [key, value] of Object.entries(patch)) {
    if (key.length === 0 || key.length > METADATA_LIMITS.keyLength) {
      errors.add(`${path}.${key}`, `keys must have 1 to ${METADATA_LIMITS.keyLength} characters`);
    }
    if (value !== null && typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
      errors.add(`${path}.${key}`, "values must be strings, numbers or booleans");
    } else if (value !== null && String(value).length > METADATA_LIMITS.valueLength) {
      errors.add(`${path}.${key}`, `values must have at most ${METADATA_LIMITS.valueLength} characters`);
    }
  }
  errors.throwIfAny("Invalid metadata");
}

/** The stored metadata after applying `patch`; empty values remove keys. Throws ValidationError. */
export function mergeMetadata(current: Metadata, patch: MetadataPatch | undefined | null, path = "metadata"): Metadata {
  if (!patch) return { ...current };
  validateMetadataPatch(patch, path);
  const merged: Metadata = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null || value === "") delete merged[key];
    else merged[key] = String(value);
  }
  if (Object.keys(merged).length > METADATA_LIMITS.keys) {
    throw ValidationError.field(path, `at most ${METADATA_LIMITS.keys} keys`);
  }
  return merged;
}
