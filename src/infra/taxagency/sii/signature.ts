/**
 * XMLDSig enveloped signature of a DTE (docs/sii-dte.md "Signature"; the SII
 * signature schema schema/sii/xmldsignature_v10.xsd fixes most of it):
 *
 *   DTE > Documento ID="F60T33" … > Signature xmlns="http://www.w3.org/2000/09/xmldsig#"
 *     SignedInfo: CanonicalizationMethod inclusive C14N 1.0 (REC-xml-c14n-20010315),
 *                 SignatureMethod rsa-sha1, one Reference URI="#F60T33" with one C14N Transform,
 *                 DigestMethod sha1
 *     SignatureValue
 *     KeyInfo: KeyValue/RSAKeyValue (Modulus, Exponent) and X509Data/X509Certificate
 *
 * The signature is the last child of `DTE`, a sibling of `Documento`, so no enveloped-signature
 * transform is needed. The DTE is signed standalone with its own xmlns (inclusive C14N pulls the
 * in-scope namespace into the digest), to be embedded byte for byte in an EnvioDTE later.
 * The built document text is kept as is: only the `Signature` element is inserted before
 * `</DTE>`, so the TED's `DD` bytes stay exactly the signed ones.
 */
import {
  X509Certificate,
  createHash,
  createPrivateKey,
  createPublicKey,
  sign,
  type KeyLike,
  type KeyObject,
} from "node:crypto";
import { SignedXml } from "xml-crypto";

const C14N = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315";
const RSA_SHA1 = "http://www.w3.org/2000/09/xmldsig#rsa-sha1";
const SHA1 = "http://www.w3.org/2000/09/xmldsig#sha1";

/** The signer's certificate (PEM) and its private key (PEM); from the organization's PKCS#12. */
export interface SigningCredentials {
  certificatePem: string;
  privateKeyPem: string;
}

/** Base64 in lines of 76 characters, like SII's example. */
function wrap(b64: string): string {
  return b64.replace(/(.{76})(?=.)/g, "$1\n");
}

/** `KeyValue/RSAKeyValue` and `X509Data/X509Certificate` of the certificate. */
export function keyInfoContent(certificatePem: string): string {
  const cert = new X509Certificate(certificatePem);
  const jwk = cert.publicKey.export({ format: "jwk" });
  if (jwk.kty !== "RSA" || !jwk.n || !jwk.e) throw new Error("the signing certificate must have an RSA key");
  const modulus = Buffer.from(jwk.n, "base64url").toString("base64");
  const exponent = Buffer.from(jwk.e, "base64url").toString("base64");
  return (
    `<KeyValue><RSAKeyValue><Modulus>${wrap(modulus)}</Modulus><Exponent>${exponent}</Exponent></RSAKeyValue>` +
    `</KeyValue>` +
    `<X509Data><X509Certificate>${wrap(cert.raw.toString("base64"))}</X509Certificate></X509Data>`
  );
}

/**
 * The signer of many DTEs with one certificate: checks once that the key matches the certificate
 * (throws when not), then parses the key and builds the KeyInfo once instead of per signature.
 * Each call signs like signDte.
 */
export function dteSigner(credentials: SigningCredentials): (xml: string) => string {
  const cert = new X509Certificate(credentials.certificatePem);
  const key = createPrivateKey(credentials.privateKeyPem);
  const publicOfKey = createPublicKey(key).export({ format: "jwk" });
  if (publicOfKey.n !== cert.publicKey.export({ format: "jwk" }).n)
    throw new Error("the private key does not match the certificate");
  const keyInfo = keyInfoContent(credentials.certificatePem);
  return (xml) => {
    // an export (110-112) signs its `Exportaciones` element, every other DTE its `Documento`
    const element = /<(Documento|Exportaciones) ID="[^"]+"/.exec(xml)?.[1];
    if (!element) throw new Error("the DTE has no Documento ID");
    if (!xml.includes("</DTE>")) throw new Error("not a DTE");
    return (
      signBuiltDte(xml, key, keyInfo, element) ??
      signEnvelopedWith(xml, element, key, credentials.certificatePem, keyInfo)
    );
  };
}

const XMLDSIG = "http://www.w3.org/2000/09/xmldsig#";
const DTE_HEAD = (element: string) =>
  `<?xml version="1.0" encoding="ISO-8859-1"?><DTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><${element} ID="`;

/**
 * The inclusive C14N 1.0 of the `Documento` of a DTE as dte.ts builds it, read straight off the
 * text, and its ID; null when the text has anything whose canonical form would differ from it
 * (a self-closing tag, a carriage return, a reference other than &amp; &lt; &gt;, a raw `>` in a
 * text, CDATA, a comment, a processing instruction, a start tag with more than one attribute or an
 * attribute value that is not plain letters, digits and dots). For such a text the caller signs
 * with xml-crypto instead. The canonical form of the built text only adds the in-scope default
 * namespace to the `Documento` start tag (its only attribute, ID, follows the namespace).
 */
function canonicalDocumento(xml: string, element = "Documento"): { id: string; canonical: string } | null {
  const head = DTE_HEAD(element);
  if (!xml.startsWith(head)) return null;
  const start = head.length - `<${element} ID="`.length;
  const end = xml.indexOf(`</${element}>`);
  if (end < 0 || xml.indexOf(`<${element}`, start + 1) >= 0) return null;
  const documento = xml.slice(start, end + `</${element}>`.length);
  if (/\/>|\r|<!|<\?|&(?!amp;|lt;|gt;)|>[^<]*>/.test(documento)) return null;
  for (const tag of documento.matchAll(/<[A-Za-z][\w.-]*((?:\s[^>]*)?)>/g)) {
    if (tag[1] && !/^ [A-Za-z]+="[A-Za-z0-9.]+"$/.test(tag[1])) return null;
  }
  const id = new RegExp(`^<${element} ID="([A-Za-z0-9]+)">`).exec(documento)?.[1];
  if (!id) return null;
  return {
    id,
    canonical: `<${element} xmlns="http://www.sii.cl/SiiDte" ID="${id}">${documento.slice(`<${element} ID="${id}">`.length)}`,
  };
}

/**
 * The DTE signed as signEnveloped signs it (same Signature bytes: test/sii/dte-signer.test.ts
 * compares them), without parsing it: the digest is over canonicalDocumento's text and the
 * SignedInfo is a fixed template. Null when canonicalDocumento is (the caller then uses xml-crypto).
 */
function signBuiltDte(xml: string, key: KeyObject, keyInfo: string, element = "Documento"): string | null {
  const documento = canonicalDocumento(xml, element);
  if (!documento) return null;
  const digest = createHash("sha1").update(documento.canonical, "utf8").digest("base64");
  const signedInfo = (xmlns: string, close: (name: string) => string) =>
    `<SignedInfo${xmlns}><CanonicalizationMethod Algorithm="${C14N}"${close("CanonicalizationMethod")}` +
    `<SignatureMethod Algorithm="${RSA_SHA1}"${close("SignatureMethod")}` +
    `<Reference URI="#${documento.id}"><Transforms><Transform Algorithm="${C14N}"${close("Transform")}</Transforms>` +
    `<DigestMethod Algorithm="${SHA1}"${close("DigestMethod")}` +
    `<DigestValue>${digest}</DigestValue></Reference></SignedInfo>`;
  const canonicalSignedInfo = signedInfo(` xmlns="${XMLDSIG}"`, (name) => `></${name}>`);
  const value = sign("sha1", Buffer.from(canonicalSignedInfo, "utf8"), key).toString("base64");
  const signature =
    `<Signature xmlns="${XMLDSIG}">${signedInfo("", () => "/>")}<SignatureValue>${value}` +
    `</SignatureValue><KeyInfo>${keyInfo}</KeyInfo></Signature>`;
  const closing = xml.lastIndexOf("</DTE>");
  return xml.slice(0, closing) + signature + xml.slice(closing);
}

/**
 * Signs the `Documento` of an unsigned DTE (as built by dte.ts) and returns the DTE with its
 * `Signature`. Throws when the key does not match the certificate or the DTE has no Documento ID.
 */
export function signDte(xml: string, credentials: SigningCredentials): string {
  return dteSigner(credentials)(xml);
}

/**
 * XMLDSig of SII's files (chile-dte.md section 2.8): signs the child of the root named
 * `signedElement` (Reference to its ID; RSA-SHA1, C14N, KeyValue + X509Data) and appends the
 * Signature as the root's last child. Only the Signature is inserted into `xml`; the rest stays
 * byte-identical, so documents signed earlier and embedded in it keep verifying. Used for the DTE
 * (`Documento`), envelopes (`SetDTE`) and responses (`Resultado`, `DocumentoRecibo`, `SetRecibos`).
 */
export function signEnveloped(xml: string, signedElement: string, credentials: SigningCredentials): string {
  return signEnvelopedWith(
    xml,
    signedElement,
    credentials.privateKeyPem,
    credentials.certificatePem,
    keyInfoContent(credentials.certificatePem),
  );
}

/** signEnveloped with the key (PEM or parsed) and the KeyInfo content given. */
function signEnvelopedWith(
  xml: string,
  signedElement: string,
  privateKey: KeyLike,
  certificatePem: string,
  keyInfo: string,
): string {
  const root = /^(?:<\?xml[^>]*\?>\s*)?<([A-Za-z]+)[\s>]/.exec(xml)?.[1];
  if (!root) throw new Error("no root element");
  const closing = xml.lastIndexOf(`</${root}>`);
  const sig = new SignedXml({
    privateKey,
    publicCert: certificatePem,
    signatureAlgorithm: RSA_SHA1,
    canonicalizationAlgorithm: C14N,
    idAttribute: "ID",
    getKeyInfoContent: () => keyInfo,
  });
  sig.addReference({ xpath: `/*/*[local-name(.)='${signedElement}']`, transforms: [C14N], digestAlgorithm: SHA1 });
  sig.computeSignature(xml, { location: { reference: "/*", action: "append" } });
  return xml.slice(0, closing) + sig.getSignatureXml() + xml.slice(closing);
}

/** The outcome of checking one XMLDSig signature of a received file. */
export interface SignatureCheck {
  valid: boolean;
  /** why it is not valid (null when valid) */
  reason: string | null;
  /** the certificate of the signature's KeyInfo (PEM), when there is one */
  certificatePem: string | null;
}

function pemOf(base64: string): string {
  return (
    `-----BEGIN CERTIFICATE-----\n${base64.replace(/\s+/g, "").replace(/(.{64})(?=.)/g, "$1\n")}\n-----END ` +
    `CERTIFICATE-----\n`
  );
}

/**
 * Verifies one enveloped XMLDSig signature of a received SII file (a DTE, a RespuestaDTE, an
 * EnvioRecibos or one of its Recibos) with xml-crypto: the `Signature` element `signature`
 * (a node of the parsed `xml`) must have exactly one Reference, to `#<referenceId>`, whose digest
 * matches the referenced element's inclusive C14N in `xml`, and its SignatureValue must verify
 * with the key of the `X509Certificate` in its own KeyInfo (SII's form; the certificate's chain is
 * not checked: SII's exchange has no trust list). Never throws: a broken signature is
 * `{valid: false, reason}`.
 */
export function verifyEnvelopedSignature(xml: string, signature: Element, referenceId: string): SignatureCheck {
  const certText = signature.getElementsByTagNameNS(XMLDSIG, "X509Certificate")[0]?.textContent ?? "";
  if (!certText.trim()) return { valid: false, reason: "the signature has no X509Certificate", certificatePem: null };
  const certificatePem = pemOf(certText);
  try {
    new X509Certificate(certificatePem);
  } catch {
    return { valid: false, reason: "the signature's X509Certificate cannot be read", certificatePem: null };
  }
  const references = signature.getElementsByTagNameNS(XMLDSIG, "Reference");
  const uris = Array.from({ length: references.length }, (_, i) => references[i].getAttribute("URI"));
  if (uris.length !== 1 || uris[0] !== `#${referenceId}`) {
    return {
      valid: false,
      reason: `the signature must reference #${referenceId} only, not ${uris.join(", ") || "nothing"}`,
      certificatePem,
    };
  }
  try {
    const sig = new SignedXml({ publicCert: certificatePem });
    sig.loadSignature(signature);
    if (sig.checkSignature(xml)) return { valid: true, reason: null, certificatePem };
    return { valid: false, reason: "the signature does not verify", certificatePem };
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return {
      valid: false,
      reason: `the signature does not verify (${message.split("\n")[0].slice(0, 200)})`,
      certificatePem,
    };
  }
}
