/**
 * Export documents (SII DTE 110 factura de exportación, 111 nota de débito de exportación, 112 nota
 * de crédito de exportación; docs/sii-dte.md "Export documents"): the code tables the DTE needs and
 * the export settings a document carries. Pure.
 *
 * Sources of the codes:
 * - currency names (`TpoMoneda`): SII's schema SiiTypes_v10.xsd `TipMonType` ("Tipos de Moneda de
 *   Aduana", schema/sii/); each name is one of its enumeration values, so the schema itself checks
 *   this table;
 * - country, port, sale clause, sale modality, transport way and export payment form codes: the
 *   Servicio Nacional de Aduanas' code tables (Compendio de Normas Aduaneras, Anexo 51: "Tabla de
 *   Países", "Puertos", "Cláusulas de compraventa", "Modalidades de venta", "Vías de transporte",
 *   "Formas de pago"), which DTE_v10.xsd names for `CodPaisRecep`/`CodPaisDestin`,
 *   `CodPtoEmbarque`/`CodPtoDesemb`, `CodClauVenta`, `CodModVenta`, `CodViaTransp` and `FmaPagExp`.
 *
 * Only the codes this service needs are listed. To add one: take the code from the Aduana table
 * named above (or the name from `TipMonType`), add one entry to the table here, and a test line in
 * test/domain/sii-exports.test.ts; nothing else changes (the API takes the keys of these tables).
 *
 * Export settings: an invoice's `fiscal_settings.export` object (REST and GraphQL
 * `fiscalSettings`), every key optional, validated when the invoice is created or updated:
 *   sale_modality       CodModVenta key, default "firm" (1, a firme)
 *   sale_clause         CodClauVenta key ("FOB", "CIF", …), none by default
 *   transport           CodViaTransp key ("sea", "air", …), none by default
 *   loading_port        CodPtoEmbarque key ("San Antonio", …), none by default
 *   unloading_port      CodPtoDesemb key, none by default
 *   destination_country CodPaisDestin, an ISO 3166 alpha-2 code; default the customer's country
 *   payment_form        FmaPagExp key, default "COB1" (1, cobranza hasta un año)
 *   exchange_rate       TpoCambio: pesos per unit of the document's currency, > 0, at most 4
 *                       decimals and 999999.9999 (Dec6_4Type); with it the DTE carries OtraMoneda
 *                       in PESO CL; without it, none
 *   foreign_id          Extranjero/NumId: the receiver's tax id in its country (20), default the
 *                       customer's tax id
 * The receiver's country (`CodPaisRecep`, `Nacionalidad`) is the customer's country. A note (111,
 * 112) takes the settings of the invoice it references.
 */
import { Decimal, toDecimal, type DecimalInput } from "./money.js";
import type { FieldProblem } from "./credit-note-voids.js";
import { ValidationError } from "./errors.js";

/** Export DTE types (DTE_v10.xsd `EXPType`): they are written as `Exportaciones`, not `Documento`. */
export const EXPORT_DTE_TYPES: readonly number[] = [110, 111, 112];

/** ISO 4217 code → SII/Aduana currency name (`TpoMoneda`, SiiTypes_v10.xsd TipMonType). */
export const SII_CURRENCY_NAMES: Readonly<Record<string, string>> = {
  CLP: "PESO CL",
  USD: "DOLAR USA",
  EUR: "EURO",
  GBP: "LIBRA EST",
  CAD: "DOLAR CAN",
  AUD: "DOLAR AUST",
  NZD: "DOLAR NZ",
  HKD: "DOLAR HK",
  SGD: "DOLAR SIN",
  JPY: "YEN",
  CNY: "RENMINBI",
  CHF: "FRANCO SZ",
  SEK: "CORONA SC",
  NOK: "CORONA NOR",
  DKK: "CORONA DIN",
  MXN: "PESO MEX",
  COP: "PESO COL",
  UYU: "PESO URUG",
  PEN: "NUEVO SOL",
  BOB: "BOLIVIANO",
  PYG: "GUARANI",
  ZAR: "RAND",
  INR: "RUPIA",
  AED: "DIRHAM",
};

/** ISO 3166 alpha-2 → Aduana country code ("Tabla de Países"). */
export const ADUANA_COUNTRY_CODES: Readonly<Record<string, number>> = {
  AR: 224,
  AU: 406,
  BO: 221,
  BR: 220,
  CA: 226,
  CL: 997,
  CN: 336,
  CO: 202,
  DE: 563,
  EC: 218,
  ES: 517,
  FR: 505,
  GB: 510,
  IT: 504,
  JP: 331,
  KR: 333,
  MX: 216,
  NL: 515,
  PE: 219,
  PY: 222,
  US: 225,
  UY: 223,
};

/** Sale clause (Incoterm) → Aduana code `CodClauVenta` ("Cláusulas de compraventa"). */
export const ADUANA_SALE_CLAUSES: Readonly<Record<string, number>> = {
  CIF: 1,
  CFR: 2,
  EXW: 3,
  FAS: 4,
  FOB: 5,
  "S/CL": 6,
  OTHER: 8,
  DDP: 9,
  FCA: 10,
  CPT: 11,
  CIP: 12,
  DAT: 17,
  DAP: 18,
};

/** Sale modality → Aduana code `CodModVenta` ("Modalidades de venta"). */
export const ADUANA_SALE_MODALITIES: Readonly<Record<string, number>> = {
  /** a firme */
  firm: 1,
  /** bajo condición */
  conditional: 2,
  /** en consignación libre */
  consignment: 3,
  /** en consignación con un mínimo a firme */
  consignment_minimum: 4,
  /** sin pago */
  no_payment: 9,
};

/** Transport way → Aduana code `CodViaTransp` ("Vías de transporte"). */
export const ADUANA_TRANSPORT_WAYS: Readonly<Record<string, number>> = {
  /** marítima, fluvial y lacustre */
  sea: 1,
  air: 4,
  postal: 5,
  rail: 6,
  road: 7,
  /** oleoductos, gasoductos */
  pipeline: 8,
  /** tendido eléctrico */
  power_line: 9,
  other: 10,
  air_courier: 11,
};

/** Port (as Aduana names it) → Aduana code `CodPtoEmbarque` / `CodPtoDesemb` ("Puertos"). */
export const ADUANA_PORTS: Readonly<Record<string, number>> = {
  Arica: 901,
  Iquique: 902,
  Antofagasta: 903,
  Coquimbo: 904,
  Valparaíso: 905,
  "San Antonio": 906,
  Talcahuano: 907,
  "San Vicente": 908,
  "Puerto Montt": 910,
  "Punta Arenas": 912,
  "Aeropuerto Arturo Merino Benítez": 992,
  "Los Libertadores": 965,
  "Los Angeles": 174,
  "Long Beach": 175,
  Houston: 159,
  "Buenos Aires": 262,
  Santos: 292,
  Callao: 252,
  Shanghai: 411,
  Yokohama: 444,
  Busan: 422,
  Rotterdam: 622,
  Hamburgo: 592,
  Valencia: 569,
  Barcelona: 563,
};

/** Export payment form → Aduana code `FmaPagExp` ("Formas de pago"). */
export const ADUANA_PAYMENT_FORMS: Readonly<Record<string, number>> = {
  /** cobranza hasta un año */
  COB1: 1,
  /** cobranza más de un año */
  COBRANZA: 2,
  /** acreditivo hasta un año */
  ACRED: 11,
  /** crédito de bancos y organismos financieros más de un año */
  CBOF: 12,
  /** sin pago */
  SINPAGO: 21,
  /** anticipo */
  ANTICIPO: 32,
};

/** The export settings as the API takes them (`fiscal_settings.export`), keys of the tables above. */
export interface ExportSettings {
  sale_modality?: string;
  sale_clause?: string;
  transport?: string;
  loading_port?: string;
  unloading_port?: string;
  destination_country?: string;
  payment_form?: string;
  exchange_rate?: string;
  foreign_id?: string;
}

const TABLES: Record<string, Readonly<Record<string, number>>> = {
  sale_modality: ADUANA_SALE_MODALITIES,
  sale_clause: ADUANA_SALE_CLAUSES,
  transport: ADUANA_TRANSPORT_WAYS,
  loading_port: ADUANA_PORTS,
  unloading_port: ADUANA_PORTS,
  destination_country: ADUANA_COUNTRY_CODES,
  payment_form: ADUANA_PAYMENT_FORMS,
};
const KEYS = [...Object.keys(TABLES), "exchange_rate", "foreign_id"];

/**
 * The export settings in `fiscalSettings.export` and every problem with them (fields
 * `fiscal_settings.export.<key>`). No `export` key: empty settings. Examples:
 * { export: { sale_clause: "FOB", exchange_rate: "950.25" } } → settings, no problems;
 * { export: { sale_clause: "XYZ" } } → "unknown sale clause XYZ; one of CIF, CFR, …".
 */
export function exportSettingsOf(fiscalSettings: unknown): { settings: ExportSettings; problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  const raw =
    fiscalSettings && typeof fiscalSettings === "object" ? (fiscalSettings as Record<string, unknown>).export : null;
  if (raw === undefined || raw === null) return { settings: {}, problems };
  const field = (key: string) => `fiscal_settings.export${key ? `.${key}` : ""}`;
  if (typeof raw !== "object" || Array.isArray(raw)) {
    problems.push({ field: field(""), message: "must be an object" });
    return { settings: {}, problems };
  }
  const settings: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (!KEYS.includes(key)) {
      problems.push({ field: field(key), message: `unknown export setting; one of ${KEYS.join(", ")}` });
      continue;
    }
    if (value === null || value === undefined || value === "") continue;
    if (typeof value !== "string" && typeof value !== "number") {
      problems.push({ field: field(key), message: "must be a string" });
      continue;
    }
    const text = String(value).trim();
    const table = TABLES[key];
    if (table) {
      const known = key === "destination_country" ? text.toUpperCase() : text;
      if (!Object.hasOwn(table, known)) {
        problems.push({
          field: field(key),
          message:
            `unknown ${key.replace(/_/g, " ")} ${text}; ` +
            `one of ${Object.keys(table).join(", ")} (src/domain/sii-exports.ts)`,
        });
        continue;
      }
      settings[key] = known;
    } else if (key === "exchange_rate") {
      const problem = exchangeRateProblem(text);
      if (problem) problems.push({ field: field(key), message: problem });
      else settings[key] = toDecimal(text).toString();
    } else {
      if (text.length > 20) problems.push({ field: field(key), message: "must be at most 20 characters" });
      else settings[key] = text;
    }
  }
  return { settings, problems };
}

/** Why `rate` is not a TpoCambio (Dec6_4Type: > 0, at most 4 decimals, at most 999999.9999), or null. */
export function exchangeRateProblem(rate: string): string | null {
  let value: Decimal;
  try {
    value = toDecimal(rate);
  } catch {
    return "must be a decimal number of pesos per unit";
  }
  if (!value.isFinite() || value.lessThanOrEqualTo(0)) return "must be greater than 0";
  if (value.decimalPlaces() > 4) return "must have at most 4 decimals";
  if (value.greaterThan("999999.9999")) return "must be at most 999999.9999";
  return null;
}

/** The SII currency name of ISO currency `currencyId`, or null when the table has none. */
export function siiCurrencyName(currencyId: string): string | null {
  return SII_CURRENCY_NAMES[currencyId.toUpperCase()] ?? null;
}

/**
 * The amounts of `OtraMoneda` in pesos: the document's exempt amount and total times `rate`,
 * rounded half away from zero to whole pesos. Example: USD 1 234.50 at 950.25 → 1 173 084
 * (1 234.50 × 950.25 = 1 173 083.625).
 */
export function pesoAmounts(exempt: DecimalInput, total: DecimalInput, rate: DecimalInput) {
  const convert = (d: DecimalInput) => toDecimal(d).times(toDecimal(rate)).toDecimalPlaces(0, Decimal.ROUND_HALF_UP);
  return { exempt: convert(exempt), total: convert(total) };
}

/** An export DTE's resolved codes (infra/taxagency/sii/dte.ts DteExport, less the currency unit). */
export interface ResolvedExport {
  currencyName: string;
  exchangeRate?: string;
  paymentForm: number;
  saleModality: number;
  saleClause?: number;
  transportWay?: number;
  loadingPort?: number;
  unloadingPort?: number;
  receiverCountry?: number;
  destinationCountry?: number;
  foreignId?: string;
  nationality?: number;
}

/**
 * The codes an export DTE carries, from the document's currency, its (invoice's) export settings
 * and the customer's country and tax id, with the defaults of the module header. Throws
 * ValidationError on `currency` when SII has no name for the currency in SII_CURRENCY_NAMES.
 * Example: USD, { sale_clause: "FOB" }, customer US with tax id "12-3456789" → { currencyName
 * "DOLAR USA", paymentForm 1, saleModality 1, saleClause 5, receiverCountry 225,
 * destinationCountry 225, nationality 225, foreignId "12-3456789" }.
 */
export function resolveExport(input: {
  currencyId: string;
  settings: ExportSettings;
  customerCountry: string | null;
  customerTaxId: string | null;
}): ResolvedExport {
  const currencyName = siiCurrencyName(input.currencyId);
  if (!currencyName)
    throw ValidationError.field(
      "currency",
      `SII has no currency name for ${input.currencyId} in this service's table; ` +
        "add it to SII_CURRENCY_NAMES (src/domain/sii-exports.ts) from SII's TipMonType",
    );
  const s = input.settings;
  const country = input.customerCountry ? ADUANA_COUNTRY_CODES[input.customerCountry.toUpperCase()] : undefined;
  const pick = (table: Readonly<Record<string, number>>, key: string | undefined) =>
    key === undefined ? undefined : table[key];
  const foreignId = s.foreign_id ?? input.customerTaxId ?? undefined;
  return {
    currencyName,
    exchangeRate: s.exchange_rate,
    paymentForm: ADUANA_PAYMENT_FORMS[s.payment_form ?? "COB1"],
    saleModality: ADUANA_SALE_MODALITIES[s.sale_modality ?? "firm"],
    saleClause: pick(ADUANA_SALE_CLAUSES, s.sale_clause),
    transportWay: pick(ADUANA_TRANSPORT_WAYS, s.transport),
    loadingPort: pick(ADUANA_PORTS, s.loading_port),
    unloadingPort: pick(ADUANA_PORTS, s.unloading_port),
    receiverCountry: country,
    destinationCountry: pick(ADUANA_COUNTRY_CODES, s.destination_country) ?? country,
    foreignId: foreignId ? foreignId.slice(0, 20) : undefined,
    nationality: country,
  };
}
