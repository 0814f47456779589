/** Metadata merge: keys merge, "" or null removes a key, Stripe's limits (40 / 500 / 50). */
import { describe, it, expect } from "vitest";
import { METADATA_LIMITS, mergeMetadata, validateMetadataPatch } from "../../src/domain/metadata.js";
import { validationErrorOf } from "../helpers/errors.js";

describe("mergeMetadata", () => {
  it("merges new keys and overwrites existing ones", () => {
    expect(mergeMetadata({ a: "1", b: "2" }, { b: "20", c: "3" })).toEqual({ a: "1", b: "20", c: "3" });
  });

  it("removes a key sent as an empty string", () => {
    expect(mergeMetadata({ a: "1", b: "2" }, { b: "" })).toEqual({ a: "1" });
  });

  it("removes a key sent as null", () => {
    expect(mergeMetadata({ a: "1", b: "2" }, { a: null })).toEqual({ b: "2" });
  });

  it("ignores removal of a key that is not there", () => {
    expect(mergeMetadata({ a: "1" }, { zz: "", yy: null })).toEqual({ a: "1" });
  });

  it("stores numbers and booleans as strings", () => {
    expect(mergeMetadata({}, { n: 3, f: false, t: true })).toEqual({ n: "3", f: "false", t: "true" });
  });

  it("returns a copy for an absent patch and never mutates the stored object", () => {
    const current = { a: "1" };
    const same = mergeMetadata(current, undefined);
    expect(same).toEqual({ a: "1" });
    expect(same).not.toBe(current);
    expect(mergeMetadata(current, null)).toEqual({ a: "1" });
    mergeMetadata(current, { a: "", b: "2" });
    expect(current).toEqual({ a: "1" });
  });

  it("accepts a 40-character key and a 500-character value", () => {
    const key = "k".repeat(METADATA_LIMITS.keyLength);
    const merged = mergeMetadata({}, { [key]: "v".repeat(METADATA_LIMITS.valueLength) });
    expect(merged[key]).toHaveLength(500);
  });

  it("rejects a key longer than 40 characters with field metadata.<key>", () => {
    const key = "k".repeat(41);
    const error = validationErrorOf(() => mergeMetadata({}, { [key]: "x" }));
    expect(error.status).toBe(400);
    expect(error.code).toBe("validation_error");
    expect(Object.keys(error.fields ?? {})).toEqual([`metadata.${key}`]);
  });

  it("rejects an empty key", () => {
    const error = validationErrorOf(() => mergeMetadata({}, { "": "x" }));
    expect(Object.keys(error.fields ?? {})).toEqual(["metadata."]);
  });

  it("rejects a value longer than 500 characters", () => {
    const error = validationErrorOf(() => mergeMetadata({}, { note: "x".repeat(501) }));
    expect(error.fields).toEqual({ "metadata.note": ["values must have at most 500 characters"] });
  });

  it("rejects object and array values", () => {
    const error = validationErrorOf(() => mergeMetadata({}, { obj: { a: 1 }, list: ["a"] }));
    expect(Object.keys(error.fields ?? {}).sort()).toEqual(["metadata.list", "metadata.obj"]);
  });

  it("rejects more than 50 keys after the merge, counting removals first", () => {
    const full: Record<string, string> = {};
    for (let i = 0; i < METADATA_LIMITS.keys; i++) full[`k${i}`] = "v";
    expect(Object.keys(mergeMetadata(full, { k0: "", extra: "1" }))).toHaveLength(50);
    const error = validationErrorOf(() => mergeMetadata(full, { extra: "1" }));
    expect(error.fields).toEqual({ metadata: ["at most 50 keys"] });
  });

  it("uses the given path in field names", () => {
    const error = validationErrorOf(() => mergeMetadata({}, { ["k".repeat(41)]: "x" }, "customer.metadata"));
    expect(Object.keys(error.fields ?? {})).toEqual([`customer.metadata.${"k".repeat(41)}`]);
  });

  it("changes nothing when the patch is invalid", () => {
    const current = { a: "1" };
    validationErrorOf(() => mergeMetadata(current, { a: "", ["k".repeat(41)]: "x" }));
    expect(current).toEqual({ a: "1" });
  });
});

describe("validateMetadataPatch", () => {
  it("passes a valid patch", () => {
    expect(() => validateMetadataPatch({ a: "1", b: null, c: "" })).not.toThrow();
  });

  it("collects every offending key in one error", () => {
    const long = "k".repeat(41);
    const error = validationErrorOf(() => validateMetadataPatch({ [long]: "x", v: "y".repeat(501) }));
    expect(Object.keys(error.fields ?? {}).sort()).toEqual([`metadata.${long}`, "metadata.v"].sort());
  });
});
