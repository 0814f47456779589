/**
 * Format rules of Chile's DTE XML (docs/sii-dte.md; the SII schemas in
 * schema/sii/ win). Pure: text cut to SII's maximum lengths and restricted to ISO-8859-1, RUTs in
 * normal form, dates yyyy-mm-dd, time stamps yyyy-mm-ddThh:mm:ss (Chilean local time), amounts as
 * integers and quantities with at most 6 decimals, and the CAF expiry rule.
 *
 * Example: siiText("Servicio de implementación — fase 1", 20) = "Servicio de implemen"
 * (the em dash would become "-"); siiRut("76.042.235-5") = "76042235-5".
 */
import { Decimal, toDecimal, type DecimalInput } from "./money.js";
import { ValidationError } from "./errors.js";
import { normalizeRut } from "./rut.js";

/**
 * DTE types this service issues: inside `Documento`, DTE_v10.xsd `DTEType` less 46, and the
 * boletas 39 and 41 (EnvioBOLETA_v11.xsd `BOLETADefType`); inside `Exportaciones`, the export
 * types 110, 111 and 112 (`EXPType`, domain/sii-exports.ts).
 */
export const DTE_TYPES = {
  33: "Factura electrónica",
  34: "Factura no afecta o exenta electrónica",
  39: "Boleta electrónica",
  41: "Boleta no afecta o exenta electrónica",
  52: "Guía de despacho electrónica",
  56: "Nota de débito electrónica",
  61: "Nota de crédito electrónica",
  110: "Factura de exportación electrónica",
  111: "Nota de débito de exportación electrónica",
  112: "Nota de crédito de exportación electrónica",
} as const;

export type DteType = keyof typeof DTE_TYPES;

export function isDteType(code: number): code is DteType {
  return Object.hasOwn(DTE_TYPES, code);
}

/** The SII name of DTE type `code` (DTE_TYPES), e.g. 33 → "Factura electrónica"; "DTE tipo 46" for another code. */
export function dteTypeName(code: number): string {
  return isDteType(code) ? DTE_TYPES[code] : `DTE tipo ${code}`;
}

/** Boletas (chile-dte.md section 1): prices include IVA, `BOLETADefType` layout, sent in an EnvioBOLETA. */
export const BOLETA_TYPES: readonly number[] = [39, 41];

/** `IndServicio` of a boleta: 1 periodic services, 2 periodic home services, 3 sales and services, 4 shows. */
export type BoletaServiceIndicator = 1 | 2 | 3 | 4;

/** Types whose CAF expires 6 months after its authorisation date (chile-dte.md section 4). */
export const EXPIRING_CAF_TYPES: readonly number[] = [33, 43, 46, 56, 61];

/** Types that must carry at least one `Referencia` (chile-dte.md section 2.6). */
export const REFERENCE_REQUIRED_TYPES: readonly number[] = [56, 61, 111, 112];

/** SII's maximum lengths (DTE_v10.xsd / SiiTypes_v10.xsd), by element name. */
export const SII_MAX_LENGTH = {
  RznSoc: 100,
  GiroEmis: 80,
  Telefono: 20,
  CorreoEmisor: 80,
  Sucursal: 20,
  DirOrigen: 70,
  CmnaOrigen: 20,
  CiudadOrigen: 20,
  CdgVendedor: 60,
  CdgIntRecep: 20,
  RznSocRecep: 100,
  GiroRecep: 40,
  Contacto: 80,
  CorreoRecep: 80,
  DirRecep: 70,
  CmnaRecep: 20,
  CiudadRecep: 20,
  Patente: 8,
  DirDest: 70,
  CmnaDest: 20,
  CiudadDest: 20,
  TpoCodigo: 10,
  VlrCodigo: 35,
  NmbItem: 80,
  DscItem: 1000,
  UnmdItem: 4,
  GlosaDR: 45,
  TpoDocRef: 3,
  FolioRef: 18,
  RazonRef: 90,
  /** TED/DD/RSR: receiver name */
  RSR: 40,
  /** TED/DD/IT1: first line's name */
  IT1: 40,
} as const;

/** Typographic characters outside ISO-8859-1 and their plain replacements. */
const REPLACEMENTS: Record<string, string> = {
  "\u2018": "'",
  "\u2019": "'",
  "\u201A": "'",
  "\u201B": "'",
  "\u201C": '"',
  "\u201D": '"',
  "\u201E": '"',
  "\u2010": "-",
  "\u2011": "-",
  "\u2012": "-",
  "\u2013": "-",
  "\u2014": "-",
  "\u2212": "-",
  "\u2026": "...",
  "\u20AC": "EUR",
  "\u2022": "*",
  "\u00A0": " ",
  "\u202F": " ",
  "\u2009": " ",
};

/**
 * Text for an SII element: NFC-normalized (so "n" + combining tilde is one "ñ"), typographic
 * quotes/dashes replaced, characters XML 1.0 or ISO-8859-1 cannot carry replaced by "?" (control
 * characters other than tab/newline dropped), trimmed, then cut to `max` characters (and trimmed
 * again). Returns undefined for empty text, so optional elements are left out.
 */
export function siiText(value: string | null | undefined, max: number): string | undefined {
  if (value === null || value === undefined) return undefined;
  let out = "";
  for (const ch of value.normalize("NFC")) {
    const code = ch.codePointAt(0)!;
    if (REPLACEMENTS[ch] !== undefined) out += REPLACEMENTS[ch];
    else if (code === 0x09 || code === 0x0a || code === 0x0d) out += ch;
    else if (code < 0x20 || (code >= 0x7f && code < 0xa0)) continue;
    else if (code > 0xff) out += "?";
    else out += ch;
  }
  const text = [...out.trim()].slice(0, max).join("").trimEnd();
  return text === "" ? undefined : text;
}

/** Like siiText, for required elements: throws ValidationError naming `field` when empty. */
export function requiredSiiText(value: string | null | undefined, max: number, field: string): string {
  const text = siiText(value, max);
  if (text === undefined) throw ValidationError.field(field, "is required");
  return text;
}

/** RUT in SII's XML form (`76042235-5`); throws ValidationError naming `field` when invalid. */
export function siiRut(value: string, field: string): string {
  const rut = normalizeRut(value);
  if (rut === null) throw ValidationError.field(field, "is not a valid RUT");
  return rut;
}

/** A date `yyyy-mm-dd` between 2000-01-01 and 2050-12-31 (SII `FechaType`). */
export function siiDate(value: string, field: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const date = match ? new Date(`${value}T00:00:00Z`) : null;
  if (!match || !date || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value) {
    throw ValidationError.field(field, "must be a date yyyy-mm-dd");
  }
  if (value < "2000-01-01" || value > "2050-12-31")
    throw ValidationError.field(field, "must be between 2000-01-01 and 2050-12-31");
  return value;
}

/** siiTimestamp's formatter per time zone (building one costs more than formatting with it). */
const TIMESTAMP_FORMATS = new Map<string, Intl.DateTimeFormat>();

/**
 * SII time stamp `yyyy-mm-ddThh:mm:ss` (no zone) of `instant` in `timeZone` (default Chile's
 * America/Santiago: implementations stamp Chilean local time). A string already in that form is
 * checked and returned unchanged.
 */
export function siiTimestamp(instant: Date | string, timeZone = "America/Santiago"): string {
  if (typeof instant === "string") {
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(instant)) {
      throw ValidationError.field("timestamp", "must be yyyy-mm-ddThh:mm:ss");
    }
    siiDate(instant.slice(0, 10), "timestamp");
    return instant;
  }
  let format = TIMESTAMP_FORMATS.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-CA", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
    });
    TIMESTAMP_FORMATS.set(timeZone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(instant).map((p) => [p.type, p.value]));
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}`;
}

/** A whole CLP amount as SII writes it (`MontoType`): throws when it has decimals or is negative. */
export function siiAmount(value: DecimalInput, field: string): string {
  const d = toDecimal(value);
  if (!d.isInteger() || d.isNegative()) throw ValidationError.field(field, "must be a whole non-negative peso amount");
  return d.toFixed(0);
}

/** A decimal with at most `places` decimals (half away from zero), no trailing zeros: 2.50 -> "2.5". */
export function siiDecimal(value: DecimalInput, places: number): string {
  return toDecimal(value).toDecimalPlaces(places, Decimal.ROUND_HALF_UP).toFixed();
}

/**
 * Last day a CAF may be used (yyyy-mm-dd), or null when it does not expire: CAFs of types 33, 43,
 * 46, 56 and 61 are valid for 6 months from their authorisation date `FA` (chile-dte.md section 4;
 * we read "6 months" as calendar months, so FA 2026-01-15 is usable up to 2026-07-14; LibreDTE
 * uses FA + 180 days).
 */
export function cafLastUsableDate(type: number, authorizedOn: string): string | null {
  if (!EXPIRING_CAF_TYPES.includes(type)) return null;
  const [y, m, d] = authorizedOn.split("-").map(Number);
  const target = new Date(Date.UTC(y, m - 1 + 6, 1));
  const lastDayOfMonth = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(d, lastDayOfMonth));
  target.setUTCDate(target.getUTCDate() - 1);
  return target.toISOString().slice(0, 10);
}
