/** The rules of an issued document's parties (src/domain/issued-parties.ts). */
import { describe, expect, it } from "vitest";
import {
  customerAsIssued,
  customerSnapshot,
  issuedIssuerOf,
  issuerSnapshot,
  readsSnapshot,
  receiverDetails,
  type CustomerColumns,
} from "../../src/domain/issued-parties.js";

const row: CustomerColumns & { extra: string } = {
  id: "cus_1",
  name: "Cliente SpA",
  address: "Av. 1",
  countryId: "CL",
  stateId: "CL-RM",
  stateCode: "RM",
  currencyId: null,
  email: "a@b.cl",
  phone: null,
  website: null,
  taxId: "76042235-5",
  activity: null,
  commune: "Ñuñoa",
  city: null,
  contacts: [],
  taxSettings: { activity: "Retail", commune: " ", city: 3 },
  metadata: { k: "v" },
  createdAt: new Date("2026-11-01T10:00:00.123Z"),
  updatedAt: new Date("2026-11-02T10:00:00.000Z"),
  extra: "kept",
};

const profile = {
  taxId: "76042235-5",
  businessName: "Acme SpA",
  activity: "Servicios",
  activityCodes: ["620200"],
  address: "Calle 1",
  commune: "Providencia",
  city: null,
  resolutionNumber: 80,
  resolutionDate: "2014-08-22",
};

describe("snapshots", () => {
  it("the customer snapshot is every column, timestamps as ISO 8601 UTC, nothing else", () => {
    const snap = customerSnapshot(row);
    expect(snap).toEqual({
      ...row,
      extra: undefined,
      createdAt: "2026-11-01T10:00:00.123Z",
      updatedAt: "2026-11-02T10:00:00.000Z",
    });
    expect(Object.keys(snap)).not.toContain("extra");
    expect(JSON.parse(JSON.stringify(snap))).toEqual(snap);
  });

  it("the issuer prints the tax business name, else the branding name, else the organization's name", () => {
    expect(issuerSnapshot({ name: "Org", businessName: "Brand" }, profile).name).toBe("Acme SpA");
    expect(issuerSnapshot({ name: "Org", businessName: "Brand" }, { ...profile, businessName: null }).name).toBe(
      "Brand",
    );
    expect(issuerSnapshot({ name: "Org", businessName: null }, { ...profile, businessName: null }).name).toBe("Org");
    expect(issuerSnapshot({ name: "Org", businessName: null }, profile)).toEqual({
      name: "Acme SpA",
      ...profile,
      siiOffice: "Providencia",
    });
  });

  it("the issuer keeps the SII office of its commune, so a later office table does not change a printed header", () => {
    expect(issuerSnapshot({ name: "Org", businessName: null }, { ...profile, commune: "Ñuñoa" }).siiOffice).toBe(
      "Ñuñoa",
    );
    expect(issuerSnapshot({ name: "Org", businessName: null }, { ...profile, commune: "Temuco" }).siiOffice).toBe(
      "Temuco",
    );
    expect(issuerSnapshot({ name: "Org", businessName: null }, { ...profile, commune: null })).not.toHaveProperty(
      "siiOffice",
    );
  });
});

describe("which data a document shows", () => {
  const renamed = { ...row, name: "Otro", email: "x@y.cl", updatedAt: new Date("2026-12-01T00:00:00Z") };
  const snapshot = customerSnapshot(row);
  const issuer = issuerSnapshot({ name: "Org", businessName: null }, profile);

  it("a draft shows live data, even with a snapshot", () => {
    const draft = { status: "draft", customerSnapshot: snapshot, issuerSnapshot: issuer };
    expect(readsSnapshot(draft)).toBe(false);
    expect(customerAsIssued(draft, renamed)).toBe(renamed);
    expect(issuedIssuerOf(draft)).toBeNull();
  });

  it("a finalized document shows its snapshot over the live row, keeping the row's other keys", () => {
    const doc = { status: "finalized", customerSnapshot: snapshot, issuerSnapshot: issuer };
    const shown = customerAsIssued(doc, renamed);
    expect(shown).toEqual({ ...row });
    expect(shown.updatedAt).toEqual(new Date("2026-11-02T10:00:00.000Z"));
    expect(shown.extra).toBe("kept");
    expect(issuedIssuerOf(doc)).toBe(issuer);
  });

  it("a finalized document without a snapshot shows live data", () => {
    const doc = { status: "finalized", customerSnapshot: null, issuerSnapshot: null };
    expect(customerAsIssued(doc, renamed)).toBe(renamed);
    expect(issuedIssuerOf(doc)).toBeNull();
  });

  it("a snapshot taken before activity, commune and city existed reads them as null", () => {
    const { activity: _a, commune: _c, city: _ci, ...older } = snapshot;
    const shown = customerAsIssued({ status: "finalized", customerSnapshot: older }, renamed);
    expect([shown.activity, shown.commune, shown.city]).toEqual([null, null, null]);
  });

  it("receiver details: the column, else the tax_settings key of older customers; non-blank strings only", () => {
    // activity from tax_settings (column null), commune from the column (the setting is blank), city nowhere (3 is not
    // text)
    expect(receiverDetails(row)).toEqual({ activity: "Retail", commune: "Ñuñoa", city: null });
    expect(receiverDetails({ ...row, activity: "Comercio", city: "  " })).toEqual({
      activity: "Comercio",
      commune: "Ñuñoa",
      city: null,
    });
    expect(receiverDetails({ taxSettings: null })).toEqual({ activity: null, commune: null, city: null });
  });
});
