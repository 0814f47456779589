/**
 * Received supplier documents (spec "Swap"; docs/sii-receiving.md): the
 * Purchase and Swap node types, `purchases` and `swaps` connections, `receivePurchaseDocuments`
 * and `updateSwap`. Rules: services/swaps.ts and domain/swap-replies.ts.
 */
import { builder } from "../builder.js";
import type { DescribedValues } from "../enums.js";
import type { GraphQLContext } from "../context.js";
import {
  DateTimeFilter,
  StringFilter,
  dateTimeConditions,
  enumConditions,
  enumFilter,
  stringConditions,
} from "../filters.js";
import { offsetArg, tenantConnection } from "../pagination.js";
import { tenant } from "../../services/context.js";
import { loadSigningCredentials } from "../../services/certificates.js";
import {
  proposedReply,
  receivePurchaseDocuments,
  replyToSwap,
  swapPdf,
  type CredentialsLoader,
} from "../../services/swaps.js";
import {
  CLAIM_WINDOW_DAYS,
  SWAP_REPLY_STATUSES,
  type SwapReplyStatus as SwapReplyStatusValue,
} from "../../domain/swap-replies.js";
import { fileUrl } from "../../services/files.js";

/** The certificate uploaded in the caller's mode (services/certificates.ts), its holder's RUT as RutFirma. */
function credentialsLoader(ctx: GraphQLContext): CredentialsLoader {
  return async (tx, organizationId) => {
    const c = await loadSigningCredentials(
      tx,
      { organizationId, testMode: ctx.auth.testMode },
      ctx.settings.certificateEncryptionKey,
      ctx.now(),
    );
    return { certificatePem: c.certificatePem, privateKeyPem: c.privateKeyPem, signerRut: c.subjectRut || null };
  };
}

/** The reply statuses with SII's wording, from the domain's table (domain/swap-replies.ts). */
const SWAP_REPLY_VALUES = Object.fromEntries(
  Object.entries(SWAP_REPLY_STATUSES).map(([status, rule]) => [
    status,
    {
      value: status,
      description:
        `${rule.text}: ${
          rule.kind === "acceptance"
            ? "accepts the documents"
            : `a claim, within ${CLAIM_WINDOW_DAYS}` + ` days of the reception`
        }; ResultadoDTE EstadoDTE ${rule.resultStatus}` + (status === "ERM" ? ", plus an EnvioRecibos (receipt)" : ""),
    },
  ]),
) as DescribedValues<SwapReplyStatusValue>;

export const SwapReplyStatus = builder.enumType("SwapReplyStatus", {
  description:
    "Our answer to a supplier's documents (SII's receiver events; docs/sii-receiving.md). The spec's strings, " +
    "upper case.",
  values: SWAP_REPLY_VALUES,
});

export const SwapReplyStatusFilter = enumFilter(SwapReplyStatus, "SwapReplyStatus");

export const Purchase = builder.prismaNode("Purchase", {
  id: { field: "id", description: "`pur_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description: "A document (DTE) received from a supplier, one of a swap's. Unique per issuer RUT, type and folio.",
  fields: (t) => ({
    documentType: t.exposeInt("documentCode", { description: "SII document type (TipoDTE): 33, 34, 52, 56, 61, ..." }),
    folio: t.exposeInt("folio", { description: "the supplier's document number (Folio)" }),
    issuerTaxId: t.exposeString("issuerTaxId", {
      description: "the supplier's RUT (RUTEmisor), normal form 97975000-5",
    }),
    issuerName: t.exposeString("issuerName", {
      nullable: true,
      description: "the supplier's name (RznSoc); null when the DTE gives none",
    }),
    date: t.expose("date", { type: "Date", description: "issue date (FchEmis)" }),
    amount: t.expose("amount", { type: "Decimal", description: "taxable net (MntNeto), whole pesos" }),
    exempt: t.expose("exempt", { type: "Decimal", description: "exempt amount (MntExe), whole pesos" }),
    tax: t.expose("tax", { type: "Decimal", description: "VAT (IVA), whole pesos" }),
    total: t.expose("total", { type: "Decimal", description: "total (MntTotal), whole pesos" }),
    xml: t.exposeString("xml", { description: "the DTE element as received (with its signature)" }),
    signatureValid: t.exposeBoolean("signatureValid", {
      nullable: true,
      description:
        "true: the issuer's XMLDSig signature over the Documento verified on import with the certificate in its " +
        "KeyInfo; false: it does not verify; null: imported before verification existed",
    }),
    tedValid: t.exposeBoolean("tedValid", {
      nullable: true,
      description:
        "true: the timbre (TED) verified on import: FRMT (SHA1withRSA) over the flattened DD with the CAF's public " +
        "key (DD/CAF/DA/RSAPK), the DD matching the document and the CAF covering its folio; null: imported before " +
        "verification existed",
    }),
    verificationReason: t.exposeString("verificationError", {
      nullable: true,
      description: "why the signature or the TED did not verify; null when both did (or before verification existed)",
    }),
    swap: t.relation("swap", { description: "the envelope it came in" }),
    testMode: t.exposeBoolean("testMode", { description: "true: received in test mode" }),
    created: t.expose("createdAt", { type: "DateTime", description: "when it was received, ISO 8601" }),
  }),
});

export const Swap = builder.prismaNode("Swap", {
  id: { field: "id", description: "`swa_` id" },
  findUnique: (id, ctx) => ({ id, ...tenant(ctx) }),
  nullable: true,
  description:
    "An envelope (EnvioDTE) of supplier documents received by the organization, with our answers as files: reception " +
    "(RecepcionDTE, made on import), " +
    "result (ResultadoDTE) and receipt (EnvioRecibos, ERM only), made when the swap is answered.",
  fields: (t) => ({
    purchases: t.relation("purchases", {
      query: { orderBy: [{ documentCode: "asc" }, { folio: "asc" }, { issuerTaxId: "asc" }, { id: "asc" }] },
      description: "the envelope's documents, by SII document type and folio",
    }),
    replyTo: t.exposeString("replyTo", {
      nullable: true,
      description: "the supplier's exchange e-mail address; null until answered, or when the answer gave none",
    }),
    replyBy: t.exposeString("replyBy", {
      nullable: true,
      description: "e-mail of the user whose key answered; null until answered",
    }),
    replyDate: t.expose("replyDate", {
      type: "DateTime",
      nullable: true,
      description: "when it was answered, ISO 8601; null until answered",
    }),
    status: t.field({
      type: SwapReplyStatus,
      nullable: true,
      description: "the reply; null until answered",
      select: { status: true },
      resolve: (swap) => swap.status as SwapReplyStatusValue | null,
    }),
    imported: t.exposeBoolean("imported", {
      description: "true: the envelope was uploaded through the API (receivePurchaseDocuments)",
    }),
    testMode: t.exposeBoolean("testMode", { description: "true: received in test mode" }),
    created: t.expose("createdAt", {
      type: "DateTime",
      description: "when it was received (start of SII's 8-day claim window)",
    }),
    proposedStatus: t.field({
      type: SwapReplyStatus,
      nullable: true,
      description:
        "The reply the service proposes from the documents' verification: RCD when a document's signature or timbre " +
        "did not verify, ACD when all did, null for swaps imported before verification. A proposal only: the swap is " +
        "answered with updateSwap.",
      select: {
        purchases: {
          select: { documentCode: true, folio: true, issuerTaxId: true, signatureValid: true, tedValid: true },
        },
      },
      resolve: (swap) => proposedReply(swap.purchases).status,
    }),
    proposedReason: t.string({
      description:
        "Why proposedStatus is what it is: the documents whose signature or timbre did not verify, or that all did.",
      select: {
        purchases: {
          select: { documentCode: true, folio: true, issuerTaxId: true, signatureValid: true, tedValid: true },
        },
      },
      resolve: (swap) => proposedReply(swap.purchases).reason,
    }),
    pdf: t.string({
      description: "Base64 of a PDF listing the swap's documents (rendered on request).",
      select: { id: true },
      resolve: async (swap, _args, ctx) => (await swapPdf(ctx, swap.id)).toString("base64"),
    }),
  }),
});

// its files: the envelope received and our answers
builder.prismaObjectFields("Swap", (t) => ({
  localFile: t.string({
    nullable: true,
    select: { localFile: true },
    description: "URL of the received EnvioDTE (authenticated); null when none is stored",
    resolve: (s, _a, ctx) => fileUrl(ctx.baseUrl, s.localFile),
  }),
  reception: t.string({
    nullable: true,
    select: { reception: true },
    description: "URL of our signed RecepcionDTE; null when none is stored",
    resolve: (s, _a, ctx) => fileUrl(ctx.baseUrl, s.reception),
  }),
  result: t.string({
    nullable: true,
    select: { result: true },
    description: "URL of our signed ResultadoDTE; null until answered",
    resolve: (s, _a, ctx) => fileUrl(ctx.baseUrl, s.result),
  }),
  receipt: t.string({
    nullable: true,
    select: { receipt: true },
    description: "URL of our signed EnvioRecibos; only for ERM, null otherwise",
    resolve: (s, _a, ctx) => fileUrl(ctx.baseUrl, s.receipt),
  }),
}));

const SwapWhere = builder.inputType("SwapWhere", {
  description: "Filter of `swaps`; every given field must match.",
  fields: (t) => ({
    status: t.field({
      type: SwapReplyStatusFilter,
      description: "reply status (unanswered swaps have none and never match)",
    }),
    created: t.field({ type: DateTimeFilter, description: "when it was received" }),
    imported: t.boolean({ description: "true: uploaded through the API; false: received by e-mail" }),
  }),
});

const PurchaseWhere = builder.inputType("PurchaseWhere", {
  description: "Filter of `purchases`; every given field must match.",
  fields: (t) => ({
    swap: t.field({ type: StringFilter, description: "`swa_` id of the swap" }),
    issuerTaxId: t.field({
      type: StringFilter,
      description: "supplier RUT, normal form 97975000-5 (case-insensitive check digit)",
    }),
    created: t.field({ type: DateTimeFilter, description: "when it was received" }),
  }),
});

const ReceivePurchaseDocumentsInput = builder.inputType("ReceivePurchaseDocumentsInput", {
  description: "An EnvioDTE: exactly one of xml (text) or file (Base64 of the file, keeps SII's ISO-8859-1 bytes).",
  fields: (t) => ({
    xml: t.string({ description: "the EnvioDTE XML as text" }),
    file: t.string({ description: "the EnvioDTE file in Base64 (keeps its ISO-8859-1 bytes)" }),
    fileName: t.string({
      description: "the received file's name (NmbEnvio of the reception); default <swap id>-envio.xml",
    }),
  }),
});

const SwapUpdateInput = builder.inputType("SwapUpdateInput", {
  description: "The answer to a swap (once; final).",
  fields: (t) => ({
    status: t.field({ type: SwapReplyStatus, description: "the reply (required)" }),
    replyTo: t.string({ description: "the supplier's exchange e-mail address" }),
  }),
});

builder.queryFields((t) => ({
  swaps: t.connection(
    {
      type: Swap,
      description: "Swaps of the caller's organization and mode, newest first.",
      args: { where: t.arg({ type: SwapWhere, description: "filter; all swaps when absent" }), offset: offsetArg(t) },
      resolve: (_root, args, ctx, info) => {
        const w = args.where ?? {};
        return tenantConnection(ctx, info, ctx.prisma.swap, args, [
          ...enumConditions("status", w.status),
          ...dateTimeConditions("createdAt", w.created),
          ...(w.imported === null || w.imported === undefined ? [] : [{ imported: w.imported }]),
        ]);
      },
    },
    { description: "A page of swaps, newest first." },
    { description: "A swap in a page of swaps." },
  ),
  purchases: t.connection(
    {
      type: Purchase,
      description: "Received documents of the caller's organization and mode, newest first.",
      args: {
        where: t.arg({ type: PurchaseWhere, description: "filter; all received documents when absent" }),
        offset: offsetArg(t),
      },
      resolve: (_root, args, ctx, info) => {
        const w = args.where ?? {};
        return tenantConnection(ctx, info, ctx.prisma.purchase, args, [
          ...stringConditions("swapId", w.swap),
          ...stringConditions("issuerTaxId", w.issuerTaxId, { uppercase: true }),
          ...dateTimeConditions("createdAt", w.created),
        ]);
      },
    },
    { description: "A page of received documents, newest first." },
    { description: "A received document in a page of received documents." },
  ),
}));

builder.mutationFields((t) => ({
  receivePurchaseDocuments: t.prismaField({
    type: "Swap",
    description:
      "Imports a supplier's EnvioDTE: each DTE becomes a purchase, the envelope a swap (imported), the file its " +
      "local_file, and a signed RecepcionDTE its reception. " +
      "Errors (nothing stored): validation_error on xml (malformed, not valid against EnvioDTE_v10.xsd, a document " +
      "addressed to another RUT), " +
      "invalid_state (a document already received, no organization RUT or signing certificate).",
    args: {
      input: t.arg({
        type: ReceivePurchaseDocumentsInput,
        required: true,
        description: "the EnvioDTE, as xml or file",
      }),
    },
    resolve: async (query, _root, args, ctx) => {
      const swap = await receivePurchaseDocuments(ctx, args.input, credentialsLoader(ctx));
      return ctx.prisma.swap.findUniqueOrThrow({ ...query, where: { id: swap.id } });
    },
  }),
  updateSwap: t.prismaField({
    type: "Swap",
    description:
      "Answers a swap once: status ACD, ERM, RCD, RFP or RFT and reply_to; records reply_by and reply_date and makes " +
      "the signed ResultadoDTE (result) and, for ERM, EnvioRecibos (receipt). " +
      "Errors: not_found; validation_error (status, reply_to); invalid_state (already answered, a claim after SII's " +
      "8-day window, no signing certificate).",
    args: {
      id: t.arg.id({ required: true, description: "`swa_` id" }),
      input: t.arg({ type: SwapUpdateInput, required: true, description: "the reply" }),
    },
    resolve: async (query, _root, args, ctx) => {
      const swap = await replyToSwap(
        ctx,
        String(args.id),
        { status: args.input.status, replyTo: args.input.replyTo },
        credentialsLoader(ctx),
      );
      return ctx.prisma.swap.findUniqueOrThrow({ ...query, where: { id: swap.id } });
    },
  }),
}));
