/**
 * services/webhook-endpoints.ts createWebhookEndpoint, updateWebhookEndpoint and rotateWebhookEndpointSecret called
 * directly: the `whsec_` secret shown once and stored sealed (infra/secrets.ts, AES-256-GCM under the encryption
 * key), the previous secret kept for 24 hours after a rotation (signingSecrets), the 400's fields (url,
 * enabled_events) and the 16 endpoints per organization and mode, with nothing written on a refusal.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSecret } from "../../src/infra/secrets.js";
import type { ServiceContext } from "../../src/services/context.js";
import { createCustomer } from "../../src/services/customers.js";
import {
  createWebhookEndpoint,
  rotateWebhookEndpointSecret,
  signingSecrets,
  updateWebhookEndpoint,
} from "../../src/services/webhook-endpoints.js";
import { rejection, startServiceDatabase, type ServiceDatabase } from "../helpers/service-context.js";

let s: ServiceDatabase;
const key = randomBytes(32);
/** Acme in test mode with an encryption key, as a server with CERTIFICATE_ENCRYPTION_KEY has */
let acme: ServiceContext;
beforeAll(async () => {
  s = await startServiceDatabase();
  acme = withKey(s.acme);
});
afterAll(async () => s?.close());

function withKey(ctx: ServiceContext, mode: { live?: boolean } = {}): ServiceContext {
  return {
    ...ctx,
    auth: { ...ctx.auth, testMode: !mode.live },
    settings: { ...ctx.settings, certificateEncryptionKey: key },
  };
}

/** The secret's bytes from its text (`whsec_` + base64). */
const bytesOf = (secret: string) => Buffer.from(secret.slice("whsec_".length), "base64");

describe("createWebhookEndpoint", () => {
  it("returns a whsec_ secret once and stores it sealed; events of its types get a message for it", async () => {
    const created = await createWebhookEndpoint(acme, {
      url: "http://127.0.0.1:4000/hooks",
      enabledEvents: ["customer.created"],
      description: "CRM",
      metadata: { team: "ops" },
    });
    expect(created.revealedSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const row = await s.database.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: created.id } });
    expect(row).toMatchObject({
      organizationId: s.acme.auth.organizationId,
      testMode: true,
      url: "http://127.0.0.1:4000/hooks",
      enabledEvents: ["customer.created"],
      description: "CRM",
      metadata: { team: "ops" },
      status: "enabled",
      createdByEmail: "ops@acme.cl",
      previousSecret: null,
      previousSecretExpiresAt: null,
    });
    expect(row.id).toMatch(/^we_/);
    // sealed: neither the text nor the bytes are stored; the key opens it to the bytes shown
    const plain = bytesOf(created.revealedSecret);
    const sealed = Buffer.from(row.secret);
    expect(plain.length).toBe(32);
    expect(sealed.includes(plain)).toBe(false);
    expect(sealed.toString("latin1")).not.toContain(created.revealedSecret);
    expect(openSecret(key, row.secret)).toEqual(plain);
    expect(() => openSecret(randomBytes(32), row.secret)).toThrow(/cannot decrypt a stored secret/);

    const customer = await createCustomer(s.acme, { name: "Cliente SpA" });
    const messages = await s.database.prisma.webhookMessage.findMany({
      where: { endpointId: created.id },
      include: { event: true },
    });
    expect(messages.map((m) => [m.event.type, m.event.objectId])).toEqual([["customer.created", customer.id]]);
  });

  it("names a bad url and enabled_events in one 400 and stores nothing", async () => {
    const before = await s.database.prisma.webhookEndpoint.count();
    const cases: [Parameters<typeof createWebhookEndpoint>[1], Record<string, string[]>][] = [
      [{ url: "ftp://example.com/x", enabledEvents: ["*"] }, { url: ["must be an http(s) URL, not ftp"] }],
      [
        { url: "https://user:pass@example.com/x", enabledEvents: [] },
        {
          url: ["must not contain credentials (user:password@); sign-in is the signature"],
          enabled_events: ["must list at least one event type, or * for all"],
        },
      ],
      [
        { url: "http://169.254.169.254/latest/meta-data", enabledEvents: ["*"] },
        {
          url: [
            expect.stringMatching(/^must not point to a link-local address \(where clouds serve instance metadata\)/),
          ],
        },
      ],
      [{ enabledEvents: ["*"] }, { url: ["is required"] }],
    ];
    for (const [input, fields] of cases) {
      const error = await rejection(createWebhookEndpoint(acme, input));
      expect([error.code, error.status, error.fields], JSON.stringify(input)).toEqual([
        "validation_error",
        400,
        fields,
      ]);
    }
    // live mode: https only
    const live = await rejection(
      createWebhookEndpoint(withKey(s.acme, { live: true }), { url: "http://93.184.216.34/x", enabledEvents: ["*"] }),
    );
    expect(live.fields).toEqual({ url: ["must use https in live mode"] });
    expect(await s.database.prisma.webhookEndpoint.count()).toBe(before);
  });

  it("refuses a 17th endpoint of an organization and mode on url; other modes have their own 16", async () => {
    const other = withKey(s.other);
    for (let i = 0; i < 16; i++)
      await createWebhookEndpoint(other, { url: `https://example.com/${i}`, enabledEvents: ["*"] });
    const error = await rejection(
      createWebhookEndpoint(other, { url: "https://example.com/16", enabledEvents: ["*"] }),
    );
    expect([error.code, error.fields]).toEqual([
      "validation_error",
      { url: ["at most 16 webhook endpoints per organization and mode; delete one first"] },
    ]);
    const where = { organizationId: s.other.auth.organizationId };
    expect(await s.database.prisma.webhookEndpoint.count({ where: { ...where, testMode: true } })).toBe(16);
    await createWebhookEndpoint(withKey(s.other, { live: true }), {
      url: "https://93.184.216.34/hooks",
      enabledEvents: ["*"],
    });
    expect(await s.database.prisma.webhookEndpoint.count({ where: { ...where, testMode: false } })).toBe(1);
  });

  it("needs an encryption key (409) and stores nothing without one", async () => {
    const before = await s.database.prisma.webhookEndpoint.count();
    const error = await rejection(
      createWebhookEndpoint(
        { ...s.acme, settings: { ...s.acme.settings, certificateEncryptionKey: undefined } },
        { url: "https://example.com/x", enabledEvents: ["*"] },
      ),
    );
    expect([error.code, error.status]).toEqual(["invalid_state", 409]);
    expect(error.message).toContain("CERTIFICATE_ENCRYPTION_KEY");
    expect(await s.database.prisma.webhookEndpoint.count()).toBe(before);
  });
});

describe("rotateWebhookEndpointSecret", () => {
  it("gives a new secret; the previous one is kept sealed and signs too for 24 hours", async () => {
    const created = await createWebhookEndpoint(acme, { url: "https://example.com/r", enabledEvents: ["*"] });
    const before = await s.database.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: created.id } });
    const at = new Date("2026-12-01T12:00:00.000Z");
    const rotated = await rotateWebhookEndpointSecret({ ...acme, now: () => at }, created.id);
    expect(rotated.revealedSecret).toMatch(/^whsec_/);
    expect(rotated.revealedSecret).not.toBe(created.revealedSecret);
    const row = await s.database.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: created.id } });
    expect(Buffer.from(row.previousSecret!)).toEqual(Buffer.from(before.secret));
    expect(row.previousSecretExpiresAt?.toISOString()).toBe("2026-12-02T12:00:00.000Z");
    expect(openSecret(key, row.secret)).toEqual(bytesOf(rotated.revealedSecret));
    expect(openSecret(key, row.previousSecret!)).toEqual(bytesOf(created.revealedSecret));

    const open = (sealed: Uint8Array) => openSecret(key, sealed);
    expect(signingSecrets(row, open, new Date("2026-12-02T11:59:59.000Z"))).toEqual([
      bytesOf(rotated.revealedSecret),
      bytesOf(created.revealedSecret),
    ]);
    expect(signingSecrets(row, open, new Date("2026-12-02T12:00:00.000Z"))).toEqual([bytesOf(rotated.revealedSecret)]);
    // another organization's endpoint is unknown, and its secret stays
    const foreign = await rejection(rotateWebhookEndpointSecret(withKey(s.other), created.id));
    expect([foreign.code, foreign.status]).toEqual(["not_found", 404]);
    expect(
      Buffer.from((await s.database.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: created.id } })).secret),
    ).toEqual(Buffer.from(row.secret));
  });
});

describe("updateWebhookEndpoint", () => {
  it("changes given fields, merges metadata, disables on request, no event; a bad url changes nothing", async () => {
    const created = await createWebhookEndpoint(acme, {
      url: "https://example.com/a",
      enabledEvents: ["invoice.paid"],
      metadata: { crm: "hubspot" },
    });
    const updated = await updateWebhookEndpoint(acme, created.id, {
      url: "https://example.com/b",
      enabledEvents: ["*"],
      metadata: { team: "ops" },
      status: "disabled",
    });
    expect(updated).toMatchObject({
      url: "https://example.com/b",
      enabledEvents: ["*"],
      metadata: { crm: "hubspot", team: "ops" },
      status: "disabled",
      disabledReason: "requested",
    });
    expect(Buffer.from(updated.secret)).toEqual(Buffer.from(created.secret));
    expect(await s.database.prisma.event.count({ where: { objectId: created.id } })).toBe(0);
    const bad = await rejection(updateWebhookEndpoint(acme, created.id, { url: "not a url", status: "enabled" }));
    expect(bad.fields).toEqual({ url: ["must be an absolute http(s) URL (https://example.com/webhooks)"] });
    expect(await s.database.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: created.id } })).toMatchObject({
      url: "https://example.com/b",
      status: "disabled",
    });
  });
});
