/** Builds the GraphQL schema from every type module (one file per resource under ./types). */
import { builder } from "./builder.js";
import { guardInputs } from "./input-guard.js";
import { planNodesOncePerField } from "./node-plans.js";
import { syncNodeIds } from "./sync-fields.js";
import "./enums.js";
import "./types/reference.js";
import "./types/customer.js";
import "./types/payment.js";
import "./types/payment-charge.js";
import "./types/invoice.js";
import "./types/order.js";
import "./types/credit-note.js";
import "./types/customer-session.js";
import "./types/reminder.js";
// catalogue (docs/catalogue.md)
import "./types/product.js";
import "./types/addon.js";
import "./types/coupon.js";
import "./types/usage.js";
// subscriptions (docs/subscriptions.md)
import "./types/subscription.js";
import "./types/upcoming-invoice.js";
import "./types/test-clock.js";
// Chile's SII (docs/sii-setup.md)
import "./types/sii.js";
// receiving (docs/sii-receiving.md)
import "./types/swap.js";
import "./types/sii-exchange.js";
// the customer portal (docs/customer-portal.md)
import "./types/portal.js";
// events and webhooks (docs/webhooks.md)
import "./types/event.js";
import "./types/webhook-endpoint.js";
// dunning (docs/dunning.md)
import "./types/dunning-campaign.js";
import "./types/dunning-attempt.js";
// the dashboard's members (docs/dashboard.md)
import "./types/member.js";
import "./types/revenue-analytics.js";
import "./types/api-key.js";

/**
 * Every field with arguments checks them first (input-guard.ts: text, ids, JSON values); Node ids resolve without
 * a promise (sync-fields.ts). The roots are Query, Mutation and SubscriptionRoot (builder.ts): the billing type
 * `Subscription` is a Node, not the subscription root (docs/graphql.md "Ids and the schema's roots"). The ids of a
 * `nodes(ids:)` share one query plan per type (node-plans.ts).
 */
planNodesOncePerField();
export const schema = guardInputs(syncNodeIds(builder.toSchema({ sortSchema: true })));
