/**
 * The DTE XML of one document (docs/sii-dte.md "The document"; schema/sii/DTE_v10.xsd, and
 * for boletas 39/41 the `BOLETADefType` of schema/sii/EnvioBOLETA_v11.xsd):
 *
 *   DTE version="1.0" xmlns="http://www.sii.cl/SiiDte"
 *   └─ Documento ID="F<folio>T<type>"
 *      ├─ Encabezado: IdDoc, Emisor, Receptor, [Transporte], Totales
 *      ├─ Detalle[1..60], [DscRcgGlobal], [Referencia 0..40]
 *      ├─ TED (ted.ts)
 *      └─ TmstFirma
 *
 * Built from a plain input object (not Prisma rows). The amounts are computed here with
 * `computeDocumentTotals` (src/domain/totals.ts, CLP), so `MontoItem`, `MntNeto`, `MntExe`, `IVA`
 * and `MntTotal` are exactly what the service stores. Texts are cut to SII's maximum lengths and
 * kept inside ISO-8859-1 (src/domain/dte-rules.ts). The result is unsigned: signature.ts adds the
 * XMLDSig `Signature`, encoding.ts turns it into the ISO-8859-1 file.
 *
 * Boletas differ (BOLETADefType): line prices (`PrcItem`, `MontoItem`) include IVA and the net
 * and IVA are derived from the total (totals.ts `pricesIncludeTax`); `IdDoc` carries
 * `IndServicio`; `Emisor` has `RznSocEmisor`/`GiroEmisor` and no `Acteco`; `Totales` has no
 * `TasaIVA`; `Referencia` has no date; up to 1000 lines; the receiver defaults to SII's final
 * consumer 66666666-6.
 */
import { create } from "xmlbuilder2";
import { ValidationError } from "../../../domain/errors.js";
import { computeDocumentTotals, type DiscountScheme, type DocumentTotals } from "../../../domain/totals.js";
import { toDecimal, type CurrencyUnit, type DecimalInput } from "../../../domain/money.js";
import { isShippingType, type ShippingType } from "../../../domain/shipping-types.js";
import {
  BOLETA_TYPES,
  REFERENCE_REQUIRED_TYPES,
  SII_MAX_LENGTH as MAX,
  type BoletaServiceIndicator,
  isDteType,
  requiredSiiText,
  siiAmount,
  siiDate,
  siiDecimal,
  siiRut,
  siiText,
  siiTimestamp,
  type DteType,
} from "../../../domain/dte-rules.js";
import { EXPORT_DTE_TYPES, pesoAmounts } from "../../../domain/sii-exports.js";
import { assertCafCovers, type Caf } from "./caf.js";
import { appendTed, type XMLBuilder } from "./ted.js";

export const SII_NAMESPACE = "http://www.sii.cl/SiiDte";

const CLP: CurrencyUnit = { id: "CLP", rounded: true, decimals: 0 };

/** The issuer's tax profile (Organization tax columns). */
export interface DteEmitter {
  /** RUT (`RUTEmisor`), any form: "76.042.235-5" */
  rut: string;
  /** `RznSoc` (100) */
  businessName: string;
  /** activity text, `GiroEmis` (80) */
  activity: string;
  /** SII activity codes, `Acteco` (1 to 4, up to 6 digits) */
  activityCodes: (string | number)[];
  phones?: string[];
  email?: string;
  /** `Sucursal` (20) */
  branch?: string;
  /** SII branch code, `CdgSIISucur` */
  branchCode?: string | number;
  address?: string;
  commune?: string;
  city?: string;
}

export interface DteReceiver {
  rut: string;
  /** `RznSocRecep` (100) */
  name: string;
  /** `GiroRecep` (40) */
  activity?: string;
  /** `CdgIntRecep`: our customer code (20) */
  internalCode?: string;
  contact?: string;
  email?: string;
  address?: string;
  commune?: string;
  city?: string;
}

export interface DteLine {
  /** `NmbItem` (80) */
  name: string;
  /** `DscItem` (1000) */
  description?: string;
  /** `CdgItem` (e.g. { type: "INT1", value: "011" }) */
  code?: { type: string; value: string };
  /** `QtyItem`, at most 6 decimals; 0 leaves it out */
  quantity: DecimalInput;
  /** `UnmdItem` (4) */
  unit?: string;
  /** unit price `PrcItem` in pesos, at most 6 decimals; 0 leaves it out */
  unitPrice: DecimalInput;
  /** line discount: percent (`DescuentoPct`, 2 decimals) or pesos, per `discountScheme` (default %) */
  discount?: DecimalInput;
  discountScheme?: DiscountScheme;
  /** not subject to VAT: `IndExe` 1, amount in `MntExe` */
  exempt?: boolean;
}
// A line with a negative unit price is a credit (a proration credit of the billing run): SII has
// no negative `MontoItem`, so it is printed as a `DscRcgGlobal` discount (TpoMov D, TpoValor $,
// `IndExeDR` 1 on exempt lines) and the totals are the same as with the line (totals.ts
// `allowCredits`).

export interface DteReference {
  /** `TpoDocRef`: a DTE code (33), a paper code, 801 purchase order, "SET"… */
  type: string | number;
  folio: string | number;
  /** yyyy-mm-dd */
  date: string;
  /** 1 cancels, 2 corrects text, 3 corrects amounts */
  code?: 1 | 2 | 3;
  /** `RazonRef` (90) */
  reason?: string;
  /** `IndGlobal` 1: refers to a set of documents */
  global?: boolean;
  /** `RUTOtr`: issuer of the referenced document when it is another taxpayer */
  otherRut?: string;
}

export interface DteTransport {
  /** vehicle plate `Patente` (8) */
  plate?: string;
  /** carrier RUT `RUTTrans` */
  carrierRut?: string;
  /** destination `DirDest` (70), `CmnaDest` (20), `CiudadDest` (20) */
  address?: string;
  commune?: string;
  city?: string;
}

/**
 * An export document's customs and currency data (110, 111, 112 only; docs/sii-dte.md "Export
 * documents"; the codes come from domain/sii-exports.ts).
 */
export interface DteExport {
  /** the document's currency: amounts are in it (MntExe, MntTotal, MontoItem up to 4 decimals) */
  currency: CurrencyUnit;
  /** `TpoMoneda`: SII's name of the currency ("DOLAR USA") */
  currencyName: string;
  /** `OtraMoneda/TpoCambio`: pesos per unit; with it OtraMoneda (PESO CL) is written */
  exchangeRate?: DecimalInput;
  /** `FmaPagExp`: Aduana's export payment form code */
  paymentForm?: number;
  /** `Aduana/CodModVenta`, `CodClauVenta` (then `TotClauVenta` = MntTotal), `CodViaTransp` */
  saleModality?: number;
  saleClause?: number;
  transportWay?: number;
  /** `Aduana/CodPtoEmbarque`, `CodPtoDesemb`: Aduana port codes */
  loadingPort?: number;
  unloadingPort?: number;
  /** `Aduana/CodPaisRecep`, `CodPaisDestin`: Aduana country codes */
  receiverCountry?: number;
  destinationCountry?: number;
  /** `Receptor/Extranjero/NumId` (20): the receiver's tax id abroad */
  foreignId?: string;
  /** `Receptor/Extranjero/Nacionalidad` (3): Aduana country code of the receiver */
  nationality?: number;
  /** `Aduana/Tara` (whole, 7 digits) and `CodUnidMedTara` (Aduana unit code) */
  tare?: DecimalInput;
  tareUnit?: number;
  /** `Aduana/PesoBruto`, `PesoNeto` (up to 2 decimals) and their unit codes */
  grossWeight?: DecimalInput;
  grossWeightUnit?: number;
  netWeight?: DecimalInput;
  netWeightUnit?: number;
  /** `Aduana/TotItems`, `TotBultos`: whole numbers */
  totalItems?: DecimalInput;
  totalPackages?: DecimalInput;
  /** `Aduana/TipoBultos` (at most 10): CodTpoBultos, CantBultos, Marcas, IdContainer, Sello, EmisorSello */
  packages?: {
    type: number;
    quantity?: DecimalInput;
    marks?: string;
    containerId?: string;
    seal?: string;
    sealIssuer?: string;
  }[];
  /** `Aduana/MntFlete`, `MntSeguro`: in the document's currency, up to 4 decimals */
  freight?: DecimalInput;
  insurance?: DecimalInput;
}

export interface DteInput {
  type: DteType;
  folio: number;
  /** FchEmis, yyyy-mm-dd */
  issueDate: string;
  /** FchVenc, yyyy-mm-dd */
  dueDate?: string;
  /** FmaPago: 1 cash, 2 credit, 3 no cost */
  paymentMethod?: 1 | 2 | 3;
  emitter: DteEmitter;
  receiver: DteReceiver;
  lines: DteLine[];
  /** document discount (`DscRcgGlobal`, TpoMov D) on the taxable lines, as totals.ts applies it */
  discount?: { value: DecimalInput; scheme: DiscountScheme; description?: string };
  /** VAT percent; default 19 */
  taxPercent?: DecimalInput;
  /**
   * every line exempt (forced for 34; set it on 56/61 notes of an exempt document)
   */
  exemptDocument?: boolean;
  references?: DteReference[];
  /** 52 only: `IndTraslado` (required on 52), a shipping type "1".."9" */
  shippingType?: ShippingType;
  /** 52 only: `TipoDespacho` 1 buyer, 2 issuer to buyer's premises, 3 issuer to other premises */
  dispatchType?: 1 | 2 | 3;
  /** 52 only */
  transport?: DteTransport;
  /** 39/41 only: `IndServicio` (default 3, sales and services) */
  serviceIndicator?: BoletaServiceIndicator;
  /** 110/111/112 only (required there): currency and customs data, written as `Exportaciones` */
  export?: DteExport;
  /** TED `TSTED` and `TmstFirma`: a Date (written in Chilean local time) or yyyy-mm-ddThh:mm:ss */
  timestamp: Date | string;
}

export interface BuiltDte {
  /** unsigned DTE XML (declaration says ISO-8859-1; still a JS string) */
  xml: string;
  /** `Documento/@ID` */
  id: string;
  totals: DocumentTotals;
}

/** RUT of the anonymous final consumer on boletas (chile-dte.md section 1). */
export const FINAL_CONSUMER_RUT = "66666666-6";

/** `Documento/@ID` of a document: SII's example style, "F60T33". */
export function documentId(type: number, folio: number): string {
  return `F${folio}T${type}`;
}

function maxDecimals(value: DecimalInput, places: number, field: string): void {
  if (toDecimal(value).decimalPlaces() > places)
    throw ValidationError.field(field, `must have at most ${places} decimals`);
}

function optional(parent: XMLBuilder, name: string, value: string | undefined): void {
  if (value !== undefined) parent.ele(name).txt(value);
}

/** A credit line: negative unit price (see DteLine). */
function isCredit(line: DteLine): boolean {
  return toDecimal(line.unitPrice).isNegative();
}

function checkInput(input: DteInput): void {
  if (!isDteType(input.type))
    throw ValidationError.field("type", "must be 33, 34, 39, 41, 52, 56, 61, 110, 111 or 112");
  const exporting = EXPORT_DTE_TYPES.includes(input.type);
  if (exporting && !input.export) throw ValidationError.field("export", "is required on an export document");
  if (!exporting && input.export) throw ValidationError.field("export", "is only for export documents 110-112");
  if (!Number.isInteger(input.folio) || input.folio < 1 || input.folio > 9_999_999_999) {
    throw ValidationError.field("folio", "must be a positive integer of up to 10 digits");
  }
  const boleta = BOLETA_TYPES.includes(input.type);
  const maxLines = boleta ? 1000 : 60;
  if (input.lines.length < 1 || input.lines.length > maxLines)
    throw ValidationError.field("lines", `must have 1 to ${maxLines} lines`);
  if (!boleta && input.serviceIndicator !== undefined)
    throw ValidationError.field("serviceIndicator", "is only for boletas 39 and 41");
  if (boleta && input.serviceIndicator !== undefined && ![1, 2, 3, 4].includes(input.serviceIndicator))
    throw ValidationError.field("serviceIndicator", "must be 1, 2, 3 or 4");
  if (input.lines.every((line) => isCredit(line)))
    throw ValidationError.field("lines", "needs at least one line that is not a credit");
  if (input.lines.filter((line) => isCredit(line)).length + (input.discount ? 1 : 0) > 20)
    throw ValidationError.field("lines", "at most 20 credits and discounts (DscRcgGlobal)");
  input.lines.forEach((line, i) => {
    maxDecimals(line.quantity, 6, `lines.${i}.quantity`);
    maxDecimals(line.unitPrice, 6, `lines.${i}.unitPrice`);
    if ((line.discountScheme ?? "%") === "%") maxDecimals(line.discount ?? 0, 2, `lines.${i}.discount`);
    else maxDecimals(line.discount ?? 0, 0, `lines.${i}.discount`);
  });
  if (input.discount) maxDecimals(input.discount.value, input.discount.scheme === "%" ? 2 : 0, "discount");
  if (input.type === 52) {
    if (!input.shippingType || !isShippingType(input.shippingType))
      throw ValidationError.field("shippingType", "is required on a 52 (IndTraslado 1-9)");
  } else {
    if (input.shippingType !== undefined) throw ValidationError.field("shippingType", "is only for type 52");
    if (input.transport !== undefined) throw ValidationError.field("transport", "is only for type 52");
    if (input.dispatchType !== undefined) throw ValidationError.field("dispatchType", "is only for type 52");
  }
  const refs = input.references ?? [];
  if (refs.length > 40) throw ValidationError.field("references", "must have at most 40 references");
  if (REFERENCE_REQUIRED_TYPES.includes(input.type) && !refs.some((r) => r.code !== undefined)) {
    throw ValidationError.field("references", "a debit or credit note needs a reference with a code (CodRef)");
  }
  const codes = input.emitter.activityCodes;
  if (boleta) {
    if (codes.length > 4 || codes.some((c) => !/^[1-9]\d{0,5}$/.test(String(c))))
      throw ValidationError.field("emitter.activityCodes", "must be up to 4 SII activity codes of up to 6 digits");
  } else if (codes.length < 1 || codes.length > 4 || codes.some((c) => !/^[1-9]\d{0,5}$/.test(String(c)))) {
    throw ValidationError.field("emitter.activityCodes", "must be 1 to 4 SII activity codes of up to 6 digits");
  }
}

/** A whole number > 0 of at most `digits` digits, as text; ValidationError on `field` otherwise. */
function wholeNumber(value: DecimalInput, digits: number, field: string): string {
  const d = toDecimal(value);
  if (!d.isInteger() || d.lessThanOrEqualTo(0) || d.toFixed(0).length > digits)
    throw ValidationError.field(field, `must be a whole number greater than 0 of at most ${digits} digits`);
  return d.toFixed(0);
}

/** A decimal > 0 of at most `places` decimals and `integerDigits` digits before the point, as text. */
function positiveDecimal(value: DecimalInput, integerDigits: number, places: number, field: string): string {
  const d = toDecimal(value);
  if (d.lessThanOrEqualTo(0) || d.decimalPlaces() > places || d.truncated().toFixed(0).length > integerDigits)
    throw ValidationError.field(
      field,
      `must be greater than 0 with at most ${integerDigits} integer digits and ${places} decimals`,
    );
  return siiDecimal(d, places);
}

/**
 * An export's `Transporte/Aduana` (codes of domain/sii-exports.ts) in DTE_v10.xsd's order, left out
 * when it has none; `TotClauVenta` is the document total when a sale clause is given.
 */
function appendAduana(header: XMLBuilder, exp: DteExport, total: string): void {
  if ((exp.packages?.length ?? 0) > 10) throw ValidationError.field("export.packages", "at most 10 (TipoBultos)");
  const opt = <T>(value: T | undefined, f: (v: T) => string) => (value === undefined ? undefined : f(value));
  const before: [string, string | undefined][] = [
    ["CodModVenta", opt(exp.saleModality, String)],
    ["CodClauVenta", opt(exp.saleClause, String)],
    ["TotClauVenta", exp.saleClause !== undefined && Number(total) > 0 ? siiDecimal(total, 2) : undefined],
    ["CodViaTransp", opt(exp.transportWay, String)],
    ["CodPtoEmbarque", opt(exp.loadingPort, String)],
    ["CodPtoDesemb", opt(exp.unloadingPort, String)],
    ["Tara", opt(exp.tare, (v) => wholeNumber(v, 7, "export.tare"))],
    ["CodUnidMedTara", opt(exp.tareUnit, String)],
    ["PesoBruto", opt(exp.grossWeight, (v) => positiveDecimal(v, 8, 2, "export.grossWeight"))],
    ["CodUnidPesoBruto", opt(exp.grossWeightUnit, String)],
    ["PesoNeto", opt(exp.netWeight, (v) => positiveDecimal(v, 8, 2, "export.netWeight"))],
    ["CodUnidPesoNeto", opt(exp.netWeightUnit, String)],
    ["TotItems", opt(exp.totalItems, (v) => wholeNumber(v, 18, "export.totalItems"))],
    ["TotBultos", opt(exp.totalPackages, (v) => wholeNumber(v, 18, "export.totalPackages"))],
  ];
  const after: [string, string | undefined][] = [
    ["MntFlete", opt(exp.freight, (v) => positiveDecimal(v, 14, 4, "export.freight"))],
    ["MntSeguro", opt(exp.insurance, (v) => positiveDecimal(v, 14, 4, "export.insurance"))],
    ["CodPaisRecep", opt(exp.receiverCountry, String)],
    ["CodPaisDestin", opt(exp.destinationCountry, String)],
  ];
  const packages = exp.packages ?? [];
  if ([...before, ...after].every(([, value]) => value === undefined) && packages.length === 0) return;
  const aduana = header.ele("Transporte").ele("Aduana");
  for (const [name, value] of before) if (value !== undefined) aduana.ele(name).txt(value);
  packages.forEach((p, i) => {
    const tipo = aduana.ele("TipoBultos");
    if (!Number.isInteger(p.type) || p.type < 1 || p.type > 999)
      throw ValidationError.field(`export.packages.${i}.type`, "must be an Aduana package type code (1-999)");
    tipo.ele("CodTpoBultos").txt(String(p.type));
    if (p.quantity !== undefined)
      tipo.ele("CantBultos").txt(wholeNumber(p.quantity, 10, `export.packages.${i}.quantity`));
    optional(tipo, "Marcas", siiText(p.marks, 255));
    optional(tipo, "IdContainer", siiText(p.containerId, 25));
    optional(tipo, "Sello", siiText(p.seal, 20));
    optional(tipo, "EmisorSello", siiText(p.sealIssuer, 70));
  });
  for (const [name, value] of after) if (value !== undefined) aduana.ele(name).txt(value);
}

/**
 * What the section builders of one DTE share: the checked input, the document's kind, the
 * normalized RUTs and issue date (`siiRut`, `siiDate`) and the totals every amount comes from.
 */
interface DteParts {
  input: DteInput;
  /** 39/41: BOLETADefType's differences (docs/sii-dte.md) */
  boleta: boolean;
  /** 110/111/112: the export data; undefined on every other type */
  exp: DteExport | undefined;
  /** `computeDocumentTotals` of the lines, in CLP or the export's currency */
  totals: DocumentTotals;
  emitterRut: string;
  receiverRut: string;
  /** yyyy-mm-dd */
  issueDate: string;
}

/**
 * An amount as the DTE writes it: a whole peso amount (`siiAmount`, MntImpType) or, on an export,
 * a decimal of up to 4 places in the document's currency (DTE_v10.xsd `Exportaciones`).
 */
function dteAmount(parts: DteParts, value: DecimalInput, field: string): string {
  return parts.exp ? siiDecimal(value, 4) : siiAmount(value, field);
}

/**
 * The document's totals (totals.ts, CLP or the export's currency): exports are exempt (IndExe,
 * MntExe), 34/41 and exempt documents have no taxes, boleta 39 prices include IVA, and credit
 * lines (negative prices) are allowed.
 */
function dteTotals(input: DteInput, exp: DteExport | undefined): DocumentTotals {
  const type = input.type;
  const hasTaxes = type !== 34 && type !== 41 && input.exemptDocument !== true && !exp;
  return computeDocumentTotals({
    lines: input.lines.map((l) => ({
      quantity: l.quantity,
      amount: l.unitPrice,
      discount: l.discount,
      discountScheme: l.discountScheme,
      exempt: exp ? true : l.exempt,
    })),
    discount: input.discount?.value,
    discountScheme: input.discount?.scheme,
    taxPercent: input.taxPercent ?? 19,
    hasTaxes,
    pricesIncludeTax: type === 39,
    currency: exp?.currency ?? CLP,
    allowCredits: true,
  });
}

/**
 * `Encabezado/IdDoc` (DTE_v10.xsd `IdDoc`): type, folio, issue date, then the optional
 * `IndServicio` (boletas, default 3), `TipoDespacho` and `IndTraslado` (52), `FmaPago` (not on
 * boletas), `FmaPagExp` (exports) and `FchVenc`, in the schema's order.
 */
function appendIdDoc(header: XMLBuilder, parts: DteParts): void {
  const { input, boleta, exp } = parts;
  const idDoc = header.ele("IdDoc");
  idDoc.ele("TipoDTE").txt(String(input.type));
  idDoc.ele("Folio").txt(String(input.folio));
  idDoc.ele("FchEmis").txt(parts.issueDate);
  if (boleta) idDoc.ele("IndServicio").txt(String(input.serviceIndicator ?? 3));
  if (input.dispatchType !== undefined) idDoc.ele("TipoDespacho").txt(String(input.dispatchType));
  if (input.shippingType !== undefined) idDoc.ele("IndTraslado").txt(input.shippingType);
  if (input.paymentMethod !== undefined && !boleta) idDoc.ele("FmaPago").txt(String(input.paymentMethod));
  if (exp?.paymentForm !== undefined) idDoc.ele("FmaPagExp").txt(String(exp.paymentForm));
  if (input.dueDate !== undefined) idDoc.ele("FchVenc").txt(siiDate(input.dueDate, "dueDate"));
}

/**
 * `Encabezado/Emisor`: RUT, business name and activity (`RznSocEmisor`/`GiroEmisor` on boletas,
 * `RznSoc`/`GiroEmis` otherwise), then on non-boletas up to 2 phones, e-mail, the `Acteco` codes
 * and branch; the SII branch code (up to 9 digits) and the origin address. Texts are cut to
 * `SII_MAX_LENGTH`.
 */
function appendEmisor(header: XMLBuilder, parts: DteParts): void {
  const { boleta } = parts;
  const e = parts.input.emitter;
  const emisor = header.ele("Emisor");
  emisor.ele("RUTEmisor").txt(parts.emitterRut);
  emisor
    .ele(boleta ? "RznSocEmisor" : "RznSoc")
    .txt(requiredSiiText(e.businessName, MAX.RznSoc, "emitter.businessName"));
  emisor.ele(boleta ? "GiroEmisor" : "GiroEmis").txt(requiredSiiText(e.activity, MAX.GiroEmis, "emitter.activity"));
  if (!boleta) {
    for (const phone of (e.phones ?? []).slice(0, 2)) optional(emisor, "Telefono", siiText(phone, MAX.Telefono));
    optional(emisor, "CorreoEmisor", siiText(e.email, MAX.CorreoEmisor));
    for (const code of e.activityCodes) emisor.ele("Acteco").txt(String(code));
    optional(emisor, "Sucursal", siiText(e.branch, MAX.Sucursal));
  }
  if (e.branchCode !== undefined) {
    if (!/^[1-9]\d{0,8}$/.test(String(e.branchCode)))
      throw ValidationError.field("emitter.branchCode", "must be an SII branch code of up to 9 digits");
    emisor.ele("CdgSIISucur").txt(String(e.branchCode));
  }
  optional(emisor, "DirOrigen", siiText(e.address, MAX.DirOrigen));
  optional(emisor, "CmnaOrigen", siiText(e.commune, MAX.CmnaOrigen));
  optional(emisor, "CiudadOrigen", siiText(e.city, MAX.CiudadOrigen));
}

/**
 * `Encabezado/Receptor`: RUT, internal code, name, an export's `Extranjero` (foreign id and
 * nationality), activity and e-mail (not on boletas), contact and address. Returns the name as
 * written (`RznSocRecep`, cut to 100), which the TED repeats.
 */
function appendReceptor(header: XMLBuilder, parts: DteParts): string {
  const { boleta, exp } = parts;
  const r = parts.input.receiver;
  const receiverName = requiredSiiText(r.name, MAX.RznSocRecep, "receiver.name");
  const receptor = header.ele("Receptor");
  receptor.ele("RUTRecep").txt(parts.receiverRut);
  optional(receptor, "CdgIntRecep", siiText(r.internalCode, MAX.CdgIntRecep));
  receptor.ele("RznSocRecep").txt(receiverName);
  if (exp && (exp.foreignId || exp.nationality !== undefined)) {
    const extranjero = receptor.ele("Extranjero");
    optional(extranjero, "NumId", siiText(exp.foreignId, 20));
    if (exp.nationality !== undefined) extranjero.ele("Nacionalidad").txt(String(exp.nationality));
  }
  if (!boleta) optional(receptor, "GiroRecep", siiText(r.activity, MAX.GiroRecep));
  optional(receptor, "Contacto", siiText(r.contact, MAX.Contacto));
  if (!boleta) optional(receptor, "CorreoRecep", siiText(r.email, MAX.CorreoRecep));
  optional(receptor, "DirRecep", siiText(r.address, MAX.DirRecep));
  optional(receptor, "CmnaRecep", siiText(r.commune, MAX.CmnaRecep));
  optional(receptor, "CiudadRecep", siiText(r.city, MAX.CiudadRecep));
  return receiverName;
}

/**
 * `Encabezado/Transporte` of a 52 (plate, carrier RUT, destination address), left out when the
 * transport has none of them.
 */
function appendTransporte(header: XMLBuilder, t: DteTransport | undefined): void {
  if (!t || !(t.plate || t.carrierRut || t.address || t.commune || t.city)) return;
  const transporte = header.ele("Transporte");
  optional(transporte, "Patente", siiText(t.plate, MAX.Patente));
  if (t.carrierRut) transporte.ele("RUTTrans").txt(siiRut(t.carrierRut, "transport.carrierRut"));
  optional(transporte, "DirDest", siiText(t.address, MAX.DirDest));
  optional(transporte, "CmnaDest", siiText(t.commune, MAX.CmnaDest));
  optional(transporte, "CiudadDest", siiText(t.city, MAX.CiudadDest));
}

/**
 * An export's `Encabezado/Totales` (currency name, `MntExe`, `MntTotal` in the document's
 * currency) and, with an exchange rate, `Encabezado/OtraMoneda` in whole pesos (PESO CL).
 */
function appendExportTotales(header: XMLBuilder, parts: DteParts, exp: DteExport): void {
  const { totals } = parts;
  const totales = header.ele("Totales");
  totales.ele("TpoMoneda").txt(exp.currencyName);
  totales.ele("MntExe").txt(dteAmount(parts, totals.exempt, "totals.exempt"));
  totales.ele("MntTotal").txt(dteAmount(parts, totals.total, "totals.total"));
  if (exp.exchangeRate === undefined) return;
  const pesos = pesoAmounts(totals.exempt, totals.total, exp.exchangeRate);
  const otra = header.ele("OtraMoneda");
  otra.ele("TpoMoneda").txt("PESO CL");
  otra.ele("TpoCambio").txt(siiDecimal(exp.exchangeRate, 4));
  otra.ele("MntExeOtrMnda").txt(pesos.exempt.toFixed(0));
  otra.ele("MntTotOtrMnda").txt(pesos.total.toFixed(0));
}

/**
 * `Encabezado/Totales` in whole pesos: the taxable part (`MntNeto`, `TasaIVA` except on boletas,
 * `IVA`) when some line is taxable, `MntExe` when some line is exempt, and `MntTotal`. Exports:
 * `appendExportTotales`.
 */
function appendTotales(header: XMLBuilder, parts: DteParts): void {
  const { totals, boleta, exp } = parts;
  if (exp) return appendExportTotales(header, parts, exp);
  const anyTaxable = totals.lines.some((l) => !l.exempt);
  const anyExempt = totals.lines.some((l) => l.exempt);
  const totales = header.ele("Totales");
  if (anyTaxable) totales.ele("MntNeto").txt(siiAmount(totals.amount, "totals.amount"));
  if (anyExempt) totales.ele("MntExe").txt(siiAmount(totals.exempt, "totals.exempt"));
  if (anyTaxable) {
    if (!boleta) totales.ele("TasaIVA").txt(siiDecimal(totals.taxPercent, 2));
    totales.ele("IVA").txt(siiAmount(totals.tax, "totals.tax"));
  }
  totales.ele("MntTotal").txt(siiAmount(totals.total, "totals.total"));
}

/**
 * One `Detalle` per line that is not a credit, numbered from 1 (`NroLinDet`): item code, `IndExe`,
 * name and description, quantity and unit, unit price (each left out when 0), the line discount
 * (`DescuentoPct` for a % discount, `DescuentoMonto` in whole pesos) and `MontoItem`.
 */
function appendDetalle(doc: XMLBuilder, parts: DteParts): void {
  const { totals, exp } = parts;
  let lineNumber = 0;
  parts.input.lines.forEach((line, i) => {
    if (isCredit(line)) return;
    const lt = totals.lines[i];
    const det = doc.ele("Detalle");
    det.ele("NroLinDet").txt(String(++lineNumber));
    if (line.code) {
      const cdg = det.ele("CdgItem");
      cdg.ele("TpoCodigo").txt(requiredSiiText(line.code.type, MAX.TpoCodigo, `lines.${i}.code.type`));
      cdg.ele("VlrCodigo").txt(requiredSiiText(line.code.value, MAX.VlrCodigo, `lines.${i}.code.value`));
    }
    if (lt.exempt) det.ele("IndExe").txt("1");
    det.ele("NmbItem").txt(requiredSiiText(line.name, MAX.NmbItem, `lines.${i}.name`));
    optional(det, "DscItem", siiText(line.description, MAX.DscItem));
    if (!toDecimal(line.quantity).isZero()) det.ele("QtyItem").txt(siiDecimal(line.quantity, 6));
    optional(det, "UnmdItem", siiText(line.unit, MAX.UnmdItem));
    if (!toDecimal(line.unitPrice).isZero()) det.ele("PrcItem").txt(siiDecimal(line.unitPrice, 6));
    if (!lt.discountAmount.isZero()) {
      if ((line.discountScheme ?? "%") === "%") det.ele("DescuentoPct").txt(siiDecimal(line.discount ?? 0, 2));
      // DescuentoMonto is a whole number (MntImpType) even on an export: a fractional one is left out
      if (!exp || lt.discountAmount.isInteger())
        det.ele("DescuentoMonto").txt(siiAmount(lt.discountAmount, `lines.${i}.discount`));
    }
    det.ele("MontoItem").txt(dteAmount(parts, lt.total, `lines.${i}.total`));
  });
}

/** One `DscRcgGlobal` discount (TpoMov D), as `appendGlobalDiscounts` writes it. */
interface GlobalDiscount {
  /** `GlosaDR` (cut to 45) */
  glosa: string | undefined;
  /** `TpoValor`: % or $ */
  scheme: DiscountScheme;
  /** `ValorDR`, already written as text */
  value: string;
  /** `IndExeDR` 1: the discount is on exempt lines */
  exempt: boolean;
}

/**
 * `DscRcgGlobal`, numbered from 1 (`NroLinDR`): each credit line as an amount, then the document
 * discount (as an amount when credits come first, since totals.ts takes the % of the taxable net
 * after credits). Amounts are whole pesos, or up to 2 decimals on an export.
 */
function appendGlobalDiscounts(doc: XMLBuilder, parts: DteParts): void {
  const { input, totals, exp } = parts;
  const discounts: GlobalDiscount[] = [];
  input.lines.forEach((line, i) => {
    if (!isCredit(line)) return;
    const credit = totals.lines[i].total.negated();
    const value = exp ? siiDecimal(credit, 2) : siiAmount(credit, `lines.${i}.total`);
    discounts.push({ glosa: line.name, scheme: "$", value, exempt: totals.lines[i].exempt });
  });
  if (input.discount && !totals.discountAmount.isZero()) {
    const glosa = input.discount.description;
    if (discounts.length > 0) {
      const value = exp ? siiDecimal(totals.discountAmount, 2) : siiAmount(totals.discountAmount, "discount");
      discounts.push({ glosa, scheme: "$", value, exempt: false });
    } else {
      discounts.push({
        glosa,
        scheme: input.discount.scheme,
        value: siiDecimal(input.discount.value, 2),
        exempt: false,
      });
    }
  }
  discounts.forEach((discount, i) => {
    const dr = doc.ele("DscRcgGlobal");
    dr.ele("NroLinDR").txt(String(i + 1));
    dr.ele("TpoMov").txt("D");
    optional(dr, "GlosaDR", siiText(discount.glosa, MAX.GlosaDR));
    dr.ele("TpoValor").txt(discount.scheme);
    dr.ele("ValorDR").txt(discount.value);
    if (discount.exempt) dr.ele("IndExeDR").txt("1");
  });
}

/**
 * `Referencia[0..40]`, numbered from 1 (`NroLinRef`): the referenced document's type and folio,
 * `IndGlobal`, `RUTOtr` and `FchRef` (not on boletas), `CodRef` and `RazonRef`.
 */
function appendReferences(doc: XMLBuilder, parts: DteParts): void {
  const { boleta } = parts;
  (parts.input.references ?? []).forEach((ref, i) => {
    const el = doc.ele("Referencia");
    el.ele("NroLinRef").txt(String(i + 1));
    el.ele("TpoDocRef").txt(requiredSiiText(String(ref.type), MAX.TpoDocRef, `references.${i}.type`));
    if (ref.global && !boleta) el.ele("IndGlobal").txt("1");
    el.ele("FolioRef").txt(requiredSiiText(String(ref.folio), MAX.FolioRef, `references.${i}.folio`));
    if (ref.otherRut && !boleta) el.ele("RUTOtr").txt(siiRut(ref.otherRut, `references.${i}.otherRut`));
    if (!boleta) el.ele("FchRef").txt(siiDate(ref.date, `references.${i}.date`));
    if (ref.code !== undefined) el.ele("CodRef").txt(String(ref.code));
    optional(el, "RazonRef", siiText(ref.reason, MAX.RazonRef));
  });
}

/** Builds the unsigned DTE (with its TED, stamped with `caf`). Throws ValidationError on bad input. */
export function buildDte(input: DteInput, caf: Caf): BuiltDte {
  checkInput(input);
  const type = input.type;
  const issueDate = siiDate(input.issueDate, "issueDate");
  const emitterRut = siiRut(input.emitter.rut, "emitter.rut");
  const receiverRut = siiRut(input.receiver.rut, "receiver.rut");
  assertCafCovers(caf, { rut: emitterRut, type, folio: input.folio, issueDate });
  const timestamp = siiTimestamp(input.timestamp);
  const exp = EXPORT_DTE_TYPES.includes(type) ? input.export : undefined;
  const totals = dteTotals(input, exp);
  const parts: DteParts = {
    input,
    boleta: BOLETA_TYPES.includes(type),
    exp,
    totals,
    emitterRut,
    receiverRut,
    issueDate,
  };

  const id = documentId(type, input.folio);
  const root = create({ version: "1.0", encoding: "ISO-8859-1" }).ele(SII_NAMESPACE, "DTE", { version: "1.0" });
  const doc = root.ele(exp ? "Exportaciones" : "Documento", { ID: id });
  const header = doc.ele("Encabezado");
  appendIdDoc(header, parts);
  appendEmisor(header, parts);
  const receiverName = appendReceptor(header, parts);
  appendTransporte(header, input.transport);
  if (exp) appendAduana(header, exp, dteAmount(parts, totals.total, "totals.total"));
  appendTotales(header, parts);
  appendDetalle(doc, parts);
  appendGlobalDiscounts(doc, parts);
  appendReferences(doc, parts);

  const total = dteAmount(parts, totals.total, "totals.total");
  const firstItemName = input.lines.find((line) => !isCredit(line))!.name;
  appendTed(
    doc,
    { emitterRut, type, folio: input.folio, issueDate, receiverRut, receiverName, total, firstItemName, timestamp },
    caf,
  );
  doc.ele("TmstFirma").txt(timestamp);

  return { xml: root.end({ prettyPrint: false }), id, totals };
}
