/**
 * Reading a receiver's answers (src/infra/taxagency/sii/receiver-answers.ts): the files our own
 * builders make (responses.ts) are read back with their documents; a Recibo changed after signing
 * is refused naming the signature.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { buildEnvioRecibos, buildRecepcionDte, buildResultadoDte } from "../../src/infra/taxagency/sii/index.js";
import { readReceiverAnswer } from "../../src/infra/taxagency/sii/receiver-answers.js";
import { generateCertificate, type FakeCertificate } from "../helpers/sii-fixtures.js";

let cert: FakeCertificate;
beforeAll(() => {
  cert = generateCertificate("Receptor");
});
const header = { responderRut: "77777777-7", recipientRut: "76042235-5", signedAt: "2026-11-23T10:00:00" };
const doc = {
  type: 33,
  folio: 12,
  issueDate: "2026-11-20",
  issuerRut: "76042235-5",
  receiverRut: "77777777-7",
  total: "119000",
};
const read = {
  type: 33,
  folio: 12,
  issueDate: "2026-11-20",
  issuerRut: "76042235-5",
  receiverRut: "77777777-7",
  total: "119000",
};

describe("readReceiverAnswer", () => {
  it("a RecepcionDTE", async () => {
    const file = buildRecepcionDte(
      {
        header,
        responseId: 1,
        fileName: "x.xml",
        receivedAt: "2026-11-23T09:00:00",
        envelopeCode: 1,
        envelopeId: "SetDoc",
        envelopeIssuerRut: "76042235-5",
        envelopeReceiverRut: "77777777-7",
        status: 0,
        statusText: "ok",
        documents: [{ ...doc, status: 3, statusText: "RUT receptor" }],
      },
      cert,
    ).file;
    expect(await readReceiverAnswer(file)).toEqual({
      kind: "reception",
      responderRut: "77777777-7",
      recipientRut: "76042235-5",
      documents: [{ ...read, code: 3, text: "RUT receptor" }],
    });
  });

  it("a ResultadoDTE with CodRchDsc", async () => {
    const file = buildResultadoDte(
      { header, responseId: 2, envelopeCode: 1, documents: [{ ...doc, status: 2, statusText: "RCD", reasonCode: -1 }] },
      cert,
    ).file;
    expect((await readReceiverAnswer(file)).documents).toEqual([{ ...read, code: 2, text: "RCD; CodRchDsc -1" }]);
  });

  it("an EnvioRecibos with two Recibos; one changed after signing is refused naming it", async () => {
    const file = buildEnvioRecibos(
      { header, place: "Bodega", signerRut: "7880442-4", documents: [doc, { ...doc, folio: 13 }] },
      cert,
    ).file;
    const answer = await readReceiverAnswer(file);
    expect([answer.kind, answer.documents.map((d) => d.folio)]).toEqual(["receipt", [12, 13]]);
    const tampered = Buffer.from(
      file.toString("latin1").replace("<Recinto>Bodega</Recinto>", "<Recinto>Patio</Recinto>"),
      "latin1",
    );
    // the set's signature covers the Recibos too, so it is the first to fail
    await expect(readReceiverAnswer(tampered)).rejects.toMatchObject({
      fields: {
        xml: [
          "the signature of the EnvioRecibos (SetRecibos SetRecibos) does not verify: the signature does not verify",
        ],
      },
    });
  });
});
