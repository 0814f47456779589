/**
 * A webhook receiver with the client (docs/clients.md "Webhooks"): `verifyWebhook` checks the signature and gives
 * the message typed by its event type. test/integration/typescript-client.test.ts serves `receive` on a local port,
 * points a test-mode endpoint at it and checks what it says of the service's messages.
 */
import { verifyWebhook, type WebhookEvent } from "../src/index.js";

/** One line about `event`, read through its type: each branch sees its own `data.object`. */
export function describeEvent(event: WebhookEvent): string {
  switch (event.type) {
    case "invoice.finalized": {
      const invoice = event.data.object;
      return `invoice ${invoice.id} finalized: number ${invoice.number}, total ${invoice.total}`;
    }
    case "invoice.paid": {
      const invoice = event.data.object;
      return `invoice ${invoice.id} paid: ${invoice.amount_paid} paid, ${invoice.amount_due} due`;
    }
    case "customer.updated":
      return `customer ${event.data.object.id} updated: ${Object.keys(event.data.previous_attributes).join(", ")}`;
    default:
      return `${event.type}`;
  }
}

/** Verifies a request's raw `body` and `headers` with the endpoint's `secret`; the line describing it. */
export function receive(body: string, headers: Record<string, string | string[] | undefined>, secret: string): string {
  return describeEvent(verifyWebhook(body, headers, secret));
}
