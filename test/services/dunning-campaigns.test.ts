/**
 * services/dunning-campaigns.ts createDunningCampaign, updateDunningCampaign and deleteDunningCampaign called
 * directly: the stored campaign and its thresholds (exact decimals, in order), the field rules of domain/dunning.ts
 * (days_between_attempts 1-60, max_attempts 1-20, whole numbers), a code unique per organization and mode, at most
 * one campaign per organization and mode `applied_to_organization`, and a campaign customers name kept (409); every
 * refusal writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServiceContext } from "../../src/services/context.js";
import { createCustomer, updateCustomer } from "../../src/services/customers.js";
import {
  createDunningCampaign,
  deleteDunningCampaign,
  updateDunningCampaign,
  type DunningCampaignInput,
} from "../../src/services/dunning-campaigns.js";
import { rejection, startServiceDatabase, type ServiceDatabase } from "../helpers/service-context.js";

let s: ServiceDatabase;
/** Acme in live mode */
let acmeLive: ServiceContext;
beforeAll(async () => {
  s = await startServiceDatabase();
  acmeLive = { ...s.acme, auth: { ...s.acme.auth, testMode: false } };
});
afterAll(async () => s?.close());

let codes = 0;
/** A valid campaign with a fresh code, `overrides` on top. */
function campaign(overrides: DunningCampaignInput = {}): DunningCampaignInput {
  codes += 1;
  return {
    name: "Recordatorio estándar",
    code: `standard-${codes}`,
    thresholds: [{ currency: "CLP", amount: 50000 }],
    daysBetweenAttempts: 3,
    maxAttempts: 5,
    ...overrides,
  };
}

/** Row counts a campaign write touches, to assert that a refusal wrote nothing. */
async function counts() {
  const p = s.database.prisma;
  return {
    campaigns: await p.dunningCampaign.count(),
    thresholds: await p.dunningCampaignThreshold.count(),
    defaults: await p.dunningCampaign.count({ where: { appliedToOrganization: true } }),
  };
}

describe("createDunningCampaign", () => {
  it("stores the campaign with its defaults and its thresholds in order, exact decimals", async () => {
    const created = await createDunningCampaign(s.acme, {
      name: "Cobranza B2B",
      code: "b2b.default",
      description: "Empresas que pagan por transferencia",
      thresholds: [
        { currency: "CLP", amount: "50000" },
        { currency: "usd", amount: 60.5 },
      ],
      daysBetweenAttempts: 2,
      maxAttempts: 8,
    });
    expect(created.id).toMatch(/^dun_[0-9A-Za-z]{24}$/);
    const row = await s.database.prisma.dunningCampaign.findUniqueOrThrow({
      where: { id: created.id },
      include: { thresholds: { orderBy: { position: "asc" } } },
    });
    expect(row).toMatchObject({
      organizationId: s.acme.auth.organizationId,
      testMode: true,
      name: "Cobranza B2B",
      code: "b2b.default",
      daysBetweenAttempts: 2,
      maxAttempts: 8,
      retryCard: true,
      sendEmail: true,
      bccEmails: [],
      finalAction: "none",
      appliedToOrganization: false,
    });
    expect(row.thresholds.map((t) => [t.position, t.currencyId, t.amount.toFixed()])).toEqual([
      [0, "CLP", "50000"],
      [1, "USD", "60.5"],
    ]);
  });

  it("takes days_between_attempts 1-60 and max_attempts 1-20, whole, and names each field out of range", async () => {
    await createDunningCampaign(s.acme, campaign({ daysBetweenAttempts: 1, maxAttempts: 1 }));
    await createDunningCampaign(s.acme, campaign({ daysBetweenAttempts: 60, maxAttempts: 20 }));
    const before = await counts();
    const cases: [DunningCampaignInput, Record<string, string[]>][] = [
      [
        { daysBetweenAttempts: 0, maxAttempts: 21 },
        {
          days_between_attempts: ["must be a whole number from 1 to 60"],
          max_attempts: ["must be a whole number from 1 to 20"],
        },
      ],
      [{ daysBetweenAttempts: 61 }, { days_between_attempts: ["must be a whole number from 1 to 60"] }],
      [{ maxAttempts: 2.5 }, { max_attempts: ["must be a whole number from 1 to 20"] }],
      [
        { daysBetweenAttempts: null, maxAttempts: null },
        { days_between_attempts: ["is required"], max_attempts: ["is required"] },
      ],
    ];
    for (const [overrides, fields] of cases) {
      const error = await rejection(createDunningCampaign(s.acme, campaign(overrides)));
      expect([error.code, error.status, error.fields], JSON.stringify(overrides)).toEqual([
        "validation_error",
        400,
        fields,
      ]);
    }
    expect(await counts()).toEqual(before);
  });

  it("names bad thresholds, code, final action and bcc addresses in one 400, in the order checked", async () => {
    const before = await counts();
    const error = await rejection(
      createDunningCampaign(
        s.acme,
        campaign({
          code: "with space",
          finalAction: "send_lawyers",
          bccEmails: ["ok@acme.cl", "nope"],
          thresholds: [
            { currency: "CLP", amount: "100.5" },
            { currency: "clp", amount: 2 },
          ],
        }),
      ),
    );
    expect(error.message).toMatch(/^Invalid dunning campaign: /);
    expect(Object.keys(error.fields)).toEqual([
      "code",
      "final_action",
      "bcc_emails.1",
      "thresholds.0.amount",
      "thresholds.1.currency",
    ]);
    expect(error.fields.code).toEqual(["must start with a letter or digit and hold only letters, digits, _, - and ."]);
    expect(error.fields["thresholds.0.amount"]).toEqual(["must be in the unit of CLP"]);
    expect(await counts()).toEqual(before);
  });
});

describe("codes and the default campaign, per organization and mode", () => {
  it("refuses a code taken in the organization and mode, naming the campaign; other modes are apart", async () => {
    const first = await createDunningCampaign(s.acme, campaign({ code: "unique-code" }));
    const before = await counts();
    const dup = await rejection(createDunningCampaign(s.acme, campaign({ code: "unique-code" })));
    expect(dup.fields).toEqual({ code: [`unique-code is the code of ${first.id} already (codes are unique)`] });
    expect(await counts()).toEqual(before);
    const second = await createDunningCampaign(s.acme, campaign({ code: "second" }));
    const renamed = await rejection(updateDunningCampaign(s.acme, second.id, { code: "unique-code" }));
    expect(Object.keys(renamed.fields)).toEqual(["code"]);
    expect((await s.database.prisma.dunningCampaign.findUniqueOrThrow({ where: { id: second.id } })).code).toBe(
      "second",
    );
    // its own code is no conflict; another mode or organization has its own codes
    await updateDunningCampaign(s.acme, first.id, { code: "unique-code", name: "Mismo código" });
    const live = await createDunningCampaign(acmeLive, campaign({ code: "unique-code" }));
    const other = await createDunningCampaign(s.other, campaign({ code: "unique-code" }));
    expect([live.testMode, other.organizationId]).toEqual([false, s.other.auth.organizationId]);
  });

  it("allows one applied_to_organization campaign; a second is a 400 on the field, never a switch", async () => {
    const first = await createDunningCampaign(s.acme, campaign({ appliedToOrganization: true }));
    const before = await counts();
    const second = await rejection(createDunningCampaign(s.acme, campaign({ appliedToOrganization: true })));
    expect(second.fields).toEqual({
      applied_to_organization: [
        `${first.id} is the organization's default campaign already (at most one): set its applied_to_organization ` +
          "to false first",
      ],
    });
    const other = await createDunningCampaign(s.acme, campaign());
    expect(
      Object.keys((await rejection(updateDunningCampaign(s.acme, other.id, { appliedToOrganization: true }))).fields),
    ).toEqual(["applied_to_organization"]);
    expect(await counts()).toEqual({ ...before, campaigns: before.campaigns + 1, thresholds: before.thresholds + 1 });
    // other modes and organizations have their own default
    await createDunningCampaign(acmeLive, campaign({ appliedToOrganization: true }));
    await createDunningCampaign(s.other, campaign({ appliedToOrganization: true }));
    // switching: the first stops being the default, then another can be
    await updateDunningCampaign(s.acme, first.id, { appliedToOrganization: false });
    await updateDunningCampaign(s.acme, other.id, { appliedToOrganization: true });
    const defaults = await s.database.prisma.dunningCampaign.findMany({
      where: { organizationId: s.acme.auth.organizationId, testMode: true, appliedToOrganization: true },
    });
    expect(defaults.map((c) => c.id)).toEqual([other.id]);
  });
});

describe("updateDunningCampaign and deleteDunningCampaign", () => {
  it("changes only the given fields; thresholds replace the list; a bad value changes nothing", async () => {
    const created = await createDunningCampaign(
      s.acme,
      campaign({
        thresholds: [
          { currency: "CLP", amount: 1000 },
          { currency: "USD", amount: 10 },
        ],
      }),
    );
    await updateDunningCampaign(s.acme, created.id, {
      thresholds: [{ currency: "EUR", amount: "12.34" }],
      finalAction: "cancel_subscriptions",
      description: "",
    });
    const read = () =>
      s.database.prisma.dunningCampaign.findUniqueOrThrow({ where: { id: created.id }, include: { thresholds: true } });
    const row = await read();
    expect(row).toMatchObject({
      daysBetweenAttempts: 3,
      maxAttempts: 5,
      finalAction: "cancel_subscriptions",
      description: null,
    });
    expect(row.thresholds.map((t) => [t.currencyId, t.amount.toFixed()])).toEqual([["EUR", "12.34"]]);
    const error = await rejection(updateDunningCampaign(s.acme, created.id, { maxAttempts: 0, name: "Otra" }));
    expect(error.fields).toEqual({ max_attempts: ["must be a whole number from 1 to 20"] });
    expect(await read()).toEqual(row);
  });

  it("keeps a campaign a customer names (409 saying how many) and deletes it with its thresholds after", async () => {
    const created = await createDunningCampaign(s.acme, campaign());
    const customer = await createCustomer(s.acme, { name: "Cliente SpA", dunningCampaign: created.id });
    const error = await rejection(deleteDunningCampaign(s.acme, created.id));
    expect([error.code, error.status, error.message]).toEqual([
      "invalid_state",
      409,
      `Dunning campaign ${created.id} is the dunning_campaign of 1 customer: set theirs to another campaign, or to ` +
        "null for the default, first",
    ]);
    expect(await s.database.prisma.dunningCampaignThreshold.count({ where: { campaignId: created.id } })).toBe(1);
    await updateCustomer(s.acme, customer.id, { dunningCampaign: null });
    expect(await deleteDunningCampaign(s.acme, created.id)).toEqual({ id: created.id });
    expect(await s.database.prisma.dunningCampaignThreshold.count({ where: { campaignId: created.id } })).toBe(0);
  });
});
