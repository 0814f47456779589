/**
 * The dashboard's settings page (docs/dashboard.md "Settings") in headless Chromium, on both databases: an admin
 * fills the SII tax profile (a wrong RUT is the API's error naming tax_id), changes the portal's accent colour and
 * sees the live preview take it before saving and the saved value after, uploads a signing certificate and a CAF
 * through the page, and reads each CAF's folios used and left, one with fewer than 10 % left flagged. A finance
 * member has no settings in the navigation, is shown that only admins see the page, and GraphQL refuses it the
 * settings' mutations. Photographed at desktop and phone widths.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { launchChromium } from "../helpers/chromium.js";
import { dashboardBrowser, prepareScreenshots } from "../helpers/dashboard-browser.js";
import { generateCaf, generatePkcs12 } from "../helpers/sii-fixtures.js";

const SLOW = 180_000;
const RUT = "76042235-5";

let s: TestServer;
let browser: Browser | undefined;
const { member, shots, signedIn, graphqlAs } = dashboardBrowser(() => ({ s, browser }));
/** SII authorized the CAFs five days ago */
const authorizedOn = new Date(Date.now() - 5 * 86400_000).toISOString().slice(0, 10);

beforeAll(async () => {
  prepareScreenshots();
  [s, browser] = await Promise.all([
    startTestServer({ settings: { certificateEncryptionKey: randomBytes(32) } }),
    launchChromium(),
  ]);
  await member("ada@acme.cl", "Ada Pérez", "admin");
  await member("ana@acme.cl", "Ana Rojas", "finance");
});
afterAll(async () => {
  await browser?.close();
  await s?.close();
});

describe("the dashboard's settings", () => {
  it(
    "fills the tax profile, previews and saves a colour, uploads a certificate and CAFs, flags a CAF running out",
    async () => {
      const { page, violations } = await signedIn("ada@acme.cl", "Ada Pérez · Administración");
      await page.getByRole("link", { name: "Configuración", exact: true }).click();
      await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Configuración");

      // the tax profile: a wrong check digit is the API's error, naming the field; then saved
      const profile = page.locator("#tax-profile-title ~ form");
      // the fixture's profile has no activity codes
      await expect.poll(() => page.locator("p.missing").textContent()).toBe("Falta para el SII: activity_codes.");
      expect(await profile.getByLabel("RUT").inputValue()).toBe(RUT);
      await profile.getByLabel("RUT").fill("76.042.235-4");
      await profile.getByRole("button", { name: "Guardar" }).click();
      await expect.poll(() => page.locator("#tax-profile-title ~ [role=alert]").textContent()).toMatch(/tax_id/);
      await profile.getByLabel("RUT").fill("76.042.235-5");
      await profile.getByLabel("Ciudad").fill("Santiago");
      await profile.getByLabel("Códigos de actividad (separados por coma)").fill("620200, 631100");
      await profile.getByRole("button", { name: "Guardar" }).click();
      await expect.poll(() => page.locator("#tax-profile-title ~ [role=status]").textContent()).toBe("Guardado.");
      await expect
        .poll(() => page.locator("p.missing").textContent())
        .toBe("El perfil tiene todo lo que el SII exige.");
      const saved = await s.graphql(`{ taxProfile { taxId businessName city activityCodes missing } }`);
      expect(saved.body.data.taxProfile).toEqual({
        taxId: RUT,
        businessName: "Acme SpA",
        city: "Santiago",
        activityCodes: ["620200", "631100"],
        missing: [],
      });

      // the accent colour: the preview follows the field at once (the portal's rule), the API keeps it once saved
      const preview = page.locator(".preview-page");
      const accent = page.getByLabel("Color de botones y enlaces", { exact: true });
      await accent.fill("#8A1C7C");
      await expect.poll(() => preview.getAttribute("data-asset")).toBe("#8a1c7c");
      expect(await preview.locator("button").evaluate((b) => getComputedStyle(b).backgroundColor)).toBe(
        "rgb(138, 28, 124)",
      );
      expect((await s.graphql(`{ organizationBranding { colorAsset } }`)).body.data.organizationBranding).toEqual({
        colorAsset: null,
      });
      // a colour too faint on the background: the preview says the portal will use the text's colour
      await page.getByLabel("Color de fondo", { exact: true }).fill("#8a1c7d");
      await expect.poll(() => page.locator(".portal-preview figcaption").textContent()).toMatch(/se lee mal/);
      expect(await preview.getAttribute("data-asset")).toBe("#ffffff");
      await page.getByLabel("Color de fondo", { exact: true }).fill("");
      await page.locator("#branding-title ~ div form").getByRole("button", { name: "Guardar" }).click();
      await expect.poll(() => page.locator("#branding-title ~ [role=status]").textContent()).toBe("Guardado.");
      const branding = await s.graphql(`{ organizationBranding { colorAsset colorBackground } }`);
      expect(branding.body.data.organizationBranding).toEqual({ colorAsset: "#8a1c7c", colorBackground: null });
      // a wrong colour: the API's error names the field
      await accent.fill("#12");
      await page.locator("#branding-title ~ div form").getByRole("button", { name: "Guardar" }).click();
      await expect.poll(() => page.locator("#branding-title ~ [role=alert]").textContent()).toMatch(/color_?asset/i);

      // a certificate through the page
      const certificate = generatePkcs12({ rut: "12345678-5" });
      await page.getByLabel("Archivo del certificado (.p12, .pfx)").setInputFiles({
        name: "firma.p12",
        mimeType: "application/x-pkcs12",
        buffer: certificate.file,
      });
      await page.locator("#certificates-title ~ form").getByLabel("Contraseña").fill(certificate.password);
      await page.locator("#certificates-title ~ form").getByRole("button", { name: "Subir" }).click();
      await expect.poll(() => page.locator("table.certificates tbody th").allTextContents()).toEqual(["12345678-5"]);

      // a CAF of invoices (33) through the page: 20 folios, none used
      const caf33 = generateCaf({ rut: RUT, type: 33, from: 1, to: 20, authorizedOn });
      await page.getByLabel("Archivo CAF (.xml)").setInputFiles({
        name: "caf33.xml",
        mimeType: "text/xml",
        buffer: caf33.file,
      });
      await page.locator("#cafs-title ~ form").getByRole("button", { name: "Subir" }).click();
      const row33 = page.locator("table.cafs tbody tr", { hasText: "CL33" });
      await expect.poll(() => row33.locator("td.used").textContent()).toBe("0");
      expect(await row33.locator("td.left").textContent()).toBe("20");
      expect(await row33.getAttribute("class")).toBeNull();

      // a CAF of credit notes (61) with 19 of its 20 folios used: 1 left (5 %), flagged. Using 19 folios would take
      // 19 documents sent to SII; the fixture moves the CAF's next folio as finalizing them would
      const caf61 = generateCaf({ rut: RUT, type: 61, from: 1, to: 20, authorizedOn });
      const uploaded = await s.graphql(`mutation($file: String) { uploadCaf(input: { file: $file }) { id } }`, {
        file: caf61.file.toString("base64"),
      });
      await s.database.prisma.caf.update({ where: { id: uploaded.body.data.uploadCaf.id }, data: { nextFolio: 20 } });
      await page.reload();
      const row61 = page.locator("table.cafs tbody tr", { hasText: "CL61" });
      await expect.poll(() => row61.locator("td.used").textContent()).toBe("19");
      expect(await row61.locator("td.left").textContent()).toBe("1 por agotarse");
      expect(await row61.getAttribute("class")).toBe("running-out");
      expect(await page.getByLabel("Color de botones y enlaces", { exact: true }).inputValue()).toBe("#8a1c7c");
      await shots(page, "settings");
      expect(violations).toEqual([]);
    },
    SLOW,
  );

  it(
    "is for admins only: a finance member has no link, reads why, and GraphQL refuses it the settings' mutations",
    async () => {
      const { page, ctx, violations } = await signedIn("ana@acme.cl", "Ana Rojas · Finanzas");
      expect(await page.getByRole("link", { name: "Configuración" }).count()).toBe(0);
      await page.goto(`${s.url}/dashboard/#/settings`);
      await expect
        .poll(() => page.getByRole("alert").textContent())
        .toBe("Solo quienes administran la organización ven esta página.");
      for (const [name, query] of [
        [
          "updateOrganizationBranding",
          `mutation { updateOrganizationBranding(input: { colorAsset: "#000000" }) { colorAsset } }`,
        ],
        ["updateTaxProfile", `mutation { updateTaxProfile(input: { city: "Talca" }) { city } }`],
        ["uploadCaf", `mutation { uploadCaf(input: { file: "eA==" }) { id } }`],
      ]) {
        const body = await graphqlAs(ctx, query);
        expect(body.errors?.[0].extensions.code, name).toBe("permission_denied");
      }
      const branding = await s.graphql(`{ organizationBranding { colorAsset } }`);
      expect(branding.body.data.organizationBranding.colorAsset).not.toBe("#000000");
      expect(violations).toEqual([]);
    },
    SLOW,
  );
});
