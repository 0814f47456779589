/**
 * Received supplier documents (spec "Swap", issue 6 "Receiving"; docs/sii-receiving.md): the
 * Purchase and Swap node types, `purchases` and `swaps` connections, `receivePurchaseDocuments`
 * and `updateSwap`. Rules: services/swaps.ts and domain/swap-replies.ts.
 */
import { builder } from "../builder.js";
import type { GraphQLContext } from "../context.js";
import { DateTimeFilter, StringFilter, dateTimeConditions, stringConditions } from "../filters.js";
import { offsetArg, tenantConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import { loadSigningCredentials } from "../../services/certificates.js";
import { receivePurchaseDocuments, replyToSwap, swapPdf, type CredentialsLoader } from "../../services/swaps.js";
import { SWAP_REPLY_STATUSES } from "../../domain/swap-replies.js";
import { fileUrl } from "../../services/files.js";

/** The certificate uploaded in the caller's mode (services/certificates.ts), its holder's RUT as RutFirma. */
function credentialsLoader(ctx: GraphQLContext): CredentialsLoader {
  return async (tx, organizationId) => {
    const c = await loadSigningCredentials(tx, { organizationId, testMode: ctx.auth.testMode }, ctx.settings.certificateEncryptionKey, ctx.now());
    return { certificatePem: c.certificatePem, privateKeyPem: c.privateKeyPem, signerRut: c.subjectRut || null };
  };
}


export const Purchase = builder.prismaNode("Purchase", {
  id: { field: "id", description: "`pur_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "A document (DTE) received from a supplier, one of a swap's. Unique per issuer RUT, type and folio.",
  fields: (t) => ({
    documentType: t.exposeInt("documentCode", { description: "SII document type (TipoDTE): 33, 34, 52, 56, 61, ..." }),
    folio: t.exposeInt("folio"),
    issuerTaxId: t.exposeString("issuerTaxId", { description: "the supplier's RUT (RUTEmisor), normal form 97975000-5" }),
    issuerName: t.exposeString("issuerName", { nullable: true, description: "the supplier's name (RznSoc)" }),
    date: t.expose("date", { type: "Date", description: "issue date (FchEmis)" }),
    amount: t.expose("amount", { type: "Decimal", description: "taxable net (MntNeto), whole pesos" }),
    exempt: t.expose("exempt", { type: "Decimal", description: "exempt amount (MntExe)" }),
    tax: t.expose("tax", { type: "Decimal", description: "VAT (IVA)" }),
    total: t.expose("total", { type: "Decimal", description: "MntTotal" }),
    xml: t.exposeString("xml", { description: "the DTE element as received (with its signature)" }),
    swap: t.relation("swap"),
    testMode: t.exposeBoolean("testMode"),
    created: t.expose("createdAt", { type: "DateTime" }),
  }),
});

export const Swap = builder.prismaNode("Swap", {
  id: { field: "id", description: "`swa_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description:
    "An envelope (EnvioDTE) of supplier documents received by the organization, with our answers as files: reception (RecepcionDTE, made on import), " +
    "result (ResultadoDTE) and receipt (EnvioRecibos, ERM only), made when the swap is answered.",
  fields: (t) => ({
    purchases: t.relation("purchases", { query: { orderBy: [{ documentCode: "asc" }, { folio: "asc" }] }, description: "the envelope's documents" }),
    localFile: t.string({ nullable: true, select: { localFile: true }, description: "URL of the received EnvioDTE (authenticated)", resolve: (s, _a, ctx) => fileUrl(ctx.baseUrl, s.localFile) }),
    reception: t.string({ nullable: true, select: { reception: true }, description: "URL of our signed RecepcionDTE", resolve: (s, _a, ctx) => fileUrl(ctx.baseUrl, s.reception) }),
    result: t.string({ nullable: true, select: { result: true }, description: "URL of our signed ResultadoDTE; null until answered", resolve: (s, _a, ctx) => fileUrl(ctx.baseUrl, s.result) }),
    receipt: t.string({ nullable: true, select: { receipt: true }, description: "URL of our signed EnvioRecibos; only for ERM", resolve: (s, _a, ctx) => fileUrl(ctx.baseUrl, s.receipt) }),
    replyTo: t.exposeString("replyTo", { nullable: true, description: "the supplier's exchange e-mail address" }),
    replyBy: t.exposeString("replyBy", { nullable: true, description: "e-mail of the user whose key answered" }),
    replyDate: t.expose("replyDate", { type: "DateTime", nullable: true }),
    status: t.exposeString("status", { nullable: true, description: `the reply: ${Object.entries(SWAP_REPLY_STATUSES).map(([k, v]) => `${k} (${v.text})`).join(", ")}; null until answered` }),
    imported: t.exposeBoolean("imported", { description: "true: the envelope was uploaded through the API (receivePurchaseDocuments)" }),
    testMode: t.exposeBoolean("testMode"),
    created: t.expose("createdAt", { type: "DateTime", description: "when it was received (start of SII's 8-day claim window)" }),
    pdf: t.string({
      description: "Base64 of a PDF listing the swap's documents (rendered on request).",
      select: { id: true },
      resolve: async (swap, _args, ctx) => (await swapPdf(ctx, swap.id)).toString("base64"),
    }),
  }),
});

const SwapWhere = builder.inputType("SwapWhere", {
  fields: (t) => ({
    status: t.field({ type: StringFilter, description: "reply status (ACD, ERM, RCD, RFP, RFT)" }),
    created: t.field({ type: DateTimeFilter }),
    imported: t.boolean(),
  }),
});

const PurchaseWhere = builder.inputType("PurchaseWhere", {
  fields: (t) => ({
    swap: t.field({ type: StringFilter, description: "swap id" }),
    issuerTaxId: t.field({ type: StringFilter, description: "supplier RUT, normal form" }),
    created: t.field({ type: DateTimeFilter }),
  }),
});

const ReceivePurchaseDocumentsInput = builder.inputType("ReceivePurchaseDocumentsInput", {
  description: "An EnvioDTE: exactly one of xml (text) or file (Base64 of the file, keeps SII's ISO-8859-1 bytes).",
  fields: (t) => ({
    xml: t.string(),
    file: t.string({ description: "Base64" }),
    fileName: t.string({ description: "the received file's name (NmbEnvio of the reception); default <swap id>-envio.xml" }),
  }),
});

const SwapUpdateInput = builder.inputType("SwapUpdateInput", {
  fields: (t) => ({
    status: t.string({ description: "ACD, ERM, RCD, RFP or RFT (required)" }),
    replyTo: t.string({ description: "the supplier's exchange e-mail address" }),
  }),
});

builder.queryFields((t) => ({
  swaps: t.connection({
    type: Swap,
    description: "Swaps of the caller's organization and mode, newest first.",
    args: { where: t.arg({ type: SwapWhere }), offset: offsetArg(t) },
    resolve: (_root, args, ctx, info) => {
      const w = args.where ?? {};
      return tenantConnection(ctx, info, ctx.prisma.swap, args, [
        ...stringConditions("status", w.status, { uppercase: true }),
        ...dateTimeConditions("createdAt", w.created),
        ...(w.imported === null || w.imported === undefined ? [] : [{ imported: w.imported }]),
      ]);
    },
  }),
  purchases: t.connection({
    type: Purchase,
    description: "Received documents of the caller's organization and mode, newest first.",
    args: { where: t.arg({ type: PurchaseWhere }), offset: offsetArg(t) },
    resolve: (_root, args, ctx, info) => {
      const w = args.where ?? {};
      return tenantConnection(ctx, info, ctx.prisma.purchase, args, [
        ...stringConditions("swapId", w.swap),
        ...stringConditions("issuerTaxId", w.issuerTaxId, { uppercase: true }),
        ...dateTimeConditions("createdAt", w.created),
      ]);
    },
  }),
}));

builder.mutationFields((t) => ({
  receivePurchaseDocuments: t.prismaField({
    type: "Swap",
    description:
      "Imports a supplier's EnvioDTE: each DTE becomes a purchase, the envelope a swap (imported), the file its local_file, and a signed RecepcionDTE its reception. " +
      "Errors (nothing stored): validation_error on xml (malformed, not valid against EnvioDTE_v10.xsd, a document addressed to another RUT), " +
      "invalid_state (a document already received, no organization RUT or signing certificate).",
    args: { input: t.arg({ type: ReceivePurchaseDocumentsInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const swap = await receivePurchaseDocuments(ctx, args.input, credentialsLoader(ctx));
      return ctx.prisma.swap.findUniqueOrThrow({ ...query, where: { id: swap.id } });
    },
  }),
  updateSwap: t.prismaField({
    type: "Swap",
    description:
      "Answers a swap once: status ACD, ERM, RCD, RFP or RFT and reply_to; records reply_by and reply_date and makes the signed ResultadoDTE (result) and, for ERM, EnvioRecibos (receipt). " +
      "Errors: not_found; validation_error (status, reply_to); invalid_state (already answered, a claim after SII's 8-day window, no signing certificate).",
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: SwapUpdateInput, required: true }) },
    resolve: async (query, _root, args, ctx) => {
      const swap = await replyToSwap(ctx, String(args.id), { status: args.input.status, replyTo: args.input.replyTo }, credentialsLoader(ctx));
      return ctx.prisma.swap.findUniqueOrThrow({ ...query, where: { id: swap.id } });
    },
  }),
}));
