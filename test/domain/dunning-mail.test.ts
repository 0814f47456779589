/** The dunning e-mail's words (src/domain/dunning-mail.ts), with the module's worked example. */
import { describe, expect, it } from "vitest";
import {
  PORTAL_LINK_PLACEHOLDER,
  dunningMail,
  escapeHtml,
  mailDate,
  mailMoney,
  payLink,
  type DunningMailFacts,
} from "../../src/domain/dunning-mail.js";
import { portalColors } from "../../src/domain/portal.js";

const CLP = { id: "CLP", rounded: true, decimals: 0 };
const USD = { id: "USD", rounded: false, decimals: 2 };

/** The module's worked example: two overdue invoices, a soft decline, a next attempt. */
const example: DunningMailFacts = {
  locale: "es",
  businessName: "Acme",
  customerName: "Ana Pérez",
  currency: CLP,
  invoices: [
    { label: "Factura electrónica 12", dueDate: "2026-11-30", amountDue: "119000" },
    { label: "Factura electrónica 15", dueDate: "2026-12-31", amountDue: "59500" },
  ],
  totalDue: "178500",
  declinedCards: [{ brand: "visa", last4: "0341", failureCode: "insufficient_funds", kind: "soft" }],
  nextAttemptOn: "2027-01-03",
  finalAction: null,
  linkDays: 7,
  colors: portalColors("#102030", "#ffcc00"),
};

describe("the dunning e-mail", () => {
  it("lists the invoices, the total, the soft decline's next try and the link, in Spanish", () => {
    const mail = dunningMail(example);
    expect(mail.subject).toBe("Acme: tienes 2 facturas vencidas por CLP 178.500");
    const lines = mail.text.split("\n");
    expect(lines[0]).toBe("Hola Ana Pérez:");
    expect(lines).toContain("- Factura electrónica 12, vencida el 30-11-2026: CLP 119.000");
    expect(lines).toContain("- Factura electrónica 15, vencida el 31-12-2026: CLP 59.500");
    expect(lines).toContain("Total por pagar: CLP 178.500");
    expect(mail.text).toContain(
      "El cobro a tu tarjeta Visa terminada en 0341 fue rechazado (insufficient_funds). " +
        "Intentaremos cobrar de nuevo tu tarjeta Visa terminada en 0341 el 03-01-2027.",
    );
    expect(lines).toContain("Puedes pagarlas en línea (el enlace funciona 7 días):");
    expect(lines.filter((l) => l === PORTAL_LINK_PLACEHOLDER)).toHaveLength(1);
  });

  it("says a hard-declined card is not tried again, and the final action, in English", () => {
    const mail = dunningMail({
      ...example,
      locale: "en",
      customerName: null,
      invoices: [example.invoices[0]],
      totalDue: "119000",
      declinedCards: [{ brand: "mastercard", last4: "0069", failureCode: "expired_card", kind: "hard" }],
      nextAttemptOn: null,
      finalAction: "cancel_subscriptions",
    });
    expect(mail.subject).toBe("Acme: 1 overdue invoice for CLP 119,000");
    expect(mail.text.split("\n")[0]).toBe("Hello,");
    expect(mail.text).toContain("- Factura electrónica 12, due 2026-11-30: CLP 119,000");
    expect(mail.text).toContain(
      "The charge to your Mastercard card ending in 0069 was declined (expired_card) and we will not try that card " +
        "again: please pay another way with the link.",
    );
    expect(mail.text).toContain("As the invoices are still unpaid, we cancelled the subscriptions they belong to.");
    expect(mail.text).not.toContain("try your");
  });

  it("writes the HTML in the branding's readable colours, escaped, with the link as a button", () => {
    const html = dunningMail({ ...example, businessName: "Acme <Chile> & Cía" }).html;
    expect(html).toContain('<html lang="es">');
    expect(html).toContain("background:#102030;color:#ffffff");
    expect(html).toContain(
      `<a href="${PORTAL_LINK_PLACEHOLDER}" style="display:inline-block;padding:10px 16px;background:#ffcc00;` +
        "color:#111111",
    );
    expect(html).toContain('<h1 style="font-size:20px">Acme &lt;Chile&gt; &amp; Cía</h1>');
    expect(html).not.toContain("<Chile>");
    expect(html).toContain('<td style="padding:4px 8px;text-align:right">CLP 119.000</td>');
  });

  it("formats dates and amounts per language", () => {
    expect(mailDate("2026-11-30", "es")).toBe("30-11-2026");
    expect(mailDate("2026-11-30", "en")).toBe("2026-11-30");
    expect(mailMoney("1234.5", USD, "es")).toBe("USD 1.234,50");
    expect(mailMoney("1234.5", USD, "en")).toBe("USD 1,234.50");
    expect(mailMoney("1234567", CLP, "en")).toBe("CLP 1,234,567");
    expect(escapeHtml(`"a" & 'b'`)).toBe("&quot;a&quot; &amp; &#39;b&#39;");
  });

  it("links one invoice to its payment page and several to the list of them", () => {
    expect(payLink("https://b.example/portal/cs_x", ["inv_a"])).toBe("https://b.example/portal/cs_x#/invoice/inv_a");
    expect(payLink("https://b.example/portal/cs_x", ["inv_a", "inv_b"])).toBe(
      "https://b.example/portal/cs_x#/pay/inv_a,inv_b",
    );
  });
});
