/**
 * What the receiver of a DTE we issued said about it (docs/sii-exchange.md "Inbound"; SII's
 * exchange files, docs/sii-dte.md "Sources"): the document's `taxAgency.receiver_status`. Pure rules.
 *
 * | status                      | from                                   | stage |
 * |-----------------------------|----------------------------------------|-------|
 * | received                    | RecepcionDTE, EstadoRecepDTE 0         | 1     |
 * | reception_rejected          | RecepcionDTE, EstadoRecepDTE 1-99      | 1     |
 * | accepted                    | ResultadoDTE, EstadoDTE 0              | 2     |
 * | accepted_with_discrepancies | ResultadoDTE, EstadoDTE 1              | 2     |
 * | claimed                     | ResultadoDTE, EstadoDTE 2 (rejected)   | 2     |
 * | goods_received              | EnvioRecibos, a Recibo (Ley 19.983)    | 3     |
 *
 * Answers arrive in any order (e-mail): a later answer of an earlier stage never replaces a later
 * stage (a reception arriving after the result keeps the result); one of the same or a later
 * stage does (a corrected result replaces the first).
 */
export const RECEIVER_STATUSES = {
  received: {
    stage: 1,
    description: "the receiver's RecepcionDTE acknowledged the DTE as received (EstadoRecepDTE 0)",
  },
  reception_rejected: {
    stage: 1,
    description:
      "the receiver's RecepcionDTE refused the DTE technically (EstadoRecepDTE 1 signature, 2 issuer RUT, 3 receiver " +
      "RUT, 4 repeated, 99 other); receiver_code has the code",
  },
  accepted: { stage: 2, description: "the receiver's ResultadoDTE accepted the content (EstadoDTE 0)" },
  accepted_with_discrepancies: {
    stage: 2,
    description: "the receiver's ResultadoDTE accepted it with discrepancies (EstadoDTE 1)",
  },
  claimed: {
    stage: 2,
    description: "the receiver's ResultadoDTE rejected (claimed) it (EstadoDTE 2; CodRchDsc in receiver_message)",
  },
  goods_received: {
    stage: 3,
    description: "the receiver signed a Recibo (EnvioRecibos, Ley 19.983): goods or services received",
  },
} as const;

export type ReceiverStatus = keyof typeof RECEIVER_STATUSES;

export function isReceiverStatus(value: unknown): value is ReceiverStatus {
  return typeof value === "string" && Object.hasOwn(RECEIVER_STATUSES, value);
}

/**
 * The status an answer gives one document: `kind` reception (code = EstadoRecepDTE), result
 * (code = EstadoDTE 0, 1, 2) or receipt (no code).
 */
export function receiverStatusOf(kind: "reception" | "result" | "receipt", code: number | null): ReceiverStatus {
  if (kind === "receipt") return "goods_received";
  if (kind === "reception") return code === 0 ? "received" : "reception_rejected";
  return code === 0 ? "accepted" : code === 1 ? "accepted_with_discrepancies" : "claimed";
}

/** The document's status after an answer: `incoming` unless `current` is of a later stage. */
export function nextReceiverStatus(current: unknown, incoming: ReceiverStatus): ReceiverStatus {
  if (!isReceiverStatus(current)) return incoming;
  return RECEIVER_STATUSES[incoming].stage >= RECEIVER_STATUSES[current].stage ? incoming : current;
}
