/**
 * The words and formats of a printed document (docs/sii-dte.md "The printed representation"):
 * the one table of labels, in Spanish (SII's labels, as Chilean DTEs print them) and English, and
 * how dates and RUTs read on paper. Pure; services/document-pdf.ts picks the locale and passes the
 * labels to infra/pdf.ts.
 *
 * Locale rule: the organization's `locale` setting when set, else Spanish for a document type of
 * Chile (CL33, CL52, CL61, …) and English for every other country.
 */
import { SHIPPING_TYPES } from "./shipping-types.js";

/** The languages a document prints in. */
export const PRINT_LOCALES = ["es", "en"] as const;
export type PrintLocale = (typeof PRINT_LOCALES)[number];

export function isPrintLocale(value: string): value is PrintLocale {
  return (PRINT_LOCALES as readonly string[]).includes(value);
}

/**
 * The locale a document prints in: `override` (the organization's setting) when set, else by the document type's
 * country.
 */
export function documentLocale(countryId: string | null | undefined, override: string | null | undefined): PrintLocale {
  if (override && isPrintLocale(override)) return override;
  return countryId === "CL" ? "es" : "en";
}

export interface PrintedLabels {
  /** the issuer's tax id in the header box ("R.U.T.: 76.042.235-5") */
  headerTaxId: string;
  customer: string;
  taxId: string;
  activity: string;
  address: string;
  commune: string;
  city: string;
  email: string;
  issueDate: string;
  dueDate: string;
  period: string;
  saleCondition: string;
  currency: string;
  code: string;
  description: string;
  quantity: string;
  unitPrice: string;
  discount: string;
  value: string;
  subtotal: string;
  globalDiscount: string;
  net: string;
  exempt: string;
  /** `tax(19)` → "IVA 19 %" */
  tax: (percent: string) => string;
  total: string;
  references: string;
  referenceType: string;
  referenceFolio: string;
  referenceDate: string;
  referenceReason: string;
  transport: string;
  shippingType: string;
  destination: string;
  carrier: string;
  licencePlate: string;
  note: string;
  /** the number line of a draft, which has no number yet */
  draft: string;
  /** the title of a regulated type's document numbered in the internal series (printedHeading) */
  nonTaxDocument: string;
  /** before such a document's number: "N° interno 12" */
  internalNumber: string;
  /** the note such a document carries */
  nonTaxNote: string;
  exemptLine: string;
  /** sale conditions by SII's FmaPago: contado (cash, due on issue) or crédito (a later due date) */
  cash: string;
  credit: string;
  /** SII's transfer codes (IndTraslado "1".."9") by name */
  shippingTypes: Record<string, string>;
  /** SII's CodRef of a reference: 1 cancels, 2 corrects text, 3 corrects amounts */
  referenceCodes: Record<number, string>;
  /** an export document's (110, 111, 112) block and its rows (domain/printed-export.ts) */
  exportData: string;
  saleModality: string;
  saleClause: string;
  saleClauseTotal: string;
  transportWay: string;
  loadingPort: string;
  unloadingPort: string;
  receiverCountry: string;
  destinationCountry: string;
  exportPaymentForm: string;
  currencyName: string;
  exchangeRate: string;
  pesoTotal: string;
  tare: string;
  grossWeight: string;
  netWeight: string;
  totalItems: string;
  totalPackages: string;
  packages: string;
  marks: string;
  container: string;
  seal: string;
  freight: string;
  insurance: string;
  /** the receiver's `Extranjero`: its tax id abroad and nationality */
  foreignId: string;
  nationality: string;
  /** Aduana's sale modalities (CodModVenta) and transport ways (CodViaTransp) by code */
  saleModalities: Record<number, string>;
  transportWays: Record<number, string>;
}

const LABELS: Record<PrintLocale, PrintedLabels> = {
  es: {
    headerTaxId: "R.U.T.",
    customer: "Señor(es)",
    taxId: "RUT",
    activity: "Giro",
    address: "Dirección",
    commune: "Comuna",
    city: "Ciudad",
    email: "Correo",
    issueDate: "Fecha de emisión",
    dueDate: "Fecha de vencimiento",
    period: "Período",
    saleCondition: "Condición de venta",
    currency: "Moneda",
    code: "Código",
    description: "Descripción",
    quantity: "Cantidad",
    unitPrice: "Precio unitario",
    discount: "Descuento",
    value: "Valor",
    subtotal: "Subtotal",
    globalDiscount: "Descuento global",
    net: "Monto neto",
    exempt: "Monto exento",
    tax: (percent) => `IVA ${percent} %`,
    total: "Total",
    references: "Referencias",
    referenceType: "Tipo de documento",
    referenceFolio: "Folio",
    referenceDate: "Fecha",
    referenceReason: "Razón",
    transport: "Transporte",
    shippingType: "Tipo de traslado",
    destination: "Dirección de destino",
    carrier: "Transportista",
    licencePlate: "Patente",
    note: "Observaciones",
    draft: "BORRADOR",
    nonTaxDocument: "Documento no tributario",
    internalNumber: "N° interno",
    nonTaxNote:
      "Sin validez tributaria: numerado en la serie interna del emisor, antes de su habilitación ante el SII para " +
      "emitir documentos tributarios.",
    exemptLine: "exento",
    cash: "Contado",
    credit: "Crédito",
    // DTE_v10.xsd's labels of IndTraslado 1-7, 8-9 as LibreDTE names them (chile-dte.md 2.2)
    shippingTypes: {
      "1": "Operación constituye venta",
      "2": "Ventas por efectuar",
      "3": "Consignaciones",
      "4": "Entrega gratuita",
      "5": "Traslados internos",
      "6": "Otros traslados no venta",
      "7": "Guía de devolución",
      "8": "Traslado para exportación (no venta)",
      "9": "Venta para exportación",
    },
    referenceCodes: { 1: "Anula documento de referencia", 2: "Corrige texto", 3: "Corrige montos" },
    exportData: "Datos de exportación",
    saleModality: "Modalidad de venta",
    saleClause: "Cláusula de venta",
    saleClauseTotal: "Total cláusula de venta",
    transportWay: "Vía de transporte",
    loadingPort: "Puerto de embarque",
    unloadingPort: "Puerto de desembarque",
    receiverCountry: "País receptor",
    destinationCountry: "País de destino",
    exportPaymentForm: "Forma de pago exportación",
    currencyName: "Tipo de moneda",
    exchangeRate: "Tipo de cambio",
    pesoTotal: "Total en pesos",
    tare: "Tara",
    grossWeight: "Peso bruto",
    netWeight: "Peso neto",
    totalItems: "Total ítems",
    totalPackages: "Total bultos",
    packages: "Bultos",
    marks: "marcas",
    container: "contenedor",
    seal: "sello",
    freight: "Flete",
    insurance: "Seguro",
    foreignId: "ID extranjero",
    nationality: "Nacionalidad",
    // Aduana's names (Compendio de Normas Aduaneras, Anexo 51), as domain/sii-exports.ts lists the codes
    saleModalities: {
      1: "A firme",
      2: "Bajo condición",
      3: "En consignación libre",
      4: "En consignación con un mínimo a firme",
      9: "Sin pago",
    },
    transportWays: {
      1: "Marítima, fluvial y lacustre",
      4: "Aérea",
      5: "Postal",
      6: "Ferroviaria",
      7: "Carretera/terrestre",
      8: "Oleoductos, gasoductos",
      9: "Tendido eléctrico",
      10: "Otra",
      11: "Courier/aéreo",
    },
  },
  en: {
    headerTaxId: "Tax id",
    customer: "Customer",
    taxId: "Tax id",
    activity: "Activity",
    address: "Address",
    commune: "Commune",
    city: "City",
    email: "E-mail",
    issueDate: "Date",
    dueDate: "Due date",
    period: "Period",
    saleCondition: "Terms",
    currency: "Currency",
    code: "Code",
    description: "Item",
    quantity: "Quantity",
    unitPrice: "Unit price",
    discount: "Discount",
    value: "Total",
    subtotal: "Subtotal",
    globalDiscount: "Discount",
    net: "Net",
    exempt: "Exempt",
    tax: (percent) => `Tax (${percent} %)`,
    total: "Total",
    references: "References",
    referenceType: "Document",
    referenceFolio: "Number",
    referenceDate: "Date",
    referenceReason: "Reason",
    transport: "Transport",
    shippingType: "Shipping type",
    destination: "Deliver to",
    carrier: "Carrier",
    licencePlate: "Licence plate",
    note: "Notes",
    draft: "DRAFT",
    nonTaxDocument: "Non-tax document",
    internalNumber: "Internal No.",
    nonTaxNote:
      "Not valid as a tax document: numbered in the issuer's internal series, before it was set up with SII to issue " +
      "tax documents.",
    exemptLine: "exempt",
    cash: "Cash",
    credit: "Credit",
    shippingTypes: SHIPPING_TYPES,
    referenceCodes: { 1: "Cancels the document", 2: "Corrects text", 3: "Corrects amounts" },
    exportData: "Export data",
    saleModality: "Sale modality",
    saleClause: "Sale clause",
    saleClauseTotal: "Sale clause total",
    transportWay: "Transport",
    loadingPort: "Port of loading",
    unloadingPort: "Port of unloading",
    receiverCountry: "Receiver's country",
    destinationCountry: "Destination country",
    exportPaymentForm: "Export payment form",
    currencyName: "Currency (SII)",
    exchangeRate: "Exchange rate",
    pesoTotal: "Total in pesos",
    tare: "Tare",
    grossWeight: "Gross weight",
    netWeight: "Net weight",
    totalItems: "Total items",
    totalPackages: "Total packages",
    packages: "Packages",
    marks: "marks",
    container: "container",
    seal: "seal",
    freight: "Freight",
    insurance: "Insurance",
    foreignId: "Foreign tax id",
    nationality: "Nationality",
    saleModalities: {
      1: "Firm sale",
      2: "Conditional sale",
      3: "Free consignment",
      4: "Consignment with a firm minimum",
      9: "No payment",
    },
    transportWays: {
      1: "Sea, river and lake",
      4: "Air",
      5: "Post",
      6: "Rail",
      7: "Road",
      8: "Pipeline",
      9: "Power line",
      10: "Other",
      11: "Courier (air)",
    },
  },
};

export function printedLabels(locale: PrintLocale): PrintedLabels {
  return LABELS[locale];
}

/** How a document's heading prints: its title, number line, whether in the tax header box, and a note. */
export interface PrintedHeading {
  title: string;
  numberLine: string;
  /** the red header box of a tax document (with the SII office under it when it carries a DTE) */
  taxHeader: boolean;
  /** a note printed with the document's notes, null for none */
  note: string | null;
}

/**
 * The heading of a document of type `documentName` with `number` in series `numbering`
 * (domain/document-numbering.ts): a draft prints its type's name and the draft label; a document of
 * a regulated type (`hasLocalFormat`: its country's tax agency defines it, such as Chile's
 * electronic types) numbered in the internal series is no tax document, so it prints as
 * "Documento no tributario" / "Non-tax document" with "N° interno 12", outside the tax header box,
 * with a note saying so (docs/sii-setup.md "Numbering before enrollment"); any other prints its
 * type's name and "N° 12".
 */
export function printedHeading(
  doc: { documentName: string; number: number | null; numbering: string | null; hasLocalFormat: boolean },
  labels: PrintedLabels,
): PrintedHeading {
  if (doc.number === null) return { title: doc.documentName, numberLine: labels.draft, taxHeader: true, note: null };
  if (doc.numbering === "internal" && doc.hasLocalFormat) {
    return {
      title: labels.nonTaxDocument,
      numberLine: `${labels.internalNumber} ${doc.number}`,
      taxHeader: false,
      note: labels.nonTaxNote,
    };
  }
  return { title: doc.documentName, numberLine: `N° ${doc.number}`, taxHeader: true, note: null };
}

/** A shipping type code as printed: `1 (Operación constituye venta)`, `1 (Sale)`; an unknown code as is. */
export function printedShippingType(code: string, labels: PrintedLabels): string {
  const name = labels.shippingTypes[code];
  return name ? `${code} (${name})` : code;
}

const MONTHS_ES = [
  "enero",
  "febrero",
  "marzo",
  "abril",
  "mayo",
  "junio",
  "julio",
  "agosto",
  "septiembre",
  "octubre",
  "noviembre",
  "diciembre",
];

/**
 * A calendar date `yyyy-mm-dd` as printed: `dd-mm-yyyy` in Spanish (SII's form, "20-11-2026"),
 * `yyyy-mm-dd` in English. `long`: SII's long form, "20 de noviembre de 2026" (Spanish only).
 */
export function printedDate(iso: string, locale: PrintLocale, long = false): string {
  const [y, m, d] = iso.split("-");
  if (locale === "en") return iso;
  return long ? `${Number(d)} de ${MONTHS_ES[Number(m) - 1]} de ${y}` : `${d}-${m}-${y}`;
}

/**
 * A RUT in normal form (`76042235-5`) as printed, with thousands dots: `76.042.235-5`. Other text is returned as is.
 */
export function printedRut(rut: string): string {
  const m = /^(\d{1,8})-([\dK])$/.exec(rut);
  if (!m) return rut;
  return `${m[1].replace(/\B(?=(\d{3})+(?!\d))/g, ".")}-${m[2]}`;
}
