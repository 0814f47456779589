/**
 * The bare baseline of `npm run bench:http` (bench/http.ts, docs/performance.md): what this stack
 * (Node's `node:http` + `pg` on the same PostgreSQL) does without the service's layers, serving
 * the SAME JSON as the service. bench/http.ts asserts the bodies equal at start, so a schema change
 * that changes the service's JSON fails the bench until this file follows it.
 *
 * An honest baseline (issue 37): it uses every trick the service uses and no more
 * (bench/baseline-server.mjs): the API key cache with the service's lifetime (30 s; unknown and
 * revoked keys never cached, expiry checked per request), named prepared statements, and the
 * headers the service's answers carry (security headers, CSP, Vary, X-Request-Id).
 *
 * Each request: the API key (from the cache, else read by the hex SHA-256 of the bearer token from
 * the service's `ApiKey` table, revoked and expired keys refused), then one named prepared statement
 * that builds the whole JSON with json_build_object/json_agg, numbers printed as the service prints
 * them (trim_scale: no trailing zeros); only PostgreSQL's spacing in the JSON text differs:
 * - GET /v1/invoices/{id}/: the invoice as the REST adapter prints it (src/rest/printer.ts with the
 *   InvoiceFields fragment of src/rest/operations/fragments.graphql): its succeeded payments, and
 *   `amount_paid`, `amount_due` and `payment_status` computed as src/services/invoice-balances.ts
 *   and src/domain/payments.ts (invoiceAmountDue, invoicePaymentStatus) do, `marked_uncollectible_at`,
 *   `tax_agency`;
 * - POST /graphql: the page of 50 invoices of bench/http-paths.ts INVOICES_QUERY (whatever the query
 *   text: the baseline serves that one page), newest first, succeeded payments, as `{"data": ...}`;
 * - POST /v1/usages/: a raw INSERT ... RETURNING of one usage record (no validation beyond the
 *   subscription line belonging to the key's organization), as the REST adapter prints it;
 * - GET /healthz.
 * Configured by DATABASE_URL, PORT and HOST (and API_KEY_CACHE_TTL_SECONDS), as the service.
 */
import { iso, newId, prepared, readBody, send, serveBaseline } from "./baseline-server.mjs";

/** `yyyy-mm-dd hh:mm:ss` in UTC, as the REST adapter prints invoice, customer and payment timestamps. */
const plain = (col) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')`;

const INVOICE = `
SELECT json_build_object(
  'id', i.id,
  'customer', json_build_object('id', c.id, 'name', c.name, 'address', c.address, 'state', c."stateCode", 'country',
  c."countryId",
    'phone', c.phone, 'email', c.email, 'website', c.website, 'tax_settings', c."taxSettings", 'metadata', c.metadata,
    'created', ${plain('c."createdAt"')}, 'updated', ${plain('c."updatedAt"')}),
  'document', json_build_object('id', d.id, 'name', d.name, 'country', d."countryId", 'currency', i."currencyId"),
  'number', i.number,
  'numbering', i.numbering,
  'test_mode', i."testMode",
  'date', to_char(i.date, 'YYYY-MM-DD'),
  'due_date', to_char(i."dueDate", 'YYYY-MM-DD'),
  'lines', (SELECT coalesce(json_agg(json_build_object('id', l.id, 'name', l.name, 'description', l.description,
      'quantity', trim_scale(l.quantity), 'amount', trim_scale(l.amount), 'discount', trim_scale(l.discount),
      'discount_scheme', l."discountScheme", 'exempt', l.exempt, 'total', trim_scale(l.total))
      ORDER BY l.position, l.id), '[]')
    FROM "InvoiceLine" l WHERE l."invoiceId" = i.id),
  'collection_method', i."collectionMethod",
  'payments', (SELECT coalesce(json_agg(json_build_object('id', p.id, 'date', to_char(p.date, 'YYYY-MM-DD'),
  'amount', trim_scale(p.amount), 'currency', p."currencyId",
      'description', p.description, 'source', NULL, 'payment_date', ${plain('p."paymentDate"')}, 'customer',
      p."customerId", 'invoice', p."invoiceId",
      'status', p.status, 'return_url', NULL, 'failure_reason', p."failureReason", 'metadata', p.metadata,
      'created', ${plain('p."createdAt"')}, 'updated', ${plain('p."updatedAt"')}) ORDER BY p."createdAt", p.id), '[]')
    FROM "Payment" p WHERE p."invoiceId" = i.id AND p.status = 'succeeded'),
  'amount', trim_scale(i.amount), 'exempt', trim_scale(i.exempt), 'tax', trim_scale(i.tax),
  'tax_percent', trim_scale(i."taxPercent"), 'subtotal', trim_scale(i.subtotal),
  'discount', trim_scale(i.discount),
  'discount_scheme', i."discountScheme", 'total', trim_scale(i.total),
  'amount_paid', trim_scale(b.paid), 'amount_due', trim_scale(b.due),
  'payment_status', CASE WHEN i.status = 'draft' THEN 'unpaid' WHEN b.due <= 0 THEN 'paid'
    WHEN i."markedUncollectibleAt" IS NOT NULL THEN 'uncollectible' WHEN b.paid > 0 THEN 'partially_paid'
    ELSE 'unpaid' END,
  'marked_uncollectible_at', ${plain('i."markedUncollectibleAt"')},
  'period_start', to_char(i."periodStart", 'YYYY-MM-DD'), 'period_end', to_char(i."periodEnd", 'YYYY-MM-DD'),
  'local_file', i."localFile", 'note', i.note, 'fiscal_settings', i."fiscalSettings", 'tax_agency', i."taxAgency",
  'status', i.status,
  'metadata', i.metadata,
  'user', i."userEmail", 'created', ${plain('i."createdAt"')}, 'updated', ${plain('i."updatedAt"')}
)::text AS json
FROM "Invoice" i JOIN "Customer" c ON c.id = i."customerId" JOIN "DocumentType" d ON d.id = i."documentTypeId"
-- what is paid and due (src/services/invoice-balances.ts invoiceBalances; a draft has nothing paid, draftBalance)
LEFT JOIN LATERAL (
  SELECT SUM(n.total) FILTER (WHERE t."isCreditNote") AS credited, SUM(n.total) FILTER (WHERE NOT t."isCreditNote")
  AS debited
  FROM "CreditNote" n JOIN "DocumentType" t ON t.id = n."documentTypeId"
  WHERE n."invoiceId" = i.id AND n.status = 'finalized' AND i.status <> 'draft'
) cn ON true
LEFT JOIN LATERAL (
  SELECT SUM(pay.amount) AS paid FROM "Payment" pay
  WHERE pay."invoiceId" = i.id AND pay.status = 'succeeded' AND i.status <> 'draft'
) pd ON true
-- domain/payments.ts invoiceAmountDue: max(0, total + debited - credited - paid)
CROSS JOIN LATERAL (
  SELECT coalesce(pd.paid, 0) AS paid,
    greatest(i.total + coalesce(cn.debited, 0) - coalesce(cn.credited, 0) - coalesce(pd.paid, 0), 0) AS due
) b
WHERE i.id = $1 AND i."organizationId" = $2 AND i."testMode" = $3`;

// the GraphQL page: numbers as the Decimal scalar prints them (strings), dates as the Date scalar
const PAGE = `
SELECT json_build_object('data', json_build_object('invoices', json_build_object('edges',
coalesce(json_agg(json_build_object('node', json_build_object(
  'id', i.id, 'number', i.number, 'date', to_char(i.date, 'YYYY-MM-DD'), 'total', trim_scale(i.total)::text,
  'customer', json_build_object('id', c.id, 'name', c.name, 'country', CASE WHEN co.id IS NULL THEN NULL
  ELSE json_build_object('id', co.id, 'name', co.name) END),
  'lines', (SELECT coalesce(json_agg(json_build_object('id', l.id, 'name', l.name, 'quantity',
  trim_scale(l.quantity)::text, 'amount', trim_scale(l.amount)::text, 'total', trim_scale(l.total)::text)
  ORDER BY l.position, l.id), '[]')
    FROM "InvoiceLine" l WHERE l."invoiceId" = i.id),
  'payments', (SELECT coalesce(json_agg(json_build_object('id', p.id, 'amount', trim_scale(p.amount)::text,
  'status', p.status) ORDER BY p."createdAt", p.id), '[]')
    FROM "Payment" p WHERE p."invoiceId" = i.id AND p.status = 'succeeded')
)) ORDER BY i."createdAt" DESC, i.id DESC), '[]'))))::text AS json
FROM (SELECT * FROM "Invoice" WHERE "organizationId" = $1 AND "testMode" = $2 ORDER BY "createdAt" DESC, id DESC
LIMIT 50) i
JOIN "Customer" c ON c.id = i."customerId" LEFT JOIN "Country" co ON co.id = c."countryId"`;

const USAGE = `
WITH line AS (
  SELECT sl.id FROM "SubscriptionLine" sl JOIN "Subscription" s ON s.id = sl."subscriptionId"
  WHERE sl.id = $2 AND s."organizationId" = $5 AND s."testMode" = $6
), inserted AS (
  INSERT INTO "Usage" (id, "organizationId", "testMode", "subscriptionLineId", quantity, "dateTime")
  SELECT $1, $5, $6, line.id, $3::numeric, coalesce($4::timestamptz, now()) FROM line
  RETURNING *
)
SELECT json_build_object('id', u.id, 'subscription_line', u."subscriptionLineId", 'quantity', trim_scale(u.quantity),
'date_time', ${iso('u."dateTime"')},
  'invoice', u."invoiceId", 'created', ${iso('u."createdAt"')})::text AS json FROM inserted u`;

const readInvoice = prepared("baseline_invoice", INVOICE);
const readPage = prepared("baseline_page", PAGE);
const insertUsage = prepared("baseline_usage", USAGE);

const notFound = JSON.stringify({ error: { code: "not_found", message: "not found" } });

serveBaseline(async (req, res, key, url) => {
  const invoice = /^\/v1\/invoices\/([^/]+)\/?$/.exec(url);
  if (req.method === "GET" && invoice) {
    const row = (await readInvoice([invoice[1], key.org, key.test])).rows[0];
    return row ? send(res, 200, row.json) : send(res, 404, notFound);
  }
  if (req.method === "POST" && url === "/graphql") {
    await readBody(req);
    const row = (await readPage([key.org, key.test])).rows[0];
    return send(res, 200, row.json);
  }
  if (req.method === "POST" && /^\/v1\/usages\/?$/.test(url)) {
    const body = JSON.parse(await readBody(req));
    const row = (
      await insertUsage([
        newId("usa"),
        body.subscription_line,
        String(body.quantity),
        body.date_time ?? null,
        key.org,
        key.test,
      ])
    ).rows[0];
    return row
      ? send(res, 201, row.json)
      : send(res, 400, '{"error":{"code":"validation_error","fields":{"subscription_line":"not found"}}}');
  }
  return send(res, 404, notFound);
});
