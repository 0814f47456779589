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
 * - unit codes (`CodUnidMedTara`, `CodUnidPesoBruto`, `CodUnidPesoNeto`: Aduana's "Unidades de
 *   medida") and package type codes (`CodTpoBultos`: Aduana's "Tipos de bultos"): transcribed from
 *   LibreDTE's copy of those Aduana tables (github.com/LibreDTE/libredte-lib-core,
 *   resources/data/repository/aduana_unidades.php and aduana_tipos_bulto.php), since Aduana's own
 *   Anexo 51 pages with them were not at hand; every entry of LibreDTE's copy is here.
 *
 * Only the codes this service needs are listed (units and package types: all LibreDTE lists). To
 * add one: take the code from the Aduana table named above (or the name from `TipMonType`), add
 * one entry to the table here, and a test line in test/domain/sii-exports.test.ts; nothing else
 * changes (the API takes the keys of these tables).
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
 * and the packages and weights (Aduana; none by default, a unit is required with its amount):
 *   tare, tare_unit                  Tara (whole number, up to 7 digits), CodUnidMedTara
 *   gross_weight, gross_weight_unit  PesoBruto (> 0, at most 2 decimals, 8 integer digits), CodUnidPesoBruto
 *   net_weight, net_weight_unit      PesoNeto (same), CodUnidPesoNeto
 *   total_items                      TotItems (whole number > 0, up to 18 digits)
 *   total_packages                   TotBultos (whole number > 0, up to 18 digits)
 *   packages                         TipoBultos, up to 10 objects { type (CodTpoBultos key, required),
 *                                    quantity (CantBultos, whole > 0, up to 10 digits), marks (Marcas,
 *                                    255), container_id (IdContainer, 25), seal (Sello, 20),
 *                                    seal_issuer (EmisorSello, 70) }
 *   freight, insurance               MntFlete, MntSeguro: in the document's currency, > 0, at most
 *                                    4 decimals and 99999999999999.9999 (Dec14_4Type)
 * Units are keys of ADUANA_UNITS ("KN", "TMB", …), package types keys of ADUANA_PACKAGE_TYPES
 * ("CAJA DE CARTON", "CONT20", …). Numbers are taken as strings or JSON numbers and kept as decimal
 * strings (decimal.js), never as JS floats. `total_packages` is not checked against the packages'
 * quantities (SII does not tie them).
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

/**
 * Unit (Aduana's abbreviation) → Aduana code `CodUnidMedTara`, `CodUnidPesoBruto`, `CodUnidPesoNeto`
 * ("Unidades de medida").
 */
export const ADUANA_UNITS: Readonly<Record<string, number>> = {
  /** tonelada métrica bruta */
  TMB: 1,
  /** quintal métrico bruto */
  QMB: 2,
  /** megawatt hora */
  MKWH: 3,
  /** tonelada métrica neta */
  TMN: 4,
  /** kilolitro */
  KLT: 5,
  /** kilogramo neto */
  KN: 6,
  /** gramo neto */
  GN: 7,
  /** hectolitro */
  HL: 8,
  /** litro */
  LT: 9,
  /** unidad */
  U: 10,
  /** docena */
  DOC: 11,
  /** unidad (juego) */
  "U(JGO)": 12,
  /** miles de unidades */
  MU: 13,
  /** metro */
  MT: 14,
  /** metro cuadrado */
  MT2: 15,
  /** metro cúbico */
  MCUB: 16,
  PAR: 17,
  /** kilogramo neto de fino contenido */
  KNFC: 18,
  CARTON: 19,
  /** kilowatt hora */
  KWH: 20,
  /** barril */
  BAR: 23,
  /** metro cuadrado de 1 mm de espesor */
  "M2/1MM": 24,
  /** sin unidad de medida */
  "S.U.M": 99,
};

/** Package type (Aduana's name) → Aduana code `CodTpoBultos` ("Tipos de bultos"). */
export const ADUANA_PACKAGE_TYPES: Readonly<Record<string, number>> = {
  POLVO: 1,
  GRANOS: 2,
  NODULOS: 3,
  LIQUIDO: 4,
  GAS: 5,
  PIEZA: 10,
  TUBO: 11,
  CILINDRO: 12,
  ROLLOS: 13,
  BARRA: 16,
  LINGOTE: 17,
  TRONCOS: 18,
  BLOQUE: 19,
  ROLLIZO: 20,
  CAJON: 21,
  "CAJA DE CARTON": 22,
  FARDO: 23,
  BAUL: 24,
  COFRE: 25,
  ARMAZON: 26,
  BANDEJA: 27,
  CAJAMADERA: 28,
  CAJALATA: 29,
  BOTELLAGAS: 31,
  BOTELLA: 32,
  JAULA: 33,
  BIDON: 34,
  JABA: 35,
  CESTA: 36,
  BARRILETE: 37,
  TONEL: 38,
  PIPA: 39,
  CAJANOESP: 40,
  JARRO: 41,
  FRASCO: 42,
  DAMAJUANA: 43,
  BARRIL: 44,
  TAMBOR: 45,
  CUNETE: 46,
  TARRO: 47,
  CUBO: 51,
  PAQUETE: 61,
  SACO: 62,
  MALETA: 63,
  BOLSA: 64,
  BALA: 65,
  RED: 66,
  SOBRE: 67,
  /** contenedor de 20 pies */
  CONT20: 73,
  /** contenedor de 40 pies */
  CONT40: 74,
  /** contenedor refrigerado de 20 pies */
  REEFER20: 75,
  /** contenedor refrigerado de 40 pies */
  REEFER40: 76,
  ESTANQUE: 77,
  CONTNOESP: 78,
  PALLETS: 80,
  TABLERO: 81,
  LAMINA: 82,
  CARRETE: 83,
  AUTOMOTOR: 85,
  ATAUD: 86,
  MAQUINARIA: 88,
  PLANCHAS: 89,
  ATADO: 90,
  BOBINA: 91,
  BULTONOESP: 93,
  "SIN BULTO": 98,
  "S/EMBALAR": 99,
};

/** One kind of package (`TipoBultos`) as the API takes it. */
export interface ExportPackage {
  type: string;
  quantity?: string;
  marks?: string;
  container_id?: string;
  seal?: string;
  seal_issuer?: string;
}

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
  tare?: string;
  tare_unit?: string;
  gross_weight?: string;
  gross_weight_unit?: string;
  net_weight?: string;
  net_weight_unit?: string;
  total_items?: string;
  total_packages?: string;
  packages?: ExportPackage[];
  freight?: string;
  insurance?: string;
}

const TABLES: Record<string, Readonly<Record<string, number>>> = {
  sale_modality: ADUANA_SALE_MODALITIES,
  sale_clause: ADUANA_SALE_CLAUSES,
  transport: ADUANA_TRANSPORT_WAYS,
  loading_port: ADUANA_PORTS,
  unloading_port: ADUANA_PORTS,
  destination_country: ADUANA_COUNTRY_CODES,
  payment_form: ADUANA_PAYMENT_FORMS,
  tare_unit: ADUANA_UNITS,
  gross_weight_unit: ADUANA_UNITS,
  net_weight_unit: ADUANA_UNITS,
};
/** Whole-number settings: the most digits the schema allows. */
const WHOLE: Record<string, number> = { tare: 7, total_items: 18, total_packages: 18 };
/** Decimal settings: at most `places` decimals and `max` (PesoBruto/PesoNeto: totalDigits 10, 2 decimals). */
const DECIMAL: Record<string, { places: number; max: string }> = {
  gross_weight: { places: 2, max: "99999999.99" },
  net_weight: { places: 2, max: "99999999.99" },
  freight: { places: 4, max: "99999999999999.9999" },
  insurance: { places: 4, max: "99999999999999.9999" },
};
/** A measured amount and the unit it needs. */
const UNIT_OF: Record<string, string> = {
  tare: "tare_unit",
  gross_weight: "gross_weight_unit",
  net_weight: "net_weight_unit",
};
/** Text settings and their maximum lengths. */
const TEXT: Record<string, number> = { foreign_id: 20 };
const PACKAGE_TEXT: Record<string, number> = { marks: 255, container_id: 25, seal: 20, seal_issuer: 70 };
const PACKAGE_KEYS = ["type", "quantity", ...Object.keys(PACKAGE_TEXT)];
const KEYS = [
  ...Object.keys(TABLES),
  "exchange_rate",
  ...Object.keys(TEXT),
  ...Object.keys(WHOLE),
  ...Object.keys(DECIMAL),
  "packages",
];

/** Why `text` is not a whole number > 0 of at most `digits` digits, or null. */
export function wholeProblem(text: string, digits: number): string | null {
  if (!/^\d+$/.test(text) || /^0+$/.test(text)) return "must be a whole number greater than 0";
  if (text.replace(/^0+/, "").length > digits) return `must have at most ${digits} digits`;
  return null;
}

/** Why `text` is not a decimal > 0 with at most `places` decimals and at most `max`, or null. */
export function decimalProblem(text: string, places: number, max: string): string | null {
  let value: Decimal;
  try {
    value = toDecimal(text);
  } catch {
    return "must be a decimal number";
  }
  if (!value.isFinite() || value.lessThanOrEqualTo(0)) return "must be greater than 0";
  if (value.decimalPlaces() > places) return `must have at most ${places} decimals`;
  if (value.greaterThan(max)) return `must be at most ${max}`;
  return null;
}

/** A setting's value as trimmed text: strings and numbers; null when empty, a problem when another type. */
function scalar(value: unknown): { text: string | null; problem?: string } {
  if (value === null || value === undefined || value === "") return { text: null };
  if (typeof value !== "string" && typeof value !== "number") return { text: null, problem: "must be a string" };
  const text = String(value).trim();
  return { text: text === "" ? null : text };
}

/** The `packages` list (TipoBultos, at most 10), problems under `field`. */
function packagesOf(raw: unknown, field: string, problems: FieldProblem[]): ExportPackage[] | undefined {
  if (raw === null || raw === undefined) return undefined;
  if (!Array.isArray(raw)) {
    problems.push({ field, message: "must be a list of packages" });
    return undefined;
  }
  if (raw.length > 10) problems.push({ field, message: "must have at most 10 packages (TipoBultos)" });
  const packages: ExportPackage[] = [];
  raw.slice(0, 10).forEach((item: unknown, i) => {
    const at = (key: string) => `${field}.${i}${key ? `.${key}` : ""}`;
    if (!item || typeof item !== "object" || Array.isArray(item)) {
      problems.push({ field: at(""), message: "must be an object" });
      return;
    }
    const pkg: Record<string, string> = {};
    for (const [key, value] of Object.entries(item as Record<string, unknown>)) {
      if (!PACKAGE_KEYS.includes(key)) {
        problems.push({ field: at(key), message: `unknown package key; one of ${PACKAGE_KEYS.join(", ")}` });
        continue;
      }
      const { text, problem } = scalar(value);
      if (problem) problems.push({ field: at(key), message: problem });
      if (text === null) continue;
      if (key === "type") {
        const known = text.toUpperCase();
        if (!Object.hasOwn(ADUANA_PACKAGE_TYPES, known)) {
          problems.push({
            field: at(key),
            message: `unknown package type ${text}; one of ${Object.keys(ADUANA_PACKAGE_TYPES).join(", ")}`,
          });
        } else pkg.type = known;
      } else if (key === "quantity") {
        const bad = wholeProblem(text, 10);
        if (bad) problems.push({ field: at(key), message: bad });
        else pkg.quantity = text.replace(/^0+/, "");
      } else if (text.length > PACKAGE_TEXT[key]) {
        problems.push({ field: at(key), message: `must be at most ${PACKAGE_TEXT[key]} characters` });
      } else pkg[key] = text;
    }
    if (!pkg.type && !problems.some((p) => p.field === at("type")))
      problems.push({ field: at("type"), message: "is required (CodTpoBultos)" });
    if (pkg.type) packages.push(pkg as unknown as ExportPackage);
  });
  return packages;
}

/**
 * The export settings in `fiscalSettings.export` and every problem with them (fields
 * `fiscal_settings.export.<key>`). No `export` key: empty settings. Examples:
 * { export: { sale_clause: "FOB", exchange_rate: "950.25" } } → settings, no problems;
 * { export: { sale_clause: "XYZ" } } → "unknown sale clause XYZ; one of CIF, CFR, …";
 * { export: { gross_weight: 1250.5 } } → "gross_weight_unit: is required with gross_weight".
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
  const settings: Record<string, unknown> = {};
  const given = new Set<string>();
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (!KEYS.includes(key)) {
      problems.push({ field: field(key), message: `unknown export setting; one of ${KEYS.join(", ")}` });
      continue;
    }
    if (key === "packages") {
      const packages = packagesOf(value, field(key), problems);
      if (packages?.length) settings.packages = packages;
      continue;
    }
    const { text, problem } = scalar(value);
    if (problem) problems.push({ field: field(key), message: problem });
    if (text === null) continue;
    given.add(key);
    const table = TABLES[key];
    if (table) {
      const known = key === "destination_country" || key.endsWith("_unit") ? text.toUpperCase() : text;
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
      const bad = exchangeRateProblem(text);
      if (bad) problems.push({ field: field(key), message: bad });
      else settings[key] = toDecimal(text).toString();
    } else if (WHOLE[key] !== undefined) {
      const bad = wholeProblem(text, WHOLE[key]);
      if (bad) problems.push({ field: field(key), message: bad });
      else settings[key] = text.replace(/^0+/, "");
    } else if (DECIMAL[key]) {
      const bad = decimalProblem(text, DECIMAL[key].places, DECIMAL[key].max);
      if (bad) problems.push({ field: field(key), message: bad });
      else settings[key] = toDecimal(text).toString();
    } else if (text.length > TEXT[key]) {
      problems.push({ field: field(key), message: `must be at most ${TEXT[key]} characters` });
    } else settings[key] = text;
  }
  for (const [amount, unit] of Object.entries(UNIT_OF)) {
    if (given.has(amount) && !given.has(unit))
      problems.push({ field: field(unit), message: `is required with ${amount}` });
    if (given.has(unit) && !given.has(amount))
      problems.push({ field: field(amount), message: `is required with ${unit}` });
  }
  return { settings: settings as ExportSettings, problems };
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
  /** `Tara` and `CodUnidMedTara` */
  tare?: string;
  tareUnit?: number;
  /** `PesoBruto` (decimal text) and `CodUnidPesoBruto` */
  grossWeight?: string;
  grossWeightUnit?: number;
  /** `PesoNeto` (decimal text) and `CodUnidPesoNeto` */
  netWeight?: string;
  netWeightUnit?: number;
  /** `TotItems`, `TotBultos` (whole-number text) */
  totalItems?: string;
  totalPackages?: string;
  /** `TipoBultos`, at most 10 */
  packages?: ResolvedPackage[];
  /** `MntFlete`, `MntSeguro`: decimal text in the document's currency */
  freight?: string;
  insurance?: string;
}

/** One `TipoBultos`: CodTpoBultos, CantBultos, Marcas, IdContainer, Sello, EmisorSello. */
export interface ResolvedPackage {
  type: number;
  quantity?: string;
  marks?: string;
  containerId?: string;
  seal?: string;
  sealIssuer?: string;
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
    tare: s.tare,
    tareUnit: pick(ADUANA_UNITS, s.tare_unit),
    grossWeight: s.gross_weight,
    grossWeightUnit: pick(ADUANA_UNITS, s.gross_weight_unit),
    netWeight: s.net_weight,
    netWeightUnit: pick(ADUANA_UNITS, s.net_weight_unit),
    totalItems: s.total_items,
    totalPackages: s.total_packages,
    packages: s.packages?.map((p) => ({
      type: ADUANA_PACKAGE_TYPES[p.type],
      quantity: p.quantity,
      marks: p.marks,
      containerId: p.container_id,
      seal: p.seal,
      sealIssuer: p.seal_issuer,
    })),
    freight: s.freight,
    insurance: s.insurance,
  };
}
