/**
 * The issuer (`Emisor`) and receiver (`Receptor`) of a stored DTE, as its XML says them
 * (dte.ts writes them): what the printed representation of a document issued to SII shows, so the
 * PDF agrees with the DTE field for field (docs/decisions.md "Issued documents").
 */
import { DOMParser } from "@xmldom/xmldom";
import { SII_NAMESPACE } from "./dte.js";

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

/**
 * The `Emisor` and `Receptor` of the DTE in `xml` (a DTE document, its first `Documento`), or null
 * when it has none (not a DTE, not well-formed).
 */
export function dteParties(xml: string): { issuer: DteParty; receiver: DteParty } | null {
  let doc: Document;
  try {
    doc = new DOMParser({ errorHandler: { warning: () => {}, error: () => {}, fatalError: () => {} } }).parseFromString(
      xml,
      "text/xml",
    ) as unknown as Document;
  } catch {
    return null;
  }
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
