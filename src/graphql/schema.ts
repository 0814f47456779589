/** Builds the GraphQL schema from every type module (one file per resource under ./types). */
import { builder } from "./builder.js";
import "./types/reference.js";
import "./types/customer.js";
import "./types/payment.js";
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
// Chile's SII (docs/sii-setup.md)
import "./types/sii.js";

export const schema = builder.toSchema({ sortSchema: true });
