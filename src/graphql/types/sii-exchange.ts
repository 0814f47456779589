/**
 * The DTE exchange with receivers (docs/sii-exchange.md): `recordReceiverAnswer` takes a
 * receiver's RecepcionDTE, ResultadoDTE or EnvioRecibos, and `receiverStatus` on invoices, orders
 * and credit notes shows what the receiver said. Rules: services/sii-exchange.ts and
 * domain/receiver-status.ts.
 */
import { builder } from "../builder.js";
import { DocumentKind, type DescribedValues } from "../enums.js";
import { fileUrl } from "../../services/files.js";
import { recordReceiverAnswer, type RecordedAnswer, type RecordedReceiverAnswer } from "../../services/sii-exchange.js";
import { RECEIVER_STATUSES, isReceiverStatus, type ReceiverStatus } from "../../domain/receiver-status.js";

export const DteReceiverStatus = builder.enumType("DteReceiverStatus", {
  description:
    "What the receiver of a DTE said about it in SII's exchange (its answers, recordReceiverAnswer; " +
    "docs/sii-exchange.md). REST: tax_agency.receiver_status.",
  values: Object.fromEntries(
    Object.entries(RECEIVER_STATUSES).map(([value, rule]) => [value, { value, description: rule.description }]),
  ) as DescribedValues<ReceiverStatus>,
});

const ReceiverAnswerKind = builder.enumType("ReceiverAnswerKind", {
  description: "Which of SII's exchange files a receiver's answer is.",
  values: {
    reception: {
      value: "reception",
      description: "RespuestaDTE with RecepcionEnvio (RecepcionDTE per document): the technical receipt",
    },
    result: {
      value: "result",
      description: "RespuestaDTE with ResultadoDTE per document: the commercial acceptance or claim",
    },
    receipt: {
      value: "receipt",
      description: "EnvioRecibos: signed Recibos (Ley 19.983), receipt of goods or services",
    },
  },
});

const ReceiverAnswerDocument = builder.objectRef<RecordedAnswer>("ReceiverAnswerDocument").implement({
  description: "A document of ours a receiver's answer was recorded on.",
  fields: (t) => ({
    kind: t.field({ type: DocumentKind, description: "which kind of document it is", resolve: (d) => d.documentKind }),
    document: t.id({
      description: "the document's id (inv_, ord_, cre_)",
      deprecationReason: "use issuedDocument, the document itself",
      resolve: (d) => d.documentId,
    }),
    issuedDocument: t.node({
      description:
        "the document itself: an Invoice, Order or CreditNote (select its fields with `... on Invoice { ... }`); " +
        "null when it can no longer be read",
      id: (d) => d.documentId,
    }),
    documentType: t.int({ description: "SII document type (TipoDTE)", resolve: (d) => d.type }),
    folio: t.int({ description: "the DTE's folio", resolve: (d) => d.folio }),
    receiverStatus: t.field({
      type: DteReceiverStatus,
      description:
        "the document's receiver status after this answer (an answer of an earlier stage does not replace a later one)",
      resolve: (d) => d.receiverStatus,
    }),
  }),
});

const ReceiverAnswer = builder.objectRef<RecordedReceiverAnswer>("ReceiverAnswer").implement({
  description: "A receiver's answer, recorded.",
  fields: (t) => ({
    kind: t.field({ type: ReceiverAnswerKind, description: "which exchange file it was", resolve: (a) => a.kind }),
    file: t.string({
      description: "URL of the stored answer file (authenticated)",
      resolve: (a, _args, ctx) => fileUrl(ctx.baseUrl, a.file),
    }),
    documents: t.field({
      type: [ReceiverAnswerDocument],
      description: "the documents it answered",
      resolve: (a) => a.documents,
    }),
  }),
});

const ReceiverAnswerInput = builder.inputType("ReceiverAnswerInput", {
  description:
    "A receiver's answer file: exactly one of xml (text) or file (Base64 of the file, keeps SII's ISO-8859-1 bytes).",
  fields: (t) => ({
    xml: t.string({ description: "the RespuestaDTE or EnvioRecibos XML as text" }),
    file: t.string({ description: "the file in Base64" }),
  }),
});

builder.mutationFields((t) => ({
  recordReceiverAnswer: t.field({
    type: ReceiverAnswer,
    description:
      "Records a receiver's answer to DTEs the organization issued in the caller's mode (RecepcionDTE, ResultadoDTE " +
      "or EnvioRecibos, SII's exchange files), " +
      "validated against SII's schemas and with every signature verified, as the documents' receiver status. " +
      "Errors (nothing written): validation_error on xml (malformed, schema, a signature that does not verify, " +
      "addressed to another RUT, " +
      "a document not issued by the organization in this mode or not matching it, named by type and folio) or file " +
      "(not Base64); invalid_state (no organization RUT).",
    args: { input: t.arg({ type: ReceiverAnswerInput, required: true, description: "the answer file" }) },
    resolve: (_root, args, ctx) => recordReceiverAnswer(ctx, args.input),
  }),
}));

/** `receiverStatus` of a document whose taxAgency JSON holds `receiver_status`. */
function receiverStatusOf(taxAgency: unknown): ReceiverStatus | null {
  const value =
    taxAgency && typeof taxAgency === "object" ? (taxAgency as Record<string, unknown>).receiver_status : null;
  return isReceiverStatus(value) ? value : null;
}

const RECEIVER_STATUS_FIELD =
  "What the DTE's receiver said in SII's exchange (its last answer of the latest stage); null until an answer is " +
  "recorded (docs/sii-exchange.md).";
for (const model of ["Invoice", "Order", "CreditNote"] as const) {
  builder.prismaObjectField(model, "receiverStatus", (t) =>
    t.field({
      type: DteReceiverStatus,
      nullable: true,
      description: RECEIVER_STATUS_FIELD,
      select: { taxAgency: true },
      resolve: (doc) => receiverStatusOf(doc.taxAgency),
    }),
  );
}
