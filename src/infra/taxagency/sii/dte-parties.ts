/**
 * The issuer (`Emisor`) and receiver (`Receptor`) of a stored DTE, as its XML says them
 * (dte.ts writes them): what the printed representation of a document issued to SII shows, so the
 * PDF agrees with the DTE field for field (docs/decisions.md "Issued documents").
 */
import { DOMParser } from "@xmldom/xmldom";
import { SII_NAMESPACE } from "./dte.js";
import type { PrintableExport } from "../../../domain/printed-export.js";

/** One party as the DTE names it; absent elements are null. */
export interface DteParty {
  /** `RUTEmisor` / `RUTRecep` */
  rut: string;
  /** `RznSoc` (`RznSocEmisor` on boletas) / `RznSocRecep` */
  name: string;
  /** `GiroEmis` (`GiroEmisor`) / `GiroRecep` */
  activity: string | null;
  /** `DirOrigen` / `DirRecep` */
  address: string | null;
  /** `CmnaOrigen` / `CmnaRecep` */
  commune: string | null;
  /** `CiudadOrigen` / `CiudadRecep` */
  city: string | null;
  /** `CorreoEmisor` / `CorreoRecep` */
  email: string | null;
}

function first(parent: Element | Document | null | undefined, name: string): Element | null {
  if (!parent) return null;
  return (parent.getElementsByTagNameNS(SII_NAMESPACE, name)[0] as Element | undefined) ?? null;
}

function text(parent: Element | null, ...names: string[]): string | null {
  for (const name of names) {
    const value = first(parent, name)?.textContent;
    if (value !== null && value !== undefined && value !== "") return value;
  }
  return null;
}

function parse(xml: string): Document | null {
  try {
    return new DOMParser({
      errorHandler: { warning: () => {}, error: () => {}, fatalError: () => {} },
    }).parseFromString(xml, "text/xml") as unknown as Document;
  } catch {
    return null;
  }
}

/**
 * The export data of the DTE in `xml` as written (an `Exportaciones`: 110, 111, 112), for the
 * printed representation: `Receptor/Extranjero`, `Transporte/Aduana` (codes, weights, packages),
 * `Totales/TpoMoneda`, `OtraMoneda`. Null when `xml` is not an export DTE.
 */
export function dteExport(xml: string): PrintableExport | null {
  const doc = parse(xml);
  if (!doc) return null;
  const exp = first(doc, "Exportaciones");
  const header = first(exp, "Encabezado");
  const currencyName = text(first(header, "Totales"), "TpoMoneda");
  if (!header || !currencyName) return null;
  const extranjero = first(first(header, "Receptor"), "Extranjero");
  const aduana = first(first(header, "Transporte"), "Aduana");
  const otra = first(header, "OtraMoneda");
  const str = (parent: Element | null, name: string) => text(parent, name) ?? undefined;
  const num = (parent: Element | null, name: string) => {
    const value = text(parent, name);
    return value === null ? undefined : Number(value);
  };
  const packages = aduana
    ? Array.from(aduana.getElementsByTagNameNS(SII_NAMESPACE, "TipoBultos")).map((p) => ({
        type: num(p as Element, "CodTpoBultos") ?? 0,
        quantity: str(p as Element, "CantBultos"),
        marks: str(p as Element, "Marcas"),
        containerId: str(p as Element, "IdContainer"),
        seal: str(p as Element, "Sello"),
        sealIssuer: str(p as Element, "EmisorSello"),
      }))
    : [];
  return {
    currencyName,
    exchangeRate: str(otra, "TpoCambio"),
    pesoTotal: str(otra, "MntTotOtrMnda"),
    paymentForm: num(first(header, "IdDoc"), "FmaPagExp"),
    saleModality: num(aduana, "CodModVenta"),
    saleClause: num(aduana, "CodClauVenta"),
    saleClauseTotal: str(aduana, "TotClauVenta"),
    transportWay: num(aduana, "CodViaTransp"),
    loadingPort: num(aduana, "CodPtoEmbarque"),
    unloadingPort: num(aduana, "CodPtoDesemb"),
    receiverCountry: num(aduana, "CodPaisRecep"),
    destinationCountry: num(aduana, "CodPaisDestin"),
    foreignId: str(extranjero, "NumId"),
    nationality: num(extranjero, "Nacionalidad"),
    tare: str(aduana, "Tara"),
    tareUnit: num(aduana, "CodUnidMedTara"),
    grossWeight: str(aduana, "PesoBruto"),
    grossWeightUnit: num(aduana, "CodUnidPesoBruto"),
    netWeight: str(aduana, "PesoNeto"),
    netWeightUnit: num(aduana, "CodUnidPesoNeto"),
    totalItems: str(aduana, "TotItems"),
    totalPackages: str(aduana, "TotBultos"),
    packages: packages.length ? packages : undefined,
    freight: str(aduana, "MntFlete"),
    insurance: str(aduana, "MntSeguro"),
  };
}

/**
 * The `Emisor` and `Receptor` of the DTE in `xml` (a DTE document, its first `Documento`), or null
 * when it has none (not a DTE, not well-formed).
 */
export function dteParties(xml: string): { issuer: DteParty; receiver: DteParty } | null {
  const doc = parse(xml);
  if (!doc) return null;
  const header = first(doc, "Encabezado");
  const emisor = first(header, "Emisor");
  const receptor = first(header, "Receptor");
  const issuerRut = text(emisor, "RUTEmisor");
  const issuerName = text(emisor, "RznSoc", "RznSocEmisor");
  const receiverRut = text(receptor, "RUTRecep");
  const receiverName = text(receptor, "RznSocRecep");
  if (!issuerRut || !issuerName || !receiverRut || !receiverName) return null;
  return {
    issuer: {
      rut: issuerRut,
      name: issuerName,
      activity: text(emisor, "GiroEmis", "GiroEmisor"),
      address: text(emisor, "DirOrigen"),
      commune: text(emisor, "CmnaOrigen"),
      city: text(emisor, "CiudadOrigen"),
      email: text(emisor, "CorreoEmisor"),
    },
    receiver: {
      rut: receiverRut,
      name: receiverName,
      activity: text(receptor, "GiroRecep"),
      address: text(receptor, "DirRecep"),
      commune: text(receptor, "CmnaRecep"),
      city: text(receptor, "CiudadRecep"),
      email: text(receptor, "CorreoRecep"),
    },
  };
}
